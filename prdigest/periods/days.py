"""Days as people write them: numbers in words, month names, one day (`2026-08-03`, `Aug 3`, `8月3日`)
and ranges of days (`from Aug 3 to Aug 9`, `8月3日到8月9日`, `since Aug 3`); the day arithmetic
the periods share."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from prdigest.errors import UsageError

Span = tuple[date, date]
Resolver = Callable[[date], Span]


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


MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTH_NUMBERS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTH_NUMBERS["sept"] = 9
MONTH = "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
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
    """A period running into the future ends today (one wholly after today stays as it is, to be said)."""
    since, until = span
    return span if since > today else (since, min(until, today))


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


DAY = re.compile(
    r"(?<![\w/])(?P<iy>\d{4})(?P<sep>[-/.])(?P<im>\d{1,2})(?P=sep)(?P<id>\d{1,2})(?![\d])"
    r"|(?:(?P<zy>\d{4})\s*年\s*)?(?P<zm>\d{1,2})\s*月\s*(?P<zd>\d{1,2})\s*[日号]?"
    rf"|\b(?P<em>{MONTH})\.?\s+(?P<ed>\d{{1,2}}){_ORD}\b(?:,?\s+(?P<ey>\d{{4}})\b)?"
    rf"|\b(?P<dd>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<dm>{MONTH})\b\.?(?:,?\s+(?P<dy>\d{{4}})\b)?"
    r"|\b(?P<today>today)\b|今天|今日"
    r"|\b(?P<yesterday>yesterday)\b|(?P<zyesterday>昨天|昨日)"
    r"|(?P<before_yesterday>前天)"
    # "7/27", and "9.1" (a day only at either end of a range: alone, 3.10 is a version)
    r"|(?<![\w/:#])(?<![^.]\.)(?P<nm>\d{1,2})(?P<nsep>[/.])(?P<nd>\d{1,2})(?![\w/:%]|\.\d)",
    re.I,
)


def day_of(m: re.Match[str]) -> Day:
    g = m.groupdict()
    if g["iy"]:
        return Day(int(g["iy"]), int(g["im"]), int(g["id"]))
    if g["zm"]:
        return Day(int(g["zy"]) if g["zy"] else None, int(g["zm"]), int(g["zd"]))
    if g["em"]:
        return Day(int(g["ey"]) if g["ey"] else None, MONTH_NUMBERS[g["em"].lower()], int(g["ed"]))
    if g["dm"]:
        return Day(int(g["dy"]) if g["dy"] else None, MONTH_NUMBERS[g["dm"].lower()], int(g["dd"]))
    if g["yesterday"] or g["zyesterday"]:
        return Day(days_ago=1)
    if g["before_yesterday"]:
        return Day(days_ago=2)
    if g["nm"]:
        return Day(None, int(g["nm"]), int(g["nd"]))
    return Day(days_ago=0)


def _numeric(m: re.Match[str]) -> str | None:
    """The separator of a day written in numbers only ("7/27", "9.1"); None for any other form."""
    return m.group("nsep")


def _a_day(m: re.Match[str]) -> bool:
    """Whether a numbers-only match can be a month and a day at all ("13/45" is not)."""
    return _numeric(m) is None or (1 <= int(m.group("nm")) <= 12 and 1 <= int(m.group("nd")) <= 31)


# The spaces around a word that joins a day to what follows it: a search that may start anywhere in a run
# of spaces reads at most this many from each start (linear time), and no one writes more between words.
GAP = r"\s{0,20}"
# What joins two days written as "9.1" into a range: a dash or a tilde, never a word (2.1 to 2.2: versions).
_DOT_JOIN = re.compile(rf"{GAP}(?:-|–|—|~|～|到|至){GAP}")
# What joins two days into a range, and what opens or closes a range with one end.
JOIN = re.compile(rf"{GAP}(?:\.\.\.?|--?|–|—|~|～|to|till|until|through|thru|and|到|至|~){GAP}", re.I)
_OPEN = re.compile(r"(?:\b(?:from|since|starting|after|between)\s+|(?:从|自|自从)\s*)$", re.I)
SINCE_BEFORE = re.compile(r"(?:\b(?:since)\s+|(?:自|自从)\s*)$", re.I)
UNTIL_NOW = re.compile(
    rf"{GAP}(?:以来|至今|到现在|到今天|开始|起|onwards?\b|till now\b|until now\b|to date\b|to now\b)", re.I
)
# "Aug 3 to 9", "8月3日到9日": the end names only its day, in the start's month.
_END_DAY = re.compile(
    rf"{GAP}(?:-|–|~|～|to|through|thru|到|至){GAP}(\d{{1,2}})(?:st|nd|rd|th|日|号)?(?![\d月/.-])", re.I
)


def dates_in(text: str) -> list[tuple[int, int, Resolver]]:
    found = []
    days = [m for m in DAY.finditer(text) if _a_day(m)]
    used: set[int] = set()
    for i, m in enumerate(days):
        if i in used:
            continue
        dotted = _numeric(m) == "."
        first, start, end = day_of(m), m.start(), m.end()
        opened = _OPEN.search(text[max(0, start - 14) : start])
        if opened:
            start -= len(opened.group(0))
        nxt = days[i + 1] if i + 1 < len(days) else None
        join = _DOT_JOIN if dotted or (nxt is not None and _numeric(nxt) == ".") else JOIN
        if nxt is not None and join.fullmatch(text[m.end() : nxt.start()]):
            last = day_of(nxt)
            used.add(i + 1)
            found.append((start, nxt.end(), _range(first, last)))
            continue
        if dotted:
            continue  # "3.10" alone: a version, not a day
        if (short := _END_DAY.match(text, m.end())) and first.month is not None:
            last = Day(first.year, first.month, int(short.group(1)))
            found.append((start, short.end(), _range(first, last)))
            continue
        now = UNTIL_NOW.match(text, end)
        if now or (opened and (SINCE_BEFORE.search(opened.group(0)) or "from" in opened.group(0).lower())):
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
