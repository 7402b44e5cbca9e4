"""Chat events taken by a worker: each platform delivery answered once, across restarts and replicas.

A worker claims an event before it answers it and marks it answered after. A platform delivers some
events twice (retries, several connections): a repeat is ignored while the claim is live or once it was
answered. A claim whose worker died before answering (a replica lost with the host) runs out after
``LEASE``: the platform's next retry (Slack's after 1 and 5 minutes, Lark's after 5) is taken over by
another worker, with the next fence number, and answered there.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from prdigest.clock import utc_now
from prdigest.storage.db import Store

# Longer than an answer takes (a slow question's LLM call included), shorter than the platforms' retries.
LEASE = timedelta(minutes=4)


def claim_event(
    store: Store, platform: str, event_id: str, worker: str = "", lease: timedelta = LEASE
) -> int | None:
    """The claim's fence when ``worker`` takes the event: 1 the first time it is seen (the claim survives
    restarts), the next number when another worker's claim ran out unanswered; None for a repeat.

    The claim's commit does not wait for the disk (`Store.writing`'s ``durable=False``): on SQLite
    the fsync took 4.5 ms under the store's lock, which every chat request and every read of the
    cache waited for in turn. It still survives a crash or a restart of the process; only a crash of
    the OS (or of the PostgreSQL server) may lose the last claims, and with them a retry's
    de-duplication.
    """
    now = utc_now()
    row = {"platform": platform, "event_id": event_id, "received_at": now.isoformat(),
           "status": "claimed", "claimed_by": worker, "claimed_at": now.isoformat(), "fence": 1}  # fmt: skip
    with store.writing(durable=False) as tx:
        if tx.insert("events", row, ignore=True) == 1:
            return 1
        found = tx.one(
            "select status, claimed_at, fence from events where platform = ? and event_id = ?"
            + tx.for_update,
            [platform, event_id],
        )
        if found is None or found["status"] != "claimed":
            return None
        if now - datetime.fromisoformat(found["claimed_at"]) < lease:
            return None
        fence = int(found["fence"]) + 1
        tx.update(
            "events",
            {"platform": platform, "event_id": event_id},
            {"claimed_by": worker, "claimed_at": now.isoformat(), "fence": fence},
        )
        return fence


def answered(store: Store, platform: str, event_id: str, fence: int) -> bool:
    """Mark the event answered by claim ``fence``; False when another worker took it over meanwhile."""
    with store.writing(durable=False) as tx:
        done = tx.run(
            "update events set status = 'answered' where platform = ? and event_id = ? and fence = ?",
            [platform, event_id, fence],
        )
    return done == 1
