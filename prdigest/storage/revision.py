"""Each repository's revision in the cache: a counter that triggers bump on every change to what its
report reads (PRs, analyses, coverage, dismissals, its own settings, snoozes; SQLite's migrations m013 to
m025, PostgreSQL's pg001), whichever connection or process writes it. One row per repository: writers of
different repositories never wait for each other."""

from __future__ import annotations

from prdigest.storage.db import Store


def revision(store: Store, repo: str) -> int:
    """The repository's current revision (0 before its first change): one indexed read. Equal revisions
    mean equal report inputs."""
    with store.reading() as tx:
        row = tx.one("select n from revisions where repo = ?", [repo])
    return int(row["n"]) if row else 0
