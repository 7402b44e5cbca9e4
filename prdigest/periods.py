"""Every way to name a period, in English and Chinese, and the one parser of them.

A period may stand anywhere in a message: dates (`2026-08-03`, `Aug 3`, `8月3日`), ranges
(`2026-08-01..2026-08-14`, `from Aug 3 to Aug 9`, `between … and …`, `8月3日到8月9日`),
ISO weeks (`2026-W32`, `W32`), and periods relative to today (this week, last week, the week
before last, last N weeks, this month, last month, since DATE, today, yesterday…).

`find_period` returns where the period stands in the text and how to resolve it; the days
are fixed only by `Period.window(today, tz)`, because "today" depends on the timezone of the
chat that asks. A date without a year is the latest such date not after today.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from prdigest.errors import UsageError
from prdigest.models import Window, zone

Span = tuple[date, date]
Resolver = Callable[[date], Span]


@dataclass(frozen=True)
class Period:
    """A period named in a text: where it stands (``start``..``end``) and its days, given today."""

    start: int
    end: int
    resolve: Resolver

    def window(self, today: date, tz: str) -> Window:
        since, until = self.resolve(today)
        return Window(since=since, until=until, tz=tz)


# ---- numbers and month names -------------------------------------------------------------------

_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2,
    "a few": 3, "few": 3,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}  # fmt: skip
EN_NUMBER = r"\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True))
ZH_NUMBER = r"\d{1,3}|[零一二两俩三四五六七八九十]{1,3}"


def number(text: str) -> int:
    """An integer written in digits, English words or Chinese numerals (up to 99)."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _ZH_DIGITS.get(tens, 1) * 10 + _ZH_DIGITS.get(ones, 0)
    return _ZH_DIGITS[text]


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"

# ---- day arithmetic --------------------------------------------------------------------------


def monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def weeks_before(today: date, back: int, count: int = 1) -> Span:
    """``count`` Monday-to-Sunday weeks ending ``back`` weeks before this one."""
    first = monday(today) - timedelta(weeks=back + count - 1)
    return first, first + timedelta(weeks=count, days=-1)


def month_span(year: int, month: int, count: int = 1) -> Span:
    last_year, last_month = divmod(month - 1 + count - 1, 12)
    end = calendar.monthrange(year + last_year, last_month + 1)[1]
    return date(year, month, 1), date(year + last_year, last_month + 1, end)


