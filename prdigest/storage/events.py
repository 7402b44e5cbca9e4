"""Chat events already taken: the de-duplication of platform deliveries, across restarts and replicas."""

from __future__ import annotations

from datetime import UTC, datetime

from prdigest.storage.db import Store


def claim_event(store: Store, platform: str, event_id: str) -> bool:
    """True the first time an event is seen, ever (the claim survives restarts); False for a repeat."""
    with store.writing() as db:
        cursor = db.execute(
            "insert or ignore into events (platform, event_id, received_at) values (?, ?, ?)",
            [platform, event_id, datetime.now(UTC).isoformat()],
        )
        return cursor.rowcount == 1
