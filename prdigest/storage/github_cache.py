"""What the GitHub source keeps beside the PRs: each PR's updatedAt, and diff excerpts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from prdigest.clock import utc_now
from prdigest.storage.db import Store

# SQLite allows 999 bound parameters in old builds; PostgreSQL has no such limit.
_CHUNK = 500


def updated_at(store: Store, repo: str, numbers: Iterable[int]) -> dict[int, datetime]:
    """GitHub's updatedAt of the cached GitHub PRs among ``numbers``."""
    # The join skips a PR whose row in `prs` is gone or came from another source: it must be fetched.
    sql = (
        "select u.number, u.updated_at from pr_updates u join prs p "
        "on p.repo = u.repo and p.number = u.number and p.source = 'github' "
        "where u.repo = ? and u.number in ({marks})"
    )
    return {
        row["number"]: datetime.fromisoformat(row["updated_at"]) for row in _select(store, sql, repo, numbers)
    }


def record_updates(store: Store, repo: str, updates: Mapping[int, datetime]) -> None:
    now = utc_now().isoformat()
    rows = [
        {"repo": repo, "number": number, "updated_at": moment.astimezone(UTC).isoformat(), "synced_at": now}
        for number, moment in updates.items()
    ]
    with store.writing() as tx:
        tx.upsert("pr_updates", rows, pk=("repo", "number"))


def get_diffs(store: Store, repo: str, numbers: Iterable[int]) -> dict[int, str]:
    sql = "select number, diff from diffs where repo = ? and number in ({marks})"
    return {row["number"]: row["diff"] for row in _select(store, sql, repo, numbers)}


def put_diff(store: Store, repo: str, number: int, diff: str) -> None:
    row = {"repo": repo, "number": number, "diff": diff, "fetched_at": utc_now().isoformat()}
    with store.writing() as tx:
        tx.upsert("diffs", [row], pk=("repo", "number"))


def _select(store: Store, sql: str, repo: str, numbers: Iterable[int]) -> list[dict[str, Any]]:
    wanted = sorted(set(numbers))
    rows: list[dict[str, Any]] = []
    with store.reading() as tx:
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows.extend(tx.rows(sql.format(marks=", ".join("?" * len(chunk))), [repo, *chunk]))
    return rows
