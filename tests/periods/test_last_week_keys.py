"""The last complete week has one owner (`periods.default_window`): the weekly delivery's keys are the
ones the scheduler wrote before it asked that owner, for every moment of 2025-2027 in three timezones."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from prdigest.bot.delivery import delivery_key
from prdigest.models import Window
from prdigest.periods import default_window, last_complete_week, today_in
from prdigest.subscription import Subscription

ZONES = ("Asia/Shanghai", "America/Los_Angeles", "Pacific/Kiritimati")  # UTC+8, UTC-8/-7, UTC+14
HOURS = (0, 9, 10, 15, 23)  # UTC hours on either side of each zone's midnight


def _scheduler_week(now: datetime, tz: str) -> Window:
    """The week the scheduler computed for itself: the Monday of the week before ``now``'s in ``tz``."""
    today = now.astimezone(ZoneInfo(tz)).date()
    monday = today - timedelta(days=today.weekday()) - timedelta(days=7)
    return Window(since=monday, until=monday + timedelta(days=6), tz=tz)


def test_delivery_keys_are_unchanged_for_every_past_week() -> None:
    checked = 0
    for tz in ZONES:
        sub = Subscription(id=7, platform="slack", chat_id="C1", repo="acme/api", tz=tz)
        day = date(2025, 1, 1)
        while day <= date(2027, 12, 31):
            for hour in HOURS:
                now = datetime(day.year, day.month, day.day, hour, 30, tzinfo=UTC)
                week = last_complete_week(now, tz)
                assert week == _scheduler_week(now, tz), (now, tz)
                assert delivery_key(sub, week) == delivery_key(sub, _scheduler_week(now, tz))
                # The chat's "last week" on the asker's day is that same week.
                assert default_window(today_in(now, tz), tz) == week
                checked += 1
            day += timedelta(days=1)
    assert checked == 3 * 1095 * len(HOURS)


def test_the_week_turns_at_the_zones_monday_midnight() -> None:
    # Monday 00:30 in Kiritimati is Sunday 10:30 UTC: there the week just ended, in UTC it has not.
    now = datetime(2026, 9, 13, 10, 30, tzinfo=UTC)
    assert last_complete_week(now, "Pacific/Kiritimati").since == date(2026, 9, 7)
    assert last_complete_week(now, "UTC").since == date(2026, 8, 31)
