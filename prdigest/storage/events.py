"""Chat events already taken: the de-duplication of platform deliveries, across restarts and replicas."""

from __future__ import annotations

from prdigest.clock import utc_now
from prdigest.storage.db import Store


def claim_event(store: Store, platform: str, event_id: str) -> bool:
    """True the first time an event is seen, ever (the claim survives restarts); False for a repeat.

    The claim's commit skips the fsync (WAL with synchronous=NORMAL, for this commit alone): with
    fsync it took 4.5 ms under the store's lock, which every chat request and every read of the
    cache waited for in turn. It still survives a crash or a restart of the process; only an OS
    crash or a power cut may lose the last claims, and with them a retry's de-duplication.
    """
    now = utc_now().isoformat()
    with store.reading() as db:  # the store's lock: no other statement runs between the pragmas
        relaxed = not db.conn.in_transaction  # the pragma cannot change inside a transaction
        if relaxed:
            previous = db.conn.execute("pragma synchronous").fetchone()[0]
            db.conn.execute("pragma synchronous = normal")
        try:
            with store.writing() as tx:
                cursor = tx.execute(
                    "insert or ignore into events (platform, event_id, received_at) values (?, ?, ?)",
                    [platform, event_id, now],
                )
                return cursor.rowcount == 1
        finally:
            if relaxed:
                db.conn.execute(f"pragma synchronous = {int(previous)}")
