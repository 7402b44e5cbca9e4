"""The weekly job: exactly once per subscription and week, through restarts, crashes and replicas."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from prdigest.bot.delivery import LEASE, DeliveryError, deliver_subscription, delivery_key
from prdigest.bot.scheduler import WeeklyScheduler, last_fire, trigger_for
from prdigest.clock import utc_now
from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.models import Report
from prdigest.periods import last_complete_week
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.deliveries import claim, get_delivery
from prdigest.storage.subscriptions import list_subscriptions, save_subscription
from prdigest.subscription import WEEKDAYS, Subscription

DEMO = FixtureSource(demo_fixture_path())
# Monday 2026-09-14 09:30 in Shanghai: the demo week just ended.
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)


class Recorder:
    """A platform that records what it was asked to post; it can fail or remember a lost post."""

    def __init__(self) -> None:
        self.posted: list[tuple[str, str, Report]] = []
        self.updated: list[str] = []
        self.completed: list[tuple[str, str]] = []  # (card id, key) of threads completed
        self.fail_next = False
        self.lock = threading.Lock()

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        if self.fail_next:
            self.fail_next = False
            raise DeliveryError("the platform said no")
        with self.lock:
            self.posted.append((chat_id, key, report))
            return f"msg-{len(self.posted)}"

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        self.completed.append((message_id, key))

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        self.updated.append(message_id)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return next((f"msg-{i + 1}" for i, (_, k, _) in enumerate(self.posted) if k == key), None)


@pytest.fixture
def store(demo_store: Store) -> Store:
    return demo_store


@pytest.fixture
def sub(store: Store) -> Subscription:
    return save_subscription(store, Subscription(platform="slack", chat_id="C1", repo=DEMO.repo, lang="en"))


def settings():
    return load_settings(env={})


def test_a_week_is_posted_once(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    first = deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE)
    assert first.status == "posted" and first.key == f"prdigest:{sub.id}:2026-W37"
    assert first.report is not None and first.report.stats.merged_prs == 30
    again = deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE + timedelta(hours=2))
    assert again.status == "already" and again.message_id == "msg-1"
    assert len(slack.posted) == 1
    forced = deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE, force=True)
    assert forced.status == "updated" and slack.updated == ["msg-1"] and len(slack.posted) == 1


def test_the_period_is_the_last_complete_week_in_the_subscriptions_timezone(store: Store) -> None:
    la = save_subscription(
        store, Subscription(platform="slack", chat_id="C2", repo=DEMO.repo, tz="America/Los_Angeles")
    )
    outcome = deliver_subscription(settings(), store, la, {"slack": Recorder()}, now=FIRE)
    # Monday 01:30 UTC is still Sunday in Los Angeles: its last complete week is the one before.
    assert outcome.key.endswith("2026-W36")


def test_double_fires_and_replicas_post_once(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    outcomes = []
    threads = [
        threading.Thread(
            target=lambda w=w: outcomes.append(
                deliver_subscription(
                    settings(), store, sub, {"slack": slack}, now=FIRE, worker=f"replica-{w}"
                )
            ),
            daemon=True,
        )
        for w in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(slack.posted) == 1
    assert sorted(o.status for o in outcomes).count("posted") == 1


def test_a_crash_after_posting_is_recovered_without_a_second_post(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    window = last_complete_week(FIRE, sub.tz)
    key = delivery_key(sub, window)
    # A worker claimed the week, posted, and died before recording the message id.
    claim(store, key, sub.id, "2026-W37", "dead-worker", LEASE)
    slack.posted.append((sub.chat_id, key, None))  # type: ignore[arg-type]
    with store.writing() as tx:
        tx.run("update deliveries set claimed_at = ? where key = ?", [(FIRE - 2 * LEASE).isoformat(), key])
    outcome = deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE)
    assert outcome.status == "recovered" and outcome.message_id == "msg-1"
    assert slack.completed == [("msg-1", key)]  # the card's thread, completed before it is recorded
    assert len(slack.posted) == 1 and get_delivery(store, key).status == "posted"


def test_a_live_claim_of_another_worker_is_left_alone(store: Store, sub: Subscription) -> None:
    key = delivery_key(sub, last_complete_week(FIRE, sub.tz))
    claim(store, key, sub.id, "2026-W37", "other", LEASE)
    slack = Recorder()
    assert deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE).status == "busy"
    assert slack.posted == []


def test_a_failed_post_can_be_retried(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    slack.fail_next = True
    with pytest.raises(DeliveryError):
        deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE)
    assert deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE).status == "posted"


def test_silent_when_empty(store: Store) -> None:
    quiet = save_subscription(store, Subscription(platform="slack", chat_id="C3", repo=DEMO.repo,
                                                  silent_when_empty=True))  # fmt: skip
    slack = Recorder()
    outcome = deliver_subscription(settings(), store, quiet, {"slack": slack}, now=FIRE + timedelta(days=7))
    assert outcome.status == "skipped" and slack.posted == []


def test_an_unconfigured_platform_is_a_clear_error(store: Store, sub: Subscription) -> None:
    with pytest.raises(DeliveryError, match="posts to slack, which is not configured"):
        deliver_subscription(settings(), store, sub, {}, now=FIRE)


def test_the_card_links_an_unguessable_report_page(store: Store, sub: Subscription) -> None:
    seen: list[str | None] = []

    class Linker(Recorder):
        def deliver(self, chat_id, report, key, report_url, markdown):
            seen.append(report_url)
            return super().deliver(chat_id, report, key, report_url, markdown)

    public = load_settings(env={"PRDIGEST_PUBLIC_URL": "https://digest.example.com/"})
    deliver_subscription(public, store, sub, {"slack": Linker()}, now=FIRE)
    assert seen[0] is not None and seen[0].startswith("https://digest.example.com/reports/")
    assert len(seen[0].rsplit("/", 1)[1]) >= 20


def test_cron_triggers_use_named_days_and_the_timezone() -> None:
    sub = Subscription(platform="lark", chat_id="c", repo="a/b", day="mon", time="09:30", tz="Asia/Shanghai")
    trigger = trigger_for(sub)
    sunday = datetime(2026, 9, 13, 12, 0, tzinfo=UTC)
    fire = trigger.get_next_fire_time(None, sunday)
    assert fire.isoformat() == "2026-09-14T09:30:00+08:00"  # a Monday, not a Tuesday
    assert last_fire(sub, datetime(2026, 9, 14, 1, 29, tzinfo=UTC)).isoformat() == "2026-09-07T09:30:00+08:00"
    assert last_fire(sub, FIRE).isoformat() == "2026-09-14T09:30:00+08:00"


def test_scheduler_jobs_follow_the_subscriptions(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    scheduler = WeeklyScheduler(settings(), store, {"slack": slack}, clock=lambda: FIRE)
    scheduler.start(paused=True)
    try:
        first = scheduler.next_run(sub.id).astimezone(ZoneInfo("Asia/Shanghai"))
        assert (first.weekday(), first.hour, first.minute) == (0, 9, 30)
        svc = Services(settings=settings(), store=store, default_repo=DEMO.repo,
                       on_subscriptions_changed=scheduler.rebuild)  # fmt: skip
        ctx = Context(platform="console", chat_id="console", user_id="me")
        handle("subscribe acme-ml/trainer fri 17:00 Europe/Berlin", ctx, svc)
        (added,) = [s for s in list_subscriptions(store) if s.platform == "console"]
        berlin = scheduler.next_run(added.id).astimezone(ZoneInfo("Europe/Berlin"))
        assert (berlin.weekday(), berlin.hour, berlin.minute) == (4, 17, 0)
        handle("unsubscribe acme-ml/trainer", ctx, svc)
        assert scheduler.next_run(added.id) is None
    finally:
        scheduler.shutdown()


def test_a_run_missed_within_the_grace_period_happens_at_start(store: Store, sub: Subscription) -> None:
    slack = Recorder()
    late = WeeklyScheduler(settings(), store, {"slack": slack}, clock=lambda: FIRE + timedelta(hours=2))
    assert [o.status for o in late.catch_up()] == ["posted"]
    assert [o.status for o in late.catch_up()] == ["already"]  # a second start posts nothing
    too_late = WeeklyScheduler(
        settings(), store, {"slack": Recorder()}, clock=lambda: FIRE + timedelta(days=2)
    )
    assert too_late.catch_up() == []
    assert len(slack.posted) == 1


def test_a_week_held_by_a_dead_worker_is_retried_when_its_claim_runs_out(store: Store) -> None:
    # Claims age by prdigest's clock, so this subscription fired a minute before it.
    now = utc_now()
    fired = now - timedelta(minutes=1)
    sub = save_subscription(store, Subscription(
        platform="slack", chat_id="C9", repo=DEMO.repo, tz="UTC", day=WEEKDAYS[fired.weekday()],
        time=f"{fired:%H:%M}",
    ))  # fmt: skip
    key = delivery_key(sub, last_complete_week(fired, sub.tz))  # the week before the fire
    claim(store, key, sub.id, "week", "host:4242", LEASE)  # a process that died just before a quick restart
    slack = Recorder()
    scheduler = WeeklyScheduler(settings(), store, {"slack": slack}, clock=lambda: now)
    scheduler.start(paused=True)
    try:
        (busy,) = scheduler.catch_up()
        assert busy.status == "busy" and busy.retry_at is not None and slack.posted == []
        retry = scheduler._scheduler.get_job(f"retry-{key}")
        assert retry is not None and retry.next_run_time >= busy.retry_at
        with store.writing() as tx:  # the dead worker's claim runs out
            tx.run("update deliveries set claimed_at = ? where key = ?", [(now - 2 * LEASE).isoformat(), key])
        retry.func(*retry.args)
        assert len(slack.posted) == 1 and get_delivery(store, key).status == "posted"
    finally:
        scheduler.shutdown()


@pytest.mark.parametrize("deadline_minutes", [60, 0])
def test_a_scheduled_delivery_waits_out_the_llms_rate_limit_until_its_deadline(
    store: Store, sub: Subscription, serve, deadline_minutes: int
) -> None:
    from fakes.openai_api import Reply
    from serve_support import llm_env

    from prdigest import clock

    fake = serve()
    fake.enqueue(Reply(status=429, headers={"retry-after": "0.3"}))
    env = {**llm_env(fake), "PRDIGEST_LLM__MAX_RETRIES": "0", "PRDIGEST_LLM__CONCURRENCY": "1"}
    env["PRDIGEST_SCHEDULE__DEADLINE_MINUTES"] = str(deadline_minutes)
    clock.set_now(FIRE + timedelta(minutes=2))  # the run started two minutes after its fire time
    outcome = deliver_subscription(load_settings(env=env), store, sub, {"slack": Recorder()}, now=FIRE)
    assert outcome.status == "posted" and outcome.report is not None
    engines = outcome.report.stats.engines
    if deadline_minutes:
        assert engines == {"llm": 30}  # the 429's PR too: asked again after its Retry-After
        assert len(fake.requests) == 32  # 30 PRs, the narrative, and the one answered 429
    else:
        assert engines == {"llm": 29, "rules": 1}  # no time to wait: that PR is the rules'
