"""A weekly report of a prepared deployment, due now: the daily prepare (``pipeline.prepare``) synced the
repository and fetched the diffs its analyses need, so within ``prepared_report`` the sources spend as
little of GitHub's budget as they can: no diff is fetched (a PR merged since the prepare is analysed
from its title, description and files), only the days the cache lacks are read, and what is open is read
once for every report of the repository built within minutes (a zh and an en team, whichever
workers build them).

Chat answers and `prdigest report` are outside it: someone waits for them, fresh.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from prdigest.storage import Store

_prepared: ContextVar[Store | None] = ContextVar("prdigest_prepared_report", default=None)


@contextmanager
def prepared_report(store: Store) -> Iterator[None]:
    """Within the block (its thread: a worker thread does not inherit it), reports read as above; what
    is open is shared through ``store`` (every worker's)."""
    token = _prepared.set(store)
    try:
        yield
    finally:
        _prepared.reset(token)


def prepared_store() -> Store | None:
    """The store of the prepared report being built in this thread, or None outside one."""
    return _prepared.get()


def in_prepared_report() -> bool:
    return _prepared.get() is not None
