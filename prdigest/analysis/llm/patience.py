"""How long a run may wait out the LLM's rate limit before its PRs are left to the rules.

A 429 says "not now", not "no": a weekly delivery due within the hour can wait the server's Retry-After
and ask again, and the report is then the model's, not the rules'. A chat question or a report asked
from the command line waits for nobody: outside ``waiting_out_rate_limits`` a 429 ends the request as
before. The time is taken once, when the block begins, and every engine made within it keeps it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar

from prdigest.clock import retry_after_s

MAX_PAUSE_S = 60.0  # a Retry-After longer than this is taken as this, then asked again
BACKOFF_S = 2.0  # the first pause when the server names none, doubled each time up to MAX_PAUSE_S

_until: ContextVar[float | None] = ContextVar("prdigest_llm_wait_until", default=None)


@contextmanager
def waiting_out_rate_limits(seconds: float) -> Iterator[None]:
    """Within the block, an LLM request answered 429 is asked again after a pause, as long as the pause
    ends within ``seconds`` of now."""
    token = _until.set(time.monotonic() + max(seconds, 0.0))
    try:
        yield
    finally:
        _until.reset(token)


def wait_until() -> float | None:
    """The monotonic time the current block's waiting must end by; None outside any."""
    return _until.get()


def pause(retry_after: float | None, waited: int, until: float | None) -> float | None:
    """The seconds to wait before asking again after a 429 (the ``waited``-th so far): the server's
    Retry-After, else a doubling backoff; None when that would end past ``until`` (or there is none)."""
    if until is None:
        return None
    seconds = min(retry_after if retry_after is not None else BACKOFF_S * 2**waited, MAX_PAUSE_S)
    return seconds if time.monotonic() + seconds <= until else None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """A 429's wait in seconds: OpenAI's ``retry-after-ms``, else ``Retry-After`` (`clock.retry_after_s`);
    None when it gave neither."""
    with suppress(ValueError):
        seconds = float(headers.get("retry-after-ms", "")) / 1000
        if 0 <= seconds < float("inf"):
            return seconds
    return retry_after_s(headers)
