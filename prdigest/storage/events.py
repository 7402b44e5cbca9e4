"""Chat events already taken: the de-duplication of platform deliveries, across restarts and replicas."""

from __future__ import annotations

from prdigest.clock import utc_now
from prdigest.storage.db import Store


def claim_event(store: Store, platform: str, event_id: str) -> bool:
    """True the first time an event is seen, ever (the claim survives restarts); False for a repeat.

    The claim's commit does not wait for the disk (`Store.writing`'s ``durable=False``): on SQLite
    the fsync took 4.5 ms under the store's lock, which every chat request and every read of the
    cache waited for in turn. It still survives a crash or a restart of the process; only a crash of
    the OS (or of the PostgreSQL server) may lose the last claims, and with them a retry's
    de-duplication.
    """
    now = utc_now().isoformat()
    with store.writing(durable=False) as tx:
        row = {"platform": platform, "event_id": event_id, "received_at": now}
        return tx.insert("events", row, ignore=True) == 1