def months_back(today: date, back: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - back
    return divmod(index, 12)[0], divmod(index, 12)[1] + 1


def latest(month: int, day: int, not_after: date) -> date:
    """The latest ``month``/``day`` not after ``not_after`` (29 February skips to a leap year)."""
    for year in range(not_after.year, not_after.year - 8, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found <= not_after:
            return found
    raise UsageError(f"{month}-{day} is not a date", "err_date", text=f"{month}-{day}")


def clip(span: Span, today: date) -> Span:
    """A period running into the future ends today."""
    since, until = span
    return since, max(since, min(until, today))


# ---- one day ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Day:
    """A day as written: a full date, a month and day (year resolved later), or days before today."""

    year: int | None = None
    month: int | None = None
    day: int | None = None
    days_ago: int | None = None

    def on(self, not_after: date) -> date:
        if self.days_ago is not None:
            return not_after - timedelta(days=self.days_ago)
        assert self.month is not None and self.day is not None
        if self.year is None:
            return latest(self.month, self.day, not_after)
        try:
            return date(self.year, self.month, self.day)
        except ValueError:
            text = f"{self.year}-{self.month:02d}-{self.day:02d}"
            raise UsageError(f"{text} is not a date", "err_date", text=text) from None


_DAY = re.compile(
    r"(?<![\w/])(?P<iy>\d{4})(?P<sep>[-/.])(?P<im>\d{1,2})(?P=sep)(?P<id>\d{1,2})(?![\d])"
    r"|(?:(?P<zy>\d{4})\s*年\s*)?(?P<zm>\d{1,2})\s*月\s*(?P<zd>\d{1,2})\s*[日号]?"
    rf"|\b(?P<em>{MONTH})\.?\s+(?P<ed>\d{{1,2}}){_ORD}\b(?:,?\s+(?P<ey>\d{{4}})\b)?"
    rf"|\b(?P<dd>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<dm>{MONTH})\b\.?(?:,?\s+(?P<dy>\d{{4}})\b)?"
    r"|\b(?P<today>today)\b|今天|今日"
    r"|\b(?P<yesterday>yesterday)\b|(?P<zyesterday>昨天|昨日)"
    r"|(?P<before_yesterday>前天)",
    re.I,
)


def _day(m: re.Match[str]) -> Day:
    g = m.groupdict()
    if g["iy"]:
        return Day(int(g["iy"]), int(g["im"]), int(g["id"]))
    if g["zm"]:
        return Day(int(g["zy"]) if g["zy"] else None, int(g["zm"]), int(g["zd"]))
    if g["em"]:
        return Day(int(g["ey"]) if g["ey"] else None, _MONTHS[g["em"].lower()], int(g["ed"]))
    if g["dm"]:
        return Day(int(g["dy"]) if g["dy"] else None, _MONTHS[g["dm"].lower()], int(g["dd"]))
    if g["yesterday"] or g["zyesterday"]:
        return Day(days_ago=1)
    if g["before_yesterday"]:
        return Day(days_ago=2)
    return Day(days_ago=0)


# What joins two days into a range, and what opens or closes a range with one end.
_JOIN = re.compile(r"\s*(?:\.\.\.?|--?|–|—|~|～|to|till|until|through|thru|and|到|至|~)\s*", re.I)
_OPEN = re.compile(r"(?:\b(?:from|since|starting|after|between)\s+|(?:从|自|自从)\s*)$", re.I)
_SINCE = re.compile(r"(?:\b(?:since)\s+|(?:自|自从)\s*)$", re.I)
_UNTIL_NOW = re.compile(
    r"\s*(?:以来|至今|到现在|到今天|开始|起|onwards?\b|till now\b|until now\b|to date\b|to now\b)", re.I
)
# "Aug 3 to 9", "8月3日到9日": the end names only its day, in the start's month.
_END_DAY = re.compile(
    r"\s*(?:-|–|~|～|to|through|thru|到|至)\s*(\d{1,2})(?:st|nd|rd|th|日|号)?(?![\d月/.-])", re.I
)


def _dates(text: str) -> list[tuple[int, int, Resolver]]:
    found = []
    days = list(_DAY.finditer(text))
    used: set[int] = set()
    for i, m in enumerate(days):
        if i in used:
            continue
        first, start, end = _day(m), m.start(), m.end()
        opened = _OPEN.search(text[max(0, start - 14) : start])
        if opened:
            start -= len(opened.group(0))
        nxt = days[i + 1] if i + 1 < len(days) else None
        if nxt is not None and _JOIN.fullmatch(text[m.end() : nxt.start()]):
            last = _day(nxt)
            used.add(i + 1)
            found.append((start, nxt.end(), _range(first, last)))
            continue
        if (short := _END_DAY.match(text, m.end())) and first.month is not None:
            last = Day(first.year, first.month, int(short.group(1)))
            found.append((start, short.end(), _range(first, last)))
            continue
        now = _UNTIL_NOW.match(text, end)
        if now or (opened and (_SINCE.search(opened.group(0)) or "from" in opened.group(0).lower())):
            found.append((start, now.end() if now else end, _since(first)))
            continue
        found.append((start, end, _single(first)))
    return found


def _range(first: Day, last: Day) -> Resolver:
    def resolve(today: date) -> Span:
        until = last.on(today)
        return first.on(until), until

    return resolve


def _since(first: Day) -> Resolver:
    return lambda today: (first.on(today), today)


def _single(day: Day) -> Resolver:
    def resolve(today: date) -> Span:
        found = day.on(today)
        return found, found

    return resolve


# ---- weeks, months and the other relative periods -----------------------------------------------

_WEEK_WORDS = r"(?:周|星期|礼拜)"
_RELATIVE: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Span]]] = []


def _relative(pattern: str) -> Callable[[Callable[[re.Match[str], date], Span]], None]:
    def register(fn: Callable[[re.Match[str], date], Span]) -> None:
        _RELATIVE.append((re.compile(pattern, re.I), fn))

    return register


@_relative(r"(?<![\w-])(?:(?P<y>\d{4})\s*-?\s*)?W(?P<w>\d{1,2})\b|\bweek\s+(?P<w2>\d{1,2})\b"
           r"|(?:(?P<y3>\d{4})\s*年\s*)?第\s*(?P<w3>\d{1,2})\s*周")  # fmt: skip
