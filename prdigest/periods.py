"""Reading the period a report covers: dates, ISO weeks, ranges and "last week"."""

from __future__ import annotations

import re
from datetime import date, datetime

from prdigest.errors import UsageError
from prdigest.models import Window

_WEEK = re.compile(r"^(\d{4})-?W(\d{1,2})$", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(\S+)\s*\.\.\s*(\S+)\s*$")


def parse_date(text: str, what: str = "date") -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"bad {what} {text!r}: use YYYY-MM-DD, e.g. 2026-09-07", "err_date", text=text
        ) from None


def parse_week(text: str, tz: str) -> Window:
    match = _WEEK.match(text.strip())
    if not match:
        raise UsageError(f"bad week {text!r}: use YYYY-Www, e.g. 2026-W37", "err_week", text=text)
    return Window.iso_week(int(match.group(1)), int(match.group(2)), tz)


def parse_period(text: str, tz: str, now: datetime) -> Window:
    """`2026-09-01..2026-09-14`, `2026-W37`, `last-week` or a single date."""
    text = text.strip()
    if text.lower().lstrip("-") in {"last-week", "lastweek", "last week"}:
        return Window.last_complete_week(now, tz)
    ranged = _RANGE.match(text)
    if ranged:
        return Window(
            since=parse_date(ranged.group(1), "start date"),
            until=parse_date(ranged.group(2), "end date"),
            tz=tz,
        )
    if _WEEK.match(text):
        return parse_week(text, tz)
    day = parse_date(text)
    return Window(since=day, until=day, tz=tz)


def window_from_options(
    since: str | None, until: str | None, week: str | None, last_week: bool, tz: str, now: datetime
) -> Window:
    """The CLI's choice: exactly one of --since/--until, --week, --last-week."""
    chosen = sum([bool(since or until), bool(week), last_week])
    if chosen != 1:
        raise UsageError(
            "choose the period with one of: --since DATE --until DATE, --week 2026-W37, --last-week"
        )
    if week:
        return parse_week(week, tz)
    if last_week:
        return Window.last_complete_week(now, tz)
    if not (since and until):
        raise UsageError("--since and --until go together")
    return Window(since=parse_date(since, "--since date"), until=parse_date(until, "--until date"), tz=tz)
