"""Snoozes and acknowledgements from a card's buttons (models.Snooze), one row per repository, kind, PR
and label: a second press of the same button replaces the first (who and when).

A change bumps the cache's revision (migration m023): a report memoised before it is built again; one
whose snooze ran out is built again by its memo (handlers/report_memo.py)."""

from __future__ import annotations

from datetime import datetime

from prdigest.models import Snooze
from prdigest.storage.db import Store


def save_snooze(store: Store, snooze: Snooze) -> None:
    with store.writing() as tx:
        tx.upsert("snoozes", [snooze.model_dump(mode="json")], pk=("repo", "kind", "number", "label"))


def active_snoozes(store: Store, repo: str, now: datetime) -> list[Snooze]:
    """The repository's snoozes still running at ``now`` and its acknowledgements, oldest first."""
    with store.reading() as tx:
        rows = tx.rows("select * from snoozes where repo = ? order by at, kind, number, label", [repo])
        found = [Snooze.model_validate(row) for row in rows]
    return [s for s in found if s.until is None or s.until > now]