def _iso_week(m: re.Match[str], today: date) -> Span:
    week = int(m.group("w") or m.group("w2") or m.group("w3"))
    year_text = m.group("y") or m.group("y3")
    if year_text:
        return clip(iso_week(int(year_text), week), today)
    # Without a year: the latest such week that has begun by today.
    for year in (today.year + 1, today.year, today.year - 1):
        try:
            span = iso_week(year, week)
        except UsageError:
            continue
        if span[0] <= today:
            return clip(span, today)
    raise UsageError(f"W{week} is not an ISO week", "err_week", text=f"W{week}")


@_relative(r"\b(?:this|current)[\s-]+week\b|本周|这周|这一周|本星期|这个?星期|这个?礼拜")
def _this_week(m: re.Match[str], today: date) -> Span:
    return monday(today), today


@_relative(r"\b(?:the\s+)?week\s+before\s+last\b|上上(?:个|一)?" + _WEEK_WORDS)
def _week_before_last(m: re.Match[str], today: date) -> Span:
    return weeks_before(today, 2)


@_relative(r"\b(?:last|previous|prior|past)[\s-]*week\b|上(?:个|一)?" + _WEEK_WORDS)
def _last_week(m: re.Match[str], today: date) -> Span:
    return weeks_before(today, 1)


@_relative(
    rf"\b(?:the\s+)?(?:last|past|previous|prior|recent)\s+(?P<n>{EN_NUMBER})\s+weeks?\b"
    rf"|(?:最近|过去|近|前|这)\s*(?P<zn>{ZH_NUMBER})\s*个?\s*{_WEEK_WORDS}"
)
def _last_weeks(m: re.Match[str], today: date) -> Span:
    count = max(1, number(m.group("n") or m.group("zn")))
    return weeks_before(today, 1, count)


@_relative(rf"\b(?P<n>{EN_NUMBER})\s+weeks?\s+ago\b|(?P<zn>{ZH_NUMBER})\s*个?\s*{_WEEK_WORDS}前")
def _weeks_ago(m: re.Match[str], today: date) -> Span:
    return weeks_before(today, number(m.group("n") or m.group("zn")))


@_relative(
    rf"\b(?:the\s+)?(?:last|past|previous|recent)\s+(?P<n>{EN_NUMBER})\s+days?\b"
    rf"|(?:最近|过去|近)\s*(?P<zn>{ZH_NUMBER})\s*天"
)
def _last_days(m: re.Match[str], today: date) -> Span:
    count = max(1, number(m.group("n") or m.group("zn")))
    return today - timedelta(days=count - 1), today


@_relative(r"\b(?:this|current)\s+month\b|本月|这个?月")
def _this_month(m: re.Match[str], today: date) -> Span:
    return today.replace(day=1), today


@_relative(r"\b(?:last|previous|prior|past)\s+month\b|上(?:个|一)?月(?!\s*\d)")
def _last_month(m: re.Match[str], today: date) -> Span:
    return month_span(*months_back(today, 1))


@_relative(
    rf"\b(?:the\s+)?(?:last|past|previous|recent)\s+(?P<n>{EN_NUMBER})\s+months?\b"
    rf"|(?:最近|过去|近|前)\s*(?P<zn>{ZH_NUMBER})\s*个月"
)
def _last_months(m: re.Match[str], today: date) -> Span:
    count = max(1, number(m.group("n") or m.group("zn")))
    return month_span(*months_back(today, count), count=count)


@_relative(
    rf"\b(?:in|for|during|of|over)\s+(?P<m>{MONTH})\b\.?(?:\s+(?P<y>\d{{4}}))?|\b(?P<m2>{MONTH})\s+(?P<y2>\d{{4}})\b"
    r"|(?:(?P<y3>\d{4})\s*年\s*)?(?<!\d)(?P<m3>\d{1,2})\s*月份?(?!\s*\d)"
)
def _named_month(m: re.Match[str], today: date) -> Span:
    word = m.group("m") or m.group("m2")
    month = _MONTHS[word.lower()] if word else int(m.group("m3"))
    if not 1 <= month <= 12:
        raise UsageError(f"{month} is not a month", "err_date", text=m.group(0))
    year_text = m.group("y") or m.group("y2") or m.group("y3")
    year = int(year_text) if year_text else (today.year if month <= today.month else today.year - 1)
    return clip(month_span(year, month), today)


