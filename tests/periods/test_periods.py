"""Windows: whole days in a timezone; weeks, ranges and last week; bad input named clearly."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from prdigest.errors import UsageError
from prdigest.models import PullRequest, Window
from prdigest.periods import last_complete_week, parse_period, window_from_options

NOW = datetime(2026, 9, 14, 1, 0, tzinfo=UTC)  # Monday 09:00 in Shanghai


def test_window_bounds_are_local_midnights() -> None:
    w = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
    assert w.start.isoformat() == "2026-09-07T00:00:00+08:00"
    assert w.end.isoformat() == "2026-09-14T00:00:00+08:00"
    assert w.contains(datetime(2026, 9, 6, 23, 30, tzinfo=UTC))  # Monday 07:30 local
    assert not w.contains(datetime(2026, 9, 13, 16, 0, tzinfo=UTC))  # Monday 00:00 local, the week after
    assert len(w.days()) == 7


def test_dst_day_is_whole() -> None:
    w = Window(since="2026-03-29", until="2026-03-29", tz="Europe/Berlin")  # 23 hours long
    assert (w.end.astimezone(UTC) - w.start.astimezone(UTC)).total_seconds() == 23 * 3600


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("2026-09-01..2026-09-14", date(2026, 9, 1), date(2026, 9, 14)),
        ("2026-W37", date(2026, 9, 7), date(2026, 9, 13)),
        ("2026w1", date(2025, 12, 29), date(2026, 1, 4)),
        ("last-week", date(2026, 9, 7), date(2026, 9, 13)),
        ("2026-09-10", date(2026, 9, 10), date(2026, 9, 10)),
    ],
)
def test_parse_period(text: str, since: date, until: date) -> None:
    w = parse_period(text, "Asia/Shanghai", NOW)
    assert (w.since, w.until) == (since, until)


def test_last_week_depends_on_the_timezone() -> None:
    # Monday 01:00 UTC is still Sunday in Los Angeles: its last complete week is the one before.
    assert last_complete_week(NOW, "America/Los_Angeles").since == date(2026, 8, 31)
    assert last_complete_week(NOW, "Asia/Shanghai").since == date(2026, 9, 7)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("2026-13-01", "2026-09-14", None, False), "bad --since date '2026-13-01'"),
        (("2026-09-14", "2026-09-01", None, False), r"ends \(2026-09-01\) before it starts"),
        ((None, None, "2026-W54", False), "2026-W54 is not an ISO week"),
        ((None, None, "week 3", False), "bad week 'week 3'"),
        (("Sep 1", "2026-09-14", None, False), "bad --since date 'Sep 1'"),
        ((None, None, None, False), "choose the period"),
        (("2026-09-01", None, "2026-W37", False), "choose the period"),
        (("2026-09-01", None, None, False), "--since and --until go together"),
        # Days any calendar holds but no window can (its end, its week, its UTC offsets): bad dates too.
        (("9999-12-25", "9999-12-31", None, False), "bad date '9999-12-25': prdigest reads days from"),
        (("0001-01-01", "0001-01-03", None, False), "bad date '0001-01-01'"),
        (("1969-12-31", "1970-01-02", None, False), "bad date '1969-12-31'"),
        (("9998-12-25", "9999-01-01", None, False), "bad date '9999-01-01'"),
        ((None, None, "9999-W52", False), "bad date '9999-12-27'"),
    ],
)
def test_bad_periods(args, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        window_from_options(*args, tz="Asia/Shanghai", now=NOW)


def test_the_options_read_dates_and_weeks_as_the_chat_does() -> None:
    assert window_from_options("2026-9-1", "2026-9-7", None, False, "UTC", NOW).since == date(2026, 9, 1)
    week = window_from_options(None, None, "W37", False, "UTC", NOW)  # the latest W37 begun by today
    assert (week.since, week.until) == (date(2026, 9, 7), date(2026, 9, 13))


def test_unknown_timezone() -> None:
    with pytest.raises(UsageError, match="unknown timezone 'Mars/Base'"):
        parse_period("2026-W37", "Mars/Base", NOW)


def test_pull_request_needs_aware_times_and_keeps_unknown() -> None:
    with pytest.raises(ValidationError, match="UTC offset"):
        PullRequest(repo="a/b", number=1, title="t", author="x", merged_at=datetime(2026, 9, 8))
    pr = PullRequest(repo="a/b", number=1, title="t", author="x", merged_at=NOW)
    assert pr.reviews is None and pr.labels is None and pr.is_fork is None and pr.checks is None
    assert pr.uid == "a/b#1"
    push = PullRequest(repo="a/b", sha="abcdef1234567890", title="t", author="x", merged_at=NOW)
    assert push.is_direct_push and push.uid == "a/b@abcdef123456"


def test_the_first_and_last_days_make_a_report_window() -> None:
    first = Window(since="1970-01-01", until="1970-01-01", tz="Etc/GMT-14")  # UTC+14
    last = Window(since="9998-12-31", until="9998-12-31", tz="Etc/GMT+12")  # UTC-12
    assert first.start < first.end and last.start < last.end
    assert (first.start.astimezone(UTC).year, last.end.astimezone(UTC).year) == (1969, 9999)
