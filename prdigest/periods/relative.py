"""Periods relative to today: ISO weeks, this or last week, the last N weeks or days, months, weekdays,
quarters and years, in English and Chinese. Each is a pattern registered in `RELATIVE` with the days
it names, given today."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, timedelta

from prdigest.errors import UsageError
from prdigest.models import Window
from prdigest.periods.days import (
    EN_NUMBER,
    MONTH,
    MONTH_NUMBERS,
    ZH_NUMBER,
    Span,
    clip,
    monday,
    month_span,
    months_back,
    number,
    weeks_before,
)

# ---- weeks, months and the other relative periods -----------------------------------------------

_WEEK_WORDS = r"(?:周|星期|礼拜)"
RELATIVE: list[tuple[re.Pattern[str], Callable[[re.Match[str], date], Span]]] = []


def _relative(pattern: str) -> Callable[[Callable[[re.Match[str], date], Span]], None]:
    def register(fn: Callable[[re.Match[str], date], Span]) -> None:
        RELATIVE.append((re.compile(pattern, re.I), fn))

    return register


# Digits and letters end where Chinese begins: "W32的风险", "Q3的报告".
@_relative(r"(?<![A-Za-z0-9_-])(?:(?P<y>\d{4})\s*-?\s*)?W(?P<w>\d{1,2})(?![A-Za-z0-9_])|\bweek\s+(?P<w2>\d{1,2})\b"
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


@_relative(r"\b(?:this|current)\s+month\b|\bof\s+the\s+month\b|本月|这个?月")
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
    # "in August", "August 2026"; never "of Aug 3", which is a day
    rf"\b(?:in|for|during|of|over|from|the)\s+(?P<m>{MONTH})\b\.?(?:\s+(?P<y>\d{{4}})\b|(?!\s*\d))"
    rf"|\b(?P<m2>{MONTH})\s+(?P<y2>\d{{4}})\b"
    r"|(?:(?P<y3>\d{4})\s*年\s*)?(?<!\d)(?P<m3>\d{1,2})\s*月份?(?!\s*\d)"
)
def _named_month(m: re.Match[str], today: date) -> Span:
    word = m.group("m") or m.group("m2")
    month = MONTH_NUMBERS[word.lower()] if word else int(m.group("m3"))
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
    r"|(?:(?P<zlast>上)|(?P<zthis>本|这))?(?:周|星期|礼拜)(?P<zd>[一二三四五六日天])(?![共起样直般些点下切])"
)
def _weekday(m: re.Match[str], today: date) -> Span:
    """ "Friday" and "周五" are the latest Friday not after today, "last Friday" the one before today;
    "本周五" is this week's Friday (maybe still ahead), "上周五" last week's."""
    if m.group("zd") and (m.group("zlast") or m.group("zthis")):
        day = monday(today) + timedelta(days=_WEEKDAYS_ZH[m.group("zd")])
        day -= timedelta(weeks=1 if m.group("zlast") else 0)
        return day, day
    weekday = _WEEKDAYS_ZH[m.group("zd")] if m.group("zd") else _WEEKDAYS_EN[m.group("d").lower()]
    back = (today.weekday() - weekday) % 7
    if m.group("last") and back == 0:
        back = 7
    day = today - timedelta(days=back)
    return day, day


_BARE_WEEKDAY = re.compile(rf"(?P<d>{WEEKDAY})|(?:周|星期|礼拜)(?P<zd>[一二三四五六日天])", re.I)


def bare_weekday(text: str) -> int | None:
    """The weekday (Monday 0) a text names with no week ("Thursday", "周四"; not "last Thursday")."""
    m = _BARE_WEEKDAY.fullmatch(text.strip())
    if m is None:
        return None
    return _WEEKDAYS_ZH[m.group("zd")] if m.group("zd") else _WEEKDAYS_EN[m.group("d").lower()]


@_relative(
    r"(?<![A-Za-z0-9_])Q(?P<q>[1-4])(?:\s*(?P<y>\d{4}))?(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z0-9_])(?P<y2>\d{4})\s*-?\s*Q(?P<q2>[1-4])(?![A-Za-z0-9_])"
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


@_relative(
    r"\b(?:in|for|during|of)\s+(?P<y>(?:19|20)\d\d)\b(?!\s*[-/.年])|(?<!\d)(?P<zy>(?:19|20)\d\d)\s*年(?!\s*\d)"
)
def _named_year(m: re.Match[str], today: date) -> Span:
    """ "in 2025", "2025年": the year, up to today."""
    year = int(m.group("y") or m.group("zy"))
    return clip((date(year, 1, 1), date(year, 12, 31)), today)


@_relative(r"\b(?:this|current)\s+year\b|今年|本年")
def _this_year(m: re.Match[str], today: date) -> Span:
    return date(today.year, 1, 1), today


@_relative(r"\b(?:last|previous|past)\s+year\b|去年|上一年")
def _last_year(m: re.Match[str], today: date) -> Span:
    return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)


def iso_week(year: int, week: int) -> Span:
    window = Window.iso_week(year, week, "UTC")
    return window.since, window.until
