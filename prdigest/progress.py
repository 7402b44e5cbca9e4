"""Progress of long work: phases, and counts (PRs read, batches synced, PRs analysed n/N).

The pipeline, the sources and the LLM engine report to the progress of the running command, found
through a context variable, so that nothing between the CLI and the code that counts carries it.
Only the CLI sets one (a terminal's; see ``prdigest.cli.progress``); everywhere else it is quiet.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Progress:
    """Where long work says how far it is; this one says nothing."""

    def phase(self, text: str) -> None:
        """A new step of the work ("reading the git source", "building the report")."""

    def count(self, what: str, done: int, total: int | None = None) -> None:
        """``done`` of ``total`` (unknown: None) ``what`` so far ("PRs read", "PRs analysed")."""


QUIET = Progress()
_current: ContextVar[Progress | None] = ContextVar("prdigest_progress", default=None)


def progress() -> Progress:
    """The running command's progress (quiet unless a terminal shows it)."""
    return _current.get() or QUIET


@contextmanager
def reporting_to(target: Progress) -> Iterator[Progress]:
    """Report the work done inside the block to ``target``."""
    token = _current.set(target)
    try:
        yield target
    finally:
        _current.reset(token)
