"""A weekly report of a prepared deployment, due now: the daily prepare (``pipeline.prepare``) synced the
repository and fetched the diffs its analyses need, so within ``prepared_report`` the sources spend as
little of GitHub's budget as they can: no diff is fetched (a PR merged since the prepare is analysed
from its title, description and files), only the days the cache lacks are read, and what is open is read
once for every report of the repository built within minutes (a zh and an en team).

Chat answers and `prdigest report` are outside it: someone waits for them, fresh.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_prepared: ContextVar[bool] = ContextVar("prdigest_prepared_report", default=False)


@contextmanager
def prepared_report() -> Iterator[None]:
    """Within the block (its thread: a worker thread does not inherit it), reports read as above."""
    token = _prepared.set(True)
    try:
        yield
    finally:
        _prepared.reset(token)


def in_prepared_report() -> bool:
    return _prepared.get()
