"""What the engine's worker threads share: a progress tick in order, and one diff read at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable

from prdigest.errors import PrdigestError
from prdigest.models import PullRequest

DiffLoader = Callable[[PullRequest], str | None]
Progress = Callable[[int, int], None]  # (PRs done, PRs sent to the LLM)


def counter(total: int, on_done: Progress | None) -> Callable[[], None]:
    """A tick per finished PR that calls ``on_done(done, total)`` in order, one call at a time."""
    lock = threading.Lock()
    done = 0

    def tick() -> None:
        nonlocal done
        if on_done is None:
            return
        with lock:
            done += 1
            on_done(done, total)

    return tick


def serialised(loader: DiffLoader | None) -> DiffLoader:
    """``loader`` called one at a time (a source client need not be thread-safe); its errors mean no diff."""
    lock = threading.Lock()

    def load(pr: PullRequest) -> str | None:
        if loader is None:
            return None
        with lock:
            try:
                return loader(pr)
            except PrdigestError:
                return None

    return load
