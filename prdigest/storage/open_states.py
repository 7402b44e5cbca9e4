"""GitHub's last answer to a repository's open-PR request, shared by the reports built within minutes of
it (a prepared weekly report's: ``sources.prepared``), whichever worker builds them: one read of what is
open serves a zh and an en team. The answer is kept as GitHub gave it (JSON) and read again as new."""

from __future__ import annotations

from datetime import datetime

from prdigest.storage.db import Store


def recent(store: Store, url: str, repo: str, since: datetime) -> str | None:
    """The answer read from the GitHub at ``url`` for ``repo`` at or after ``since``, if any."""
    with store.reading() as tx:
        row = tx.one(
            "select answer from open_states where url = ? and repo = ? and read_at >= ?",
            [url, repo.lower(), since.isoformat()],
        )
    return str(row["answer"]) if row else None


def keep(store: Store, url: str, repo: str, read_at: datetime, answer: str) -> None:
    with store.writing(durable=False) as tx:  # lost to a crash: read again
        tx.upsert(
            "open_states",
            [{"url": url, "repo": repo.lower(), "read_at": read_at.isoformat(), "answer": answer}],
            pk=["url", "repo"],
        )