# Full names, and the abbreviations that are not also common words ("sat", "sun").
_WEEKDAYS_EN = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAYS_EN.update({"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4})
_WEEKDAYS_ZH = {c: i for i, c in enumerate("一二三四五六")} | {"日": 6, "天": 6}
WEEKDAY = "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))


@_relative(
    rf"\b(?P<last>last\s+)?(?P<d>{WEEKDAY})\b"
    r"|(?:(?P<zlast>上)|本|这)?(?:周|星期|礼拜)(?P<zd>[一二三四五六日天])(?![共起样直般些点下切])"
)
def _weekday(m: re.Match[str], today: date) -> Span:
    """"Friday" is the latest Friday not after today, "last Friday" the one before today; "周五" is this
    week's Friday, "上周五" last week's."""
    if m.group("zd"):
        day = monday(today) + timedelta(days=_WEEKDAYS_ZH[m.group("zd")])
        day -= timedelta(weeks=1 if m.group("zlast") else 0)
        return clip((day, day), today)
    back = (today.weekday() - _WEEKDAYS_EN[m.group("d").lower()]) % 7
    if m.group("last") and back == 0:
        back = 7
    day = today - timedelta(days=back)
    return day, day


@_relative(
    r"\bQ(?P<q>[1-4])(?:\s*(?P<y>\d{4}))?\b|\b(?P<y2>\d{4})\s*-?\s*Q(?P<q2>[1-4])\b"
    r"|第(?P<zq>[一二三四1-4])季度"
)
def _quarter(m: re.Match[str], today: date) -> Span:
    quarter = number(m.group("q") or m.group("q2") or m.group("zq"))
    year_text = m.group("y") or m.group("y2")
    year = int(year_text) if year_text else today.year - (date(today.year, quarter * 3 - 2, 1) > today)
    return clip(month_span(year, quarter * 3 - 2, count=3), today)


@_relative(r"\b(?:this|current)\s+quarter\b|本季度|这个?季度")
def _this_quarter(m: re.Match[str], today: date) -> Span:
    return date(today.year, (today.month - 1) // 3 * 3 + 1, 1), today


@_relative(r"\b(?:last|previous|past)\s+quarter\b|上(?:个|一)?季度")
def _last_quarter(m: re.Match[str], today: date) -> Span:
    return month_span(*months_back(today, (today.month - 1) % 3 + 3), count=3)


@_relative(r"\b(?:this|current)\s+year\b|今年|本年")
def _this_year(m: re.Match[str], today: date) -> Span:
    return date(today.year, 1, 1), today


@_relative(r"\b(?:last|previous|past)\s+year\b|去年|上一年")
def _last_year(m: re.Match[str], today: date) -> Span:
    return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)


def iso_week(year: int, week: int) -> Span:
    window = Window.iso_week(year, week, "UTC")
    return window.since, window.until


def _bound(fn: Callable[[re.Match[str], date], Span], m: re.Match[str]) -> Resolver:
    return lambda today: fn(m, today)


# ---- the parser ------------------------------------------------------------------------------


def find_period(text: str) -> Period | None:
    """The first period the text names (the longest, where several start at one place), or None."""
    found = _dates(text)
    for pattern, fn in _RELATIVE:
        found += [(m.start(), m.end(), _bound(fn, m)) for m in pattern.finditer(text)]
    if not found:
        return None
    start, end, resolve = min(found, key=lambda f: (f[0], -f[1]))
    # "since last week", "上周以来": from the period's first day to today.
    before, after = _SINCE.search(text[max(0, start - 10) : start]), _UNTIL_NOW.match(text, end)
    if before or after:
        start, end = start - (len(before.group(0)) if before else 0), after.end() if after else end
        resolve = _from_start(resolve)
    return Period(start, end, resolve)


def _from_start(resolve: Resolver) -> Resolver:
    return lambda today: (resolve(today)[0], today)


def without(text: str, period: Period | None) -> str:
    """The text with the period taken out."""
    return text if period is None else f"{text[: period.start]} {text[period.end :]}"


def default_window(today: date, tz: str) -> Window:
    """The period of a command that names none: the last complete Monday-to-Sunday week."""
    since, until = weeks_before(today, 1)
    return Window(since=since, until=until, tz=tz)


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
    found = _DAY.fullmatch(text.strip())
    try:
        if found is not None and found.group("iy"):
            return _day(found).on(date.max)
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
    return parse_period(text, tz, now or datetime.now(UTC))


def fixed(since: date, until: date) -> Period:
    """A period already resolved to its days (a model's tool call, a structured request)."""
    return Period(0, 0, lambda today: (since, until))
