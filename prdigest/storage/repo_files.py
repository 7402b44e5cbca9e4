"""Each repository's own .prdigest.toml as its source last read it: a report from the cache alone uses it."""

from __future__ import annotations

from prdigest.clock import utc_now
from prdigest.storage.db import Store


def save_repo_file(store: Store, repo: str, text: str) -> None:
    """Keep the text read of ``repo``'s file ("" when it has none), replacing the one read before."""
    row = {"repo": repo, "text": text, "read_at": utc_now().isoformat()}
    with store.writing() as tx:
        tx.upsert("repo_files", [row], pk=["repo"])


def load_repo_file(store: Store, repo: str) -> str | None:
    """The text last read of ``repo``'s file; None when it was never read."""
    with store.reading() as tx:
        row = tx.one("select text from repo_files where repo = ?", [repo])
    return row["text"] if row else None
