"""Ranges written with numbers only, ranges of weekdays and of any two periods, and periods that cannot
be answered for: still ahead of today, or naming no days."""

from __future__ import annotations

from datetime import date

import pytest

from prdigest.errors import UsageError
from prdigest.periods import find_period

WEDNESDAY = date(2026, 9, 16)
FRIDAY = date(2026, 9, 18)


@pytest.mark.parametrize(
    ("text", "today", "since", "until"),
    [
        ("report for 7/27 to 8/2", WEDNESDAY, "2026-07-27", "2026-08-02"),
        ("risks 9/1-9/7", WEDNESDAY, "2026-09-01", "2026-09-07"),
        ("9.1-9.7 的风险", WEDNESDAY, "2026-09-01", "2026-09-07"),
        ("报告 8/3~8/9", WEDNESDAY, "2026-08-03", "2026-08-09"),
        ("top 12/28 - 1/3", WEDNESDAY, "2025-12-28", "2026-01-03"),  # across the new year
        ("report 7/27", WEDNESDAY, "2026-07-27", "2026-07-27"),
        # weekdays: a range of them, the second taking the first's week
        ("上周二到上周四", WEDNESDAY, "2026-09-08", "2026-09-10"),
        ("上周二到周四", FRIDAY, "2026-09-08", "2026-09-10"),
        ("Monday to Wednesday", WEDNESDAY, "2026-09-14", "2026-09-16"),
        ("周五", WEDNESDAY, "2026-09-11", "2026-09-11"),  # the latest Friday, not this week's still ahead
        ("from Monday to Friday", WEDNESDAY, "2026-09-14", "2026-09-16"),  # runs into the future: ends today
        # any two periods joined
        ("W32 to W34", WEDNESDAY, "2026-08-03", "2026-08-23"),
        ("last week and this week", WEDNESDAY, "2026-09-07", "2026-09-16"),
        # a year, said as one
        ("what happened in 2025?", WEDNESDAY, "2025-01-01", "2025-12-31"),
        ("2026年的报告", WEDNESDAY, "2026-01-01", "2026-09-16"),  # up to today
        ("W32的风险", WEDNESDAY, "2026-08-03", "2026-08-09"),  # letters and digits end where Chinese begins
        ("Q2的报告", WEDNESDAY, "2026-04-01", "2026-06-30"),
    ],
)
def test_ranges(text: str, today: date, since: str, until: str) -> None:
    period = find_period(text)
    assert period is not None
    window = period.window(today, "Asia/Shanghai")
    assert (window.since.isoformat(), window.until.isoformat()) == (since, until)


@pytest.mark.parametrize("text", ["python 3.10 support", "upgrade to 2.1 today?", "13/45", "v1.2", "x/y/1/2"])
def test_numbers_that_are_no_days(text: str) -> None:
    period = find_period(text)
    assert period is None or ("/" not in period.text and "." not in period.text)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("risks 2026-W50", "err_period_future"),
        ("report 2026-12-25", "err_period_future"),
        ("本周五", "err_period_future"),  # this week's Friday, on Wednesday
        ("2026-W60", "err_period_why"),
        ("report 2/30", "err_period_why"),
        ("W34 to W32", "err_period_why"),  # ends before it starts
    ],
)
def test_a_period_that_cannot_be_answered_for_is_said(text: str, key: str) -> None:
    period = find_period(text)
    assert period is not None
    with pytest.raises(UsageError) as raised:
        period.window(WEDNESDAY, "UTC")
    assert raised.value.key == key and raised.value.params["text"] == period.text
