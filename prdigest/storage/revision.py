"""The cache's revision: a counter that SQLite triggers bump on every change to what a report reads
(PRs, analyses, coverage, dismissals, a repository's own settings; see migrations m013 and m018),
whichever connection or process writes it."""

from __future__ import annotations

from prdigest.storage.db import Store


def revision(store: Store) -> int:
    """The current revision: one read of a one-row table. Equal revisions mean equal report inputs."""
    with store.reading() as db:
        row = db.execute("select n from revision where id = 0").fetchone()
    return int(row[0])
