"""Every way to name a period, in English and Chinese, and the one parser of them.

A period may stand anywhere in a message: dates (`2026-08-03`, `Aug 3`, `8月3日`), ranges
(`2026-08-01..2026-08-14`, `from Aug 3 to Aug 9`, `between … and …`, `8月3日到8月9日`),
ISO weeks (`2026-W32`, `W32`), and periods relative to today (this week, last week, the week
before last, last N weeks, this month, last month, since DATE, today, yesterday…).

`find_period` returns where the period stands in the text and how to resolve it; the days
are fixed only by `Period.window(today, tz)`, because "today" depends on the timezone of the
chat that asks. A date without a year is the latest such date not after today.

The forms live by kind: days and ranges of days in `days`, periods relative to today in
`relative`; here the `Period` and the parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from prdigest.clock import utc_now
from prdigest.errors import UsageError
from prdigest.models import Window, zone
from prdigest.periods.days import (
    DAY,
    EN_NUMBER,
    GAP,
    JOIN,
    SINCE_BEFORE,
    UNTIL_NOW,
    ZH_NUMBER,
    Resolver,
    Span,
    clip,
    dates_in,
    day_of,
    number,
    weeks_before,
)
from prdigest.periods.relative import RELATIVE, bare_weekday, iso_week

__all__ = [
    "EN_NUMBER",
    "ZH_NUMBER",
    "Period",
    "Resolver",
    "Span",
    "default_window",
    "find_period",
    "fixed",
    "iso_week",
    "last_complete_week",
    "number",
    "parse_date",
    "parse_period",
    "parse_week",
    "today_in",
    "window_from_options",
    "without",
]


@dataclass(frozen=True)
class Period:
    """A period named in a text: where it stands (``start``..``end``), as written, and its days, given
    today."""

    start: int
    end: int
    resolve: Resolver
    text: str = ""

    def window(self, today: date, tz: str) -> Window:
        """Its days in ``tz``. A period that names no days there, or only days after ``today``, is said, never
        replaced by another."""
        try:
            since, until = self.resolve(today)
            window = Window(since=since, until=until, tz=tz)
        except UsageError as exc:
            raise UsageError(
                f"could not read the period {self.text!r}: {exc}", "err_period_why", text=self.text, why=exc
            ) from exc
        if since > today:
            raise UsageError(
                f"the period {self.text!r} ({since} to {until}) is in the future",
                "err_period_future", text=self.text, since=since, until=until,
            )  # fmt: skip
        return window


def _bound(fn: Callable[[re.Match[str], date], Span], m: re.Match[str]) -> Resolver:
    return lambda today: fn(m, today)


# ---- the parser ------------------------------------------------------------------------------


def find_period(text: str) -> Period | None:
    """The first period the text names (the longest, where several start at one place), or None."""
    found = dates_in(text)
    for pattern, fn in RELATIVE:
        found += [(m.start(), m.end(), _bound(fn, m)) for m in pattern.finditer(text)]
    if not found:
        return None
    start, end, resolve = min(found, key=lambda f: (f[0], -f[1]))
    # "上周二到上周四", "Monday to Wednesday", "W32 to W34": two periods joined are one, from the first's
    # first day to the second's last.
    joined = [f for f in found if f[0] > end and JOIN.fullmatch(text[end : f[0]])]
    if joined:
        later_start, later_end, later = max(joined, key=lambda f: f[1] - f[0])
        weekday = bare_weekday(text[later_start:later_end])
        end, resolve = later_end, _joined(resolve, later, weekday)
        return Period(start, end, resolve, text[start:end].strip())
    # "the week of Aug 3", "8月3日那周": the Monday-to-Sunday week holding the day.
    week_before, week_after = _WEEK_OF.search(text[max(0, start - 12) : start]), _THAT_WEEK.match(text, end)
    if week_before or week_after:
        start, end = (
            start - (len(week_before.group(0)) if week_before else 0),
            (week_after.end() if week_after else end),
        )
        return Period(start, end, _week_holding(resolve), text[start:end].strip())
    # "since last week", "上周以来": from the period's first day to today.
    before, after = SINCE_BEFORE.search(text[max(0, start - 10) : start]), UNTIL_NOW.match(text, end)
    if before or after:
        start, end = start - (len(before.group(0)) if before else 0), after.end() if after else end
        resolve = _from_start(resolve)
    return Period(start, end, resolve, text[start:end].strip())


_WEEK_OF = re.compile(r"\bweek\s+of\s+$", re.I)
_THAT_WEEK = re.compile(rf"{GAP}(?:那一?周|那个星期|所在的?(?:那一?)?周)")


def _joined(first: Resolver, later: Resolver, weekday: int | None) -> Resolver:
    """From ``first``'s first day to ``later``'s last; a bare weekday ends the range on its first such day
    from ``first`` on ("上周二到周四": last week's Thursday)."""

    def resolve(today: date) -> Span:
        since, until = first(today)
        if weekday is not None:
            return clip((since, until + timedelta(days=(weekday - until.weekday()) % 7)), today)
        end = later(today)[1]
        if end < since:
            raise UsageError(f"the period ends ({end}) before it starts ({since})", "err_window_order",
                             since=since, until=end)  # fmt: skip
        return clip((since, end), today)

    return resolve


def _week_holding(resolve: Resolver) -> Resolver:
    def week(today: date) -> Span:
        day = resolve(today)[0]
        monday = day - timedelta(days=day.weekday())
        return monday, monday + timedelta(days=6)

    return week


def _from_start(resolve: Resolver) -> Resolver:
    return lambda today: (resolve(today)[0], today)


def without(text: str, period: Period | None) -> str:
    """The text with the period taken out."""
    return text if period is None else f"{text[: period.start]} {text[period.end :]}"


def default_window(today: date, tz: str) -> Window:
    """The last complete Monday-to-Sunday week before ``today``: the period of a command that names none,
    of --last-week and of a weekly delivery."""
    since, until = weeks_before(today, 1)
    return Window(since=since, until=until, tz=tz)


def last_complete_week(now: datetime, tz: str) -> Window:
    """The last complete week before the moment ``now``, its days counted in ``tz``."""
    return default_window(today_in(now, tz), tz)


def today_in(now: datetime, tz: str) -> date:
    return now.astimezone(zone(tz)).date()


def parse_period(text: str, tz: str, now: datetime) -> Window:
    """A period given on its own (an option's value): any form `find_period` reads, and nothing else."""
    period = find_period(text)
    if period is None or without(text, period).strip(" ,.;:"):
        raise UsageError(
            f"bad period {text!r}: use e.g. 2026-09-07, 2026-09-01..2026-09-14, 2026-W37 or last week",
            "err_period",
            text=text,
        )
    return period.window(today_in(now, tz), tz)


def parse_date(text: str, what: str = "date") -> date:
    """A full date as the chat reads one (2026-09-07, 2026-9-7, 2026/09/07)."""
    found = DAY.fullmatch(text.strip())
    try:
        if found is not None and found.group("iy"):
            return day_of(found).on(date.max)
    except UsageError:
        pass
    raise UsageError(f"bad {what} {text!r}: use YYYY-MM-DD, e.g. 2026-09-07", "err_date", text=text)


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
        return parse_week(week, tz, now)
    if last_week:
        return default_window(today_in(now, tz), tz)
    if not (since and until):
        raise UsageError("--since and --until go together")
    return Window(since=parse_date(since, "--since date"), until=parse_date(until, "--until date"), tz=tz)


_WEEK = re.compile(r"^(?:\d{4}\s*-?\s*)?W\d{1,2}$", re.IGNORECASE)


def parse_week(text: str, tz: str, now: datetime | None = None) -> Window:
    """An ISO week as the chat reads one: 2026-W37, or W37 (the latest such week begun by today)."""
    if not _WEEK.match(text.strip()):
        raise UsageError(f"bad week {text!r}: use YYYY-Www, e.g. 2026-W37", "err_week", text=text)
    return parse_period(text, tz, now or utc_now())


def fixed(since: date, until: date) -> Period:
    """A period already resolved to its days (a model's tool call, a structured request)."""
    return Period(0, 0, lambda today: (since, until), f"{since}..{until}")
