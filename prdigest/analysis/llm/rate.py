"""The LLM rate limit, ``[llm] requests_per_minute`` and ``tokens_per_minute``, kept by the deployment.

Each request occupies its endpoint (base URL and model) for 60 / requests_per_minute seconds, or for its
tokens (the prompt's estimate plus its ``max_tokens``) x 60 / tokens_per_minute seconds if that is
longer, and the next request begins once that time has passed: a token bucket one request deep. No
minute then holds more than requests_per_minute requests, nor more than tokens_per_minute tokens plus one
request's, whatever window the server counts in (OpenAI's bucket, Azure's 10-second windows, a sliding
minute): 10 reports of 8 requests at once start evenly spaced rather than answered 429. Tokens are not
given back when an answer was shorter: OpenAI counts ``max_tokens`` when a request arrives, too.

The turns are booked in the store (`storage/rate_limit.py`), so that every thread of every process on it
(``prdigest worker``s on PostgreSQL; on SQLite, a ``deliver`` beside ``serve``) queues in one line; a
client given no store (chat routing) queues in its process's line for the endpoint. A request waits
for its turn, in its own thread, if the turn begins before the run's deadline (`patience.wait_until`:
a scheduled delivery), else, for a chat answer or a command-line report, which someone waits for,
within WAIT_WITHOUT_DEADLINE_S. A later turn is not booked: the request is refused as a 429 would end
it (LLMUnavailable, rate_limited) and the rules answer for it.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from prdigest.analysis.llm.errors import LLMUnavailable
from prdigest.analysis.llm.safety import estimate_tokens
from prdigest.clock import utc_now
from prdigest.storage import rate_limit

if TYPE_CHECKING:
    from prdigest.config import LLMSettings
    from prdigest.storage.db import Store

# The longest wait for a turn outside a deadline, or past one: a chat answer comes a few seconds later at
# worst.
WAIT_WITHOUT_DEADLINE_S = 5.0

log = logging.getLogger("prdigest.llm")


class Turns(Protocol):
    def book(self, seconds: float, patience: float) -> float | None:
        """Occupy the endpoint for ``seconds`` from its next free time, if that comes within ``patience``
        seconds: the seconds until then; None, and nothing booked, if it comes later."""


class LocalTurns:
    """One process's line for an endpoint, shared by its threads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._free_at = -math.inf

    def book(self, seconds: float, patience: float) -> float | None:
        with self._lock:
            now = self._clock()
            start = max(self._free_at, now)
            if start - now > patience:
                return None
            self._free_at = start + seconds
            return start - now


def _epoch_s() -> float:
    return utc_now().timestamp()


class StoreTurns:
    """The line for an endpoint and model kept in the store: one for every process sharing it. Its clock
    is the wall clock (prdigest's: a frozen test clock runs on from where it was set), which the machines
    sharing a database agree on (NTP)."""

    def __init__(self, store: Store, endpoint: str, model: str, clock: Callable[[], float] = _epoch_s):
        self._store, self._endpoint, self._model = store, endpoint, model
        self._clock = clock

    def book(self, seconds: float, patience: float) -> float | None:
        now = self._clock()
        start = rate_limit.book(self._store, self._endpoint, self._model, now, seconds, now + patience)
        return None if start is None else max(start - now, 0.0)


class Limiter:
    """An endpoint's rate limit: each request waits for its turn in ``turns``."""

    def __init__(
        self,
        turns: Turns,
        requests_per_minute: int | None,
        tokens_per_minute: int | None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.turns = turns
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self._sleep = sleep

    def occupancy(self, tokens: int) -> float:
        """The seconds a request of ``tokens`` holds the endpoint: the longer of its shares of the limits."""
        per_request = 60 / self.requests_per_minute if self.requests_per_minute else 0.0
        per_tokens = 60 * tokens / self.tokens_per_minute if self.tokens_per_minute else 0.0
        return max(per_request, per_tokens)

    def take(
        self, messages: Iterable[Mapping[str, str]], max_tokens: int, until: float | None, subject: str
    ) -> None:
        """Wait for the turn of a request of ``messages`` answered in at most ``max_tokens``; raise
        LLMUnavailable if the turn begins after ``until`` (a monotonic time; None: more than
        WAIT_WITHOUT_DEADLINE_S from now)."""
        seconds = self.occupancy(sum(estimate_tokens(m["content"]) for m in messages) + max_tokens)
        if not seconds:
            return
        # A delivery past its deadline (a catch-up hours late) still waits as long as a chat answer does.
        patience = max(WAIT_WITHOUT_DEADLINE_S, until - time.monotonic() if until is not None else 0.0)
        wait = self.turns.book(seconds, patience) if patience >= 0 else None
        if wait is None:
            log.info("%s: no turn within %.1f s under the [llm] rate limit", subject, max(patience, 0.0))
            raise LLMUnavailable(
                f"{subject}: rate_limited: no turn under the [llm] rate limit in time", outcome="rate_limited"
            )
        if wait > 0:
            self._sleep(wait)


@functools.cache
def _local_turns(endpoint: str, model: str) -> LocalTurns:
    """This process's line for an endpoint and model (the few a deployment names)."""
    return LocalTurns()


def limiter(endpoint: str, settings: LLMSettings, store: Store | None = None) -> Limiter:
    """The rate limit of ``settings``' model at ``endpoint``: its turns booked in ``store``, else in this
    process's line."""
    model = settings.model
    turns = _local_turns(endpoint, model) if store is None else StoreTurns(store, endpoint, model)
    return Limiter(turns, settings.requests_per_minute, settings.tokens_per_minute)
