"""Every way to name a period, in English and Chinese, anywhere in a message: one parser."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from prdigest.errors import UsageError
from prdigest.periods import find_period, parse_period, without

WEDNESDAY = date(2026, 9, 16)  # ISO week 2026-W38: Monday 14th to Sunday 20th


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        # dates and ranges
        ("2026-09-03", "2026-09-03", "2026-09-03"),
        ("2026-9-3", "2026-09-03", "2026-09-03"),
        ("2026-09-01..2026-09-14", "2026-09-01", "2026-09-14"),
        ("2026-9-1..2026-9-7", "2026-09-01", "2026-09-07"),
        ("between 2026-08-03 and 2026-08-09", "2026-08-03", "2026-08-09"),
        ("from Aug 3 to Aug 9", "2026-08-03", "2026-08-09"),
        ("Sept 1st - 5th", "2026-09-01", "2026-09-05"),
        ("3 August to 9 August 2026", "2026-08-03", "2026-08-09"),
        ("8月3日到8月9日", "2026-08-03", "2026-08-09"),
        ("从9月1日至9月7日", "2026-09-01", "2026-09-07"),
        ("2025年12月29日到2026年1月4日", "2025-12-29", "2026-01-04"),
        # a date without a year: the latest such date not after today
        ("Dec 24", "2025-12-24", "2025-12-24"),
        ("Sep 16", "2026-09-16", "2026-09-16"),
        ("Dec 28 to Jan 3", "2025-12-28", "2026-01-03"),
        # weeks
        ("2026-W32", "2026-08-03", "2026-08-09"),
        ("W32", "2026-08-03", "2026-08-09"),
        ("week 36", "2026-08-31", "2026-09-06"),
        ("W52", "2025-12-22", "2025-12-28"),  # not begun this year: last year's
        ("第36周", "2026-08-31", "2026-09-06"),
        ("W38", "2026-09-14", "2026-09-16"),  # this week: up to today
        # relative to today
        ("today", "2026-09-16", "2026-09-16"),
        ("yesterday", "2026-09-15", "2026-09-15"),
        ("昨天", "2026-09-15", "2026-09-15"),
        ("this week", "2026-09-14", "2026-09-16"),
        ("本周", "2026-09-14", "2026-09-16"),
        ("这周", "2026-09-14", "2026-09-16"),
        ("last week", "2026-09-07", "2026-09-13"),
        ("last-week", "2026-09-07", "2026-09-13"),
        ("上周", "2026-09-07", "2026-09-13"),
        ("上个星期", "2026-09-07", "2026-09-13"),
        ("the week before last", "2026-08-31", "2026-09-06"),
        ("上上周", "2026-08-31", "2026-09-06"),
        ("2 weeks ago", "2026-08-31", "2026-09-06"),
        ("last 2 weeks", "2026-08-31", "2026-09-13"),
        ("the past three weeks", "2026-08-24", "2026-09-13"),
        ("a couple of weeks", None, None),  # no "last": not a period
        ("the last couple of weeks", "2026-08-31", "2026-09-13"),
        ("最近两周", "2026-08-31", "2026-09-13"),
        ("过去三周", "2026-08-24", "2026-09-13"),
        ("近十周", "2026-07-06", "2026-09-13"),
        ("last 7 days", "2026-09-10", "2026-09-16"),
        ("最近7天", "2026-09-10", "2026-09-16"),
        ("this month", "2026-09-01", "2026-09-16"),
        ("这个月", "2026-09-01", "2026-09-16"),
        ("last month", "2026-08-01", "2026-08-31"),
        ("上个月", "2026-08-01", "2026-08-31"),
        ("last 3 months", "2026-06-01", "2026-08-31"),
        ("in August", "2026-08-01", "2026-08-31"),
        ("in December", "2025-12-01", "2025-12-31"),
        ("8月份", "2026-08-01", "2026-08-31"),
        ("this quarter", "2026-07-01", "2026-09-16"),
        ("last quarter", "2026-04-01", "2026-06-30"),
        ("since Aug 1", "2026-08-01", "2026-09-16"),
        ("since 2026-09-01", "2026-09-01", "2026-09-16"),
        ("9月1日以来", "2026-09-01", "2026-09-16"),
        ("since last week", "2026-09-07", "2026-09-16"),
        ("上周以来", "2026-09-07", "2026-09-16"),
        ("the week of Aug 5", "2026-08-03", "2026-08-09"),
        ("8月5日那周", "2026-08-03", "2026-08-09"),
        ("risks of Aug 3", "2026-08-03", "2026-08-03"),  # a day, not the month
        # days of the week, quarters
        ("Monday", "2026-09-14", "2026-09-14"),
        ("since Monday", "2026-09-14", "2026-09-16"),
        ("last Friday", "2026-09-11", "2026-09-11"),
        ("last Wednesday", "2026-09-09", "2026-09-09"),  # today is Wednesday: the one before
        ("上周五", "2026-09-11", "2026-09-11"),
        ("周一", "2026-09-14", "2026-09-14"),
        ("Q2", "2026-04-01", "2026-06-30"),
        ("2025 Q4", "2025-10-01", "2025-12-31"),
        ("Q4", "2025-10-01", "2025-12-31"),  # not begun this year: last year's
        ("第三季度", "2026-07-01", "2026-09-16"),
        ("自9月1日起", "2026-09-01", "2026-09-16"),
        # no period at all
        ("this weekend's outage", None, None),
        ("we sat in the sun", None, None),  # "sat" and "sun" are words, not days
        ("上周一共合并了几个", "2026-09-07", "2026-09-13"),  # 一共 is "in all", not Monday
        ("top 3", None, None),
    ],
)
def test_a_period_resolves_to_its_days(text: str, since: str | None, until: str | None) -> None:
    period = find_period(text)
    if since is None:
        assert period is None
        return
    assert period is not None
    window = period.window(WEDNESDAY, "Asia/Shanghai")
    assert (window.since.isoformat(), window.until.isoformat()) == (since, until)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("show me the risks for the last 2 weeks please", "show me the risks for   please"),
        ("上周最重要的 3 个 PR", " 最重要的 3 个 PR"),
        ("report 2026-08-01..2026-08-14 for acme/widgets", "report   for acme/widgets"),
    ],
)
def test_the_period_stands_anywhere_and_comes_out_whole(text: str, rest: str) -> None:
    assert without(text, find_period(text)) == rest


def test_a_period_starting_in_the_future_of_a_long_year_resolves_in_the_past() -> None:
    period = find_period("Feb 29")
    assert period is not None
    assert period.window(WEDNESDAY, "UTC").since == date(2024, 2, 29)  # the latest 29 February


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-02-30", "2026-02-30 is not a date"),
        ("2026-W60", "2026-W60 is not an ISO week"),
        ("2026-09-14..2026-09-01", "before it starts"),
        ("next tuesday-ish", "bad period"),
        ("last week and more", "bad period"),
    ],
)
def test_a_bad_period_option_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_period(text, "UTC", datetime(2026, 9, 16, 12, tzinfo=UTC))


def test_today_is_the_chats_today() -> None:
    # 23:30 UTC on Sunday is already Monday in Shanghai: "last week" there is the week just ended.
    late_sunday = datetime(2026, 9, 20, 23, 30, tzinfo=UTC)
    assert parse_period("last week", "Asia/Shanghai", late_sunday).since == date(2026, 9, 14)
    assert parse_period("last week", "UTC", late_sunday).since == date(2026, 9, 7)
