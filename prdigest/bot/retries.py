"""One retry policy for chat sends (Slack and Lark): bounded exponential backoff that honours
``Retry-After`` up to a cap. A wait longer than the cap is not slept through in a worker: the
call fails, and the weekly job's own retry (scheduler.py) comes back later."""

from __future__ import annotations

import random
import time

from prdigest.clock import retry_after_s as retry_after_s  # the adapters' and tests' name for it

ATTEMPTS = 3  # tries of one call, the first included
BASE_S = 0.5  # the first backoff; doubled at each attempt
MAX_WAIT_S = 30.0  # no single wait is longer, whatever the server asks


def backoff_s(attempt: int) -> float:
    """The wait before retry number ``attempt`` (1, 2, ...): exponential, with jitter, capped."""
    return float(min(MAX_WAIT_S, BASE_S * 2 ** (attempt - 1) * (1 + random.random() / 2)))


def wait_s(attempt: int, retry_after: float | None) -> float | None:
    """How long to wait before retry ``attempt``; None when the server asks for more than the cap
    (or the attempts are spent): give up now rather than hold a worker for minutes."""
    if attempt >= ATTEMPTS:
        return None
    if retry_after is not None:
        return retry_after if retry_after <= MAX_WAIT_S else None
    return backoff_s(attempt)


def sleep(seconds: float) -> None:
    time.sleep(seconds)
