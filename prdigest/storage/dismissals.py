"""Dismissed risk labels in the cache: an admin's `dismiss #N RULE`, one row per repository, PR and label.

A change bumps the cache's revision (triggers, see storage/revision.py): a report memoised before it is
built again."""

from __future__ import annotations

from datetime import datetime

from prdigest.models import Dismissal
from prdigest.storage.db import Store


def save_dismissal(store: Store, dismissal: Dismissal) -> None:
    """Record the dismissal (a second one of the same PR and label replaces the first: who and when)."""
    row = dismissal.model_dump(mode="json")
    with store.writing() as tx:
        tx.upsert("dismissals", [row], pk=("repo", "number", "label"))


def delete_dismissal(store: Store, repo: str, number: int, label: str) -> bool:
    with store.writing() as tx:
        sql = "delete from dismissals where repo = ? and number = ? and label = ?"
        return tx.run(sql, [repo, number, label]) > 0


def list_dismissals(store: Store, repo: str) -> list[Dismissal]:
    """The repository's dismissals, by PR number and label."""
    with store.reading() as tx:
        rows = tx.rows("select * from dismissals where repo = ? order by number, label", [repo])
        return [
            Dismissal(
                repo=r["repo"], number=r["number"], label=r["label"], by=r["by"],
                at=datetime.fromisoformat(r["at"]),
            )
            for r in rows
        ]  # fmt: skip
