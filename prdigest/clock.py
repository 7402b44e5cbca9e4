"""The one clock prdigest reads for dates: what "now" and "today" are.

Everything in the package that asks for the current instant for a date (periods, default weeks,
previews, schedules, leases, page expiry, trend windows, stored timestamps) calls ``utc_now``.
It is the machine's clock unless it is set: by ``set_now`` (the test suite's ``--now``), or for a
whole process by ``PRDIGEST_NOW`` (an ISO datetime with its offset, to reproduce what a run on
another day would do). A set clock starts at that instant and runs on, so leases, expiries and
back-offs pass as they do on the machine's clock.

Instants that another server sets or compares with its own clock (a rate limit's reset, a
Retry-After date, the bounds of a chat history query) come from ``machine_utc_now``, which is
never shifted. Durations are measured with ``time.monotonic``; neither is a date.
"""

from __future__ import annotations

import email.utils
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

ENV = "PRDIGEST_NOW"

_lock = threading.Lock()
_offset: timedelta | None = None  # utc_now() - machine_utc_now(); None until first read


def machine_utc_now() -> datetime:
    """The machine's clock, never shifted: for instants a remote server sets or compares."""
    return datetime.now(UTC)


def utc_now() -> datetime:
    """The current instant, aware, in UTC: the clock every date in prdigest is counted from."""
    global _offset
    with _lock:
        if _offset is None:
            start = os.environ.get(ENV, "").strip()
            _offset = _offset_to(parse_instant(start, ENV)) if start else timedelta(0)
        offset = _offset
    return machine_utc_now() + offset


def set_now(when: datetime | None) -> None:
    """Make ``utc_now`` start at ``when`` and run on from there; None goes back to the environment
    (``PRDIGEST_NOW``, else the machine's clock), read again at the next call."""
    global _offset
    if when is not None and when.utcoffset() is None:
        raise ValueError("set_now needs an aware datetime (with a UTC offset)")
    with _lock:
        _offset = None if when is None else _offset_to(when)


def parse_instant(text: str, what: str) -> datetime:
    """An ISO datetime with its UTC offset, e.g. 2026-12-06T23:59:40+08:00 (or ...Z)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        when = None
    if when is None or when.utcoffset() is None:
        from prdigest.errors import ConfigError  # here: errors loads redaction, which startup can spare

        raise ConfigError(
            f"{what} {text!r}: use an ISO datetime with its UTC offset, e.g. 2026-12-06T23:59:40+08:00"
        )
    return when


def _offset_to(when: datetime) -> timedelta:
    return when.astimezone(UTC) - machine_utc_now()


def retry_after_s(headers: Mapping[str, object]) -> float | None:
    """The server's ``Retry-After`` in seconds from now (seconds or an HTTP date, on the machine's clock;
    Lark's ``x-ogw-ratelimit-reset``): the chat platforms' and the LLM's."""
    for name, value in headers.items():
        if name.lower() not in ("retry-after", "x-ogw-ratelimit-reset"):
            continue
        text = str(value[0] if isinstance(value, list | tuple) and value else value).strip()
        try:
            return max(0.0, float(text))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - machine_utc_now()).total_seconds())
    return None
