"""The weekly schedule on a fixed clock: fire times across daylight-saving changes, the period each
fire reports, late runs, and several triggers of one period posting once. No real waiting."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED, JobEvent
from serve_support import wait_until

from prdigest.bot.scheduler import JOB_PREFIX, WeeklyScheduler, last_fire, trigger_for
from prdigest.config import Settings, load_settings
from prdigest.models import Report
from prdigest.periods import last_complete_week
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import WEEKDAYS, Subscription

DEMO = FixtureSource(demo_fixture_path())  # 30 PRs merged in 2026-W37, Asia/Shanghai
# Monday 2026-09-14 09:30 in Shanghai: the demo week just ended there.
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Chat:
    """A platform that keeps what it is asked to post (from any thread)."""

    def __init__(self) -> None:
        self.posted: list[tuple[str, str, Report]] = []
        self._lock = threading.Lock()

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        with self._lock:
            self.posted.append((chat_id, key, report))
            return f"m{len(self.posted)}"

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("no run here is forced")

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("no card is recovered here")

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return None


@pytest.fixture
def store(demo_store: Store) -> Store:
    return demo_store


def settings() -> Settings:
    return load_settings(env={})


def subscribe(store: Store, **fields: str) -> Subscription:
    return save_subscription(
        store, Subscription(platform="slack", chat_id="C1", repo=DEMO.repo, lang="en", **fields)
    )


def fires(sub: Subscription, after: datetime, count: int) -> list[datetime]:
    """The next fire times as APScheduler computes them while running: after each run, from the UTC now."""
    trigger = trigger_for(sub)
    found: list[datetime] = []
    previous, now = None, after
    for _ in range(count):
        fire = trigger.get_next_fire_time(previous, now)
        found.append(fire)
        previous, now = fire, fire.astimezone(UTC) + timedelta(seconds=1)
    return found


# --- when the jobs fire ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tz", "day", "time", "expected"),
    [
        ("Europe/Berlin", "mon", "09:30", ["2026-03-23T08:30", "2026-03-30T07:30"]),  # CET -> CEST 03-29
        ("Europe/Berlin", "mon", "09:30", ["2026-10-19T07:30", "2026-10-26T08:30"]),  # CEST -> CET 10-25
        ("America/New_York", "mon", "09:30", ["2026-03-02T14:30", "2026-03-09T13:30"]),  # EST -> EDT 03-08
        ("America/New_York", "fri", "17:00", ["2026-10-30T21:00", "2026-11-06T22:00"]),  # EDT -> EST 11-01
        ("Asia/Shanghai", "mon", "09:30", ["2026-03-23T01:30", "2026-03-30T01:30"]),  # no DST
        ("UTC", "sun", "23:00", ["2026-10-25T23:00", "2026-11-01T23:00"]),
    ],
)
def test_fires_keep_the_local_wall_clock_time_across_dst(
    tz: str, day: str, time: str, expected: list[str]
) -> None:
    sub = Subscription(platform="lark", chat_id="oc", repo="a/b", day=day, time=time, tz=tz)
    first, second = fires(sub, utc(expected[0]) - timedelta(days=1), 2)
    assert [first.astimezone(UTC), second.astimezone(UTC)] == [utc(e) for e in expected]
    for fire in (first, second):
        local = fire.astimezone(ZoneInfo(tz))
        assert (WEEKDAYS[local.weekday()], local.strftime("%H:%M")) == (day, time)
    assert (second.astimezone(ZoneInfo(tz)).date() - first.astimezone(ZoneInfo(tz)).date()).days == 7
    # The catch-up at start takes the same fire times as the cron job.
    assert last_fire(sub, second) == second
    assert last_fire(sub, second - timedelta(minutes=1)) == first


# --- the period a fire reports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tz", "fire", "since", "until", "hours"),
    [
        ("Europe/Berlin", "2026-03-30T07:30", "2026-03-23", "2026-03-29", 167),  # the week that lost an hour
        ("Europe/Berlin", "2026-10-26T08:30", "2026-10-19", "2026-10-25", 169),  # and the one that gained it
        ("America/New_York", "2026-03-09T13:30", "2026-03-02", "2026-03-08", 167),
        ("America/New_York", "2026-11-02T14:30", "2026-10-26", "2026-11-01", 169),
        # Monday 07:00 in Shanghai is still Sunday in UTC: the week that just ended there, not the one before.
        ("Asia/Shanghai", "2026-09-13T23:00", "2026-09-07", "2026-09-13", 168),
        # The same instant in UTC is Sunday evening: that week is not over, the one before is reported.
        ("UTC", "2026-09-13T23:00", "2026-08-31", "2026-09-06", 168),
    ],
)
def test_each_fire_reports_the_monday_to_sunday_week_before_it_in_its_timezone(
    store: Store, tz: str, fire: str, since: str, until: str, hours: int
) -> None:
    at = utc(fire)
    local = at.astimezone(ZoneInfo(tz))
    sub = subscribe(store, day=WEEKDAYS[local.weekday()], time=local.strftime("%H:%M"), tz=tz)
    assert last_fire(sub, at) == at
    window = last_complete_week(at, tz)
    assert (window.since, window.until) == (date.fromisoformat(since), date.fromisoformat(until))
    # Same-zone datetimes subtract as wall clocks: the real length is measured in UTC.
    assert window.end.astimezone(UTC) - window.start.astimezone(UTC) == timedelta(hours=hours)
    chat = Chat()
    outcome = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: at).run(sub.id)
    assert outcome is not None and outcome.status == "posted"
    year, week, _ = window.since.isocalendar()
    assert outcome.key == f"prdigest:{sub.id}:{year}-W{week:02d}"
    ((_, _, report),) = chat.posted
    assert (report.window.since, report.window.until, report.window.tz) == (window.since, window.until, tz)
    if tz == "Asia/Shanghai":
        assert report.stats.merged_prs == 30  # the whole demo week, 2026-W37 in Shanghai


# --- late runs ------------------------------------------------------------------------------------


def test_a_start_an_hour_after_the_fire_posts_once_and_the_cron_run_then_nothing(store: Store) -> None:
    sub = subscribe(store)  # mon 09:30 Asia/Shanghai
    chat = Chat()
    late = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: FIRE + timedelta(hours=1))
    assert [o.status for o in late.catch_up()] == ["posted"]
    assert [o.status for o in late.catch_up()] == ["already"]
    outcome = late.run(sub.id)
    assert outcome is not None and outcome.status == "already"
    assert [key for _, key, _ in chat.posted] == [f"prdigest:{sub.id}:2026-W37"]


def far_from_now() -> tuple[dict[str, str], datetime]:
    """A weekly UTC schedule whose real fires are days away from now, and its fire in the week after
    the demo week. APScheduler keeps real time: a real fire within the grace before now would run
    besides the late one the test makes (on a Monday morning, a fixed Monday 09:30 would)."""
    at = (datetime.now(UTC) + timedelta(days=3)).replace(second=0, microsecond=0)
    fire = datetime(2026, 9, 14, at.hour, at.minute, tzinfo=UTC) + timedelta(days=at.weekday())  # a Monday
    return {"day": WEEKDAYS[at.weekday()], "time": f"{at:%H:%M}", "tz": "UTC"}, fire


def test_a_job_woken_past_midnight_reports_the_week_of_its_fire_time(store: Store) -> None:
    """Due Sunday 23:30, run at 00:30 on Monday: the week it was due for (the one the catch-up reports),
    not the week that has just ended."""
    sub = subscribe(store, day="sun", time="23:30", tz="UTC")
    chat = Chat()
    woke = datetime(2026, 9, 21, 0, 30, tzinfo=UTC)  # a Monday
    scheduler = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: woke)
    outcome = scheduler.run(sub.id)
    assert outcome is not None and outcome.key.endswith(":2026-W37")  # 2026-09-07..13, before Sun 20th
    assert [o.status for o in scheduler.catch_up()] == ["already"] and len(chat.posted) == 1


@pytest.mark.parametrize(("late", "event", "posts"), [(1, EVENT_JOB_EXECUTED, 1), (7, EVENT_JOB_MISSED, 0)])
def test_a_cron_job_woken_late_runs_once_within_the_grace_and_not_after(
    store: Store, late: int, event: int, posts: int
) -> None:
    schedule, fire = far_from_now()
    sub = subscribe(store, **schedule)
    chat = Chat()
    scheduler = WeeklyScheduler(
        settings(), store, {"slack": chat}, clock=lambda: fire + timedelta(hours=late)
    )
    seen: list[int] = []
    done = threading.Event()

    def on_event(job_event: JobEvent) -> None:
        seen.append(job_event.code)
        done.set()

    aps = scheduler._scheduler  # APScheduler itself: only it can be made to wake up late
    aps.add_listener(on_event, EVENT_JOB_EXECUTED | EVENT_JOB_MISSED | EVENT_JOB_ERROR)
    scheduler.start(paused=True)
    try:
        # APScheduler keeps real time: its thread wakes `late` hours after the job was due (a busy machine,
        # a suspended VM). The job's own clock says the same.
        aps.modify_job(f"{JOB_PREFIX}{sub.id}", next_run_time=datetime.now(UTC) - timedelta(hours=late))
        aps.resume()
        assert done.wait(10), "the job neither ran nor was missed"

        def rescheduled() -> bool:  # APScheduler's own thread moves the job on to next week
            next_run = scheduler.next_run(sub.id)
            return next_run is not None and next_run > datetime.now(UTC)

        wait_until(rescheduled, 5, "the job's next run")
    finally:
        scheduler.shutdown()
    assert seen == [event] and len(chat.posted) == posts
    # A restart now (the catch-up) posts nothing more: the week is done, or its time is too long past.
    assert [o.status for o in scheduler.catch_up()] == (["already"] if posts else [])
    assert len(chat.posted) == posts


# --- several triggers of one period ---------------------------------------------------------------


def test_the_repeated_hour_of_a_dst_end_fires_twice_and_posts_once(store: Store) -> None:
    sub = subscribe(store, day="sun", time="02:30", tz="Europe/Berlin")
    twice = fires(sub, utc("2026-10-24T12:00"), 2)
    # 02:30 happens twice on 2026-10-25 (CEST, then CET) and APScheduler fires at both.
    # (Compared in UTC: a datetime in a fold never equals one of another zone.)
    assert [f.astimezone(UTC) for f in twice] == [utc("2026-10-25T00:30"), utc("2026-10-25T01:30")]
    chat = Chat()
    now = [twice[0]]
    scheduler = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: now[0])
    statuses = []
    for fire in twice:
        now[0] = fire
        outcome = scheduler.run(sub.id)
        assert outcome is not None
        statuses.append(outcome.status)
    assert statuses == ["posted", "already"]
    assert [key for _, key, _ in chat.posted] == [f"prdigest:{sub.id}:2026-W42"]


def test_a_subscription_moved_later_in_the_same_week_does_not_post_that_week_again(store: Store) -> None:
    sub = subscribe(store)  # mon 09:30 Asia/Shanghai
    chat = Chat()
    monday = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: FIRE)
    assert [o.status for o in monday.catch_up()] == ["posted"]
    moved = save_subscription(store, sub.model_copy(update={"day": "wed", "time": "10:00"}))
    wednesday = utc("2026-09-16T02:00")  # Wednesday 10:00 in Shanghai
    assert last_fire(moved, wednesday) == wednesday
    later = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: wednesday)
    assert [o.status for o in later.catch_up()] == ["already"]
    assert len(chat.posted) == 1


def test_a_start_before_a_fire_in_the_spring_gap_does_not_post_early(store: Store) -> None:
    sub = subscribe(store, day="sun", time="02:30", tz="Europe/Berlin")
    # 02:30 does not exist on 2026-03-29 in Berlin; APScheduler fires at 01:30 UTC (03:30 CEST).
    (cron_fire,) = fires(sub, utc("2026-03-28T12:00"), 1)
    assert cron_fire.astimezone(UTC) == utc("2026-03-29T01:30")
    early = utc("2026-03-29T01:05")  # 03:05 CEST: the service starts 25 minutes before that fire
    chat = Chat()
    assert WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: early).catch_up() == []
    assert chat.posted == []
    late = utc("2026-03-29T01:35")  # five minutes after it: the catch-up posts that week, once
    outcomes = WeeklyScheduler(settings(), store, {"slack": chat}, clock=lambda: late).catch_up()
    assert [(o.key, o.status) for o in outcomes] == [(f"prdigest:{sub.id}:2026-W12", "posted")]
