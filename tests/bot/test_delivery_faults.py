"""The weekly card under chat API faults: exactly one card per subscription and week, posted once
the fault clears while the service keeps running.

Real slack_sdk and lark-oapi clients talk to the fake Slack and Lark (127.0.0.1, port 0), which
inject: a card accepted but answered past the client's timeout, a 500 then recovery, a 429 with
Retry-After, and (Lark) a takeover two hours after a crash, past Lark's one-hour uuid window.
The scheduler's one-off retry job is run directly instead of waiting for its time.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack

import prdigest.bot.delivery as delivery
from prdigest.bot import retries
from prdigest.bot.delivery import deliver_subscription, delivery_key
from prdigest.bot.lark import client as lark_client
from prdigest.bot.lark.client import LarkOutbound
from prdigest.bot.scheduler import WeeklyScheduler
from prdigest.bot.slack import client as slack_client
from prdigest.bot.slack.client import SlackOutbound
from prdigest.clock import utc_now
from prdigest.config import Settings, load_settings
from prdigest.models import Report
from prdigest.periods import last_complete_week
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

DEMO = FixtureSource(demo_fixture_path())
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)  # Monday 09:30 in Shanghai: the demo week just ended
CHAT = {"slack": "C0FAULT", "lark": "oc_fault"}


class Out:
    """A chat client as the weekly job's Deliverer (the card only), and as the adapter that
    tells the admins when a week is given up."""

    def __init__(self, out: SlackOutbound | LarkOutbound):
        self.out = out
        self.adapter = self

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        return self.out.post_card(chat_id, None, report, report_url, key)

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        """The card only: no thread to complete."""

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("not forced here")

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return self.out.find_delivery(chat_id, key)

    def post_reply(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        if isinstance(self.out, SlackOutbound):
            return self.out.post(chat_id, thread, payload)
        return self.out.post(chat_id, thread, payload, key[:50])

    def mention(self, user: str) -> str:
        return f"<@{user}>" if isinstance(self.out, SlackOutbound) else f'<at user_id="{user}"></at>'

    def text_payload(self, text: str) -> dict[str, Any]:
        if isinstance(self.out, SlackOutbound):
            return {"text": text}
        return {"msg_type": "text", "content": {"text": text}}


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short client timeouts and backoff, so that every fault plays out in a second or two."""
    monkeypatch.setattr(slack_client, "TIMEOUT_S", 1)
    monkeypatch.setattr(lark_client, "HTTP_TIMEOUT_S", 1)
    monkeypatch.setattr(retries, "BASE_S", 0.05)


def settings() -> Settings:
    return load_settings(env={})


def subscribe(store: Store, platform: str) -> Subscription:
    return save_subscription(store, Subscription(platform=platform, chat_id=CHAT[platform], repo=DEMO.repo))


def slack_out(slack: FakeSlack) -> Out:
    return Out(SlackOutbound(slack.bot_token, slack.url))


def lark_out(lark: FakeLark) -> Out:
    return Out(LarkOutbound(lark.app_id, lark.app_secret, lark.url))


def slack_cards(slack: FakeSlack) -> list[Any]:
    return [m for m in slack.messages if m.channel == CHAT["slack"] and m.metadata]


def lark_cards(lark: FakeLark) -> list[Any]:
    return [m for m in lark.messages if m.chat_id == CHAT["lark"] and m.msg_type == "interactive"]


def scheduler(
    store: Store, deliverers: dict[str, Any], grace: timedelta = timedelta(hours=6)
) -> WeeklyScheduler:
    sched = WeeklyScheduler(settings(), store, deliverers, grace=grace, clock=lambda: FIRE)
    sched.start(paused=True)  # jobs are kept, never fired: the test runs them
    return sched


def run_retry(sched: WeeklyScheduler, sub: Subscription) -> Any:
    pending = sched.retry_job(sub, FIRE)
    assert pending is not None, "a failed run leaves a retry job"
    return pending[1]()


def test_slack_accepts_the_card_after_the_client_timed_out(demo_store: Store, slack: FakeSlack) -> None:
    sub = subscribe(demo_store, "slack")
    sched = scheduler(demo_store, {"slack": slack_out(slack)})
    try:
        slack.slow("chat.postMessage", 2.5)  # posted at once, answered past the 1 s timeout
        # The send timed out, maybe posted: the run looks for the card by its key, finds it, keeps it.
        outcome = sched.run(sub.id or 0)
        assert outcome is not None and outcome.status == "posted"
        assert [outcome.message_id] == [card.ts for card in slack_cards(slack)]
        third = sched.run(sub.id or 0)
        assert third is not None and third.status == "already"
        assert len(slack_cards(slack)) == 1
    finally:
        sched.shutdown()


def test_slack_500_then_recovery_posts_once_while_running(demo_store: Store, slack: FakeSlack) -> None:
    sub = subscribe(demo_store, "slack")
    sched = scheduler(demo_store, {"slack": slack_out(slack)})
    try:
        slack.server_error("chat.postMessage", 500, times=2)  # twice, then Slack is fine
        outcome = sched.run(sub.id or 0)  # within the run: look for the card, find none, post again
        assert outcome is not None and outcome.status == "posted"
        assert len(slack_cards(slack)) == 1
        cards = [c for c in slack.calls_of("chat.postMessage") if not c.args.get("thread_ts")]
        assert len(cards) == 3 and len(slack.calls_of("conversations.history")) == 2  # never blindly
        assert sched.retry_job(sub, FIRE) is None
    finally:
        sched.shutdown()


def test_slack_429_within_the_cap_is_waited_out(demo_store: Store, slack: FakeSlack) -> None:
    sub = subscribe(demo_store, "slack")
    slack.ratelimit("chat.postMessage", retry_after=1)
    started = time.monotonic()
    outcome = deliver_subscription(settings(), demo_store, sub, {"slack": slack_out(slack)}, now=FIRE)
    assert outcome.status == "posted" and time.monotonic() - started >= 1
    assert len(slack_cards(slack)) == 1


def test_slack_429_past_the_cap_frees_the_worker_and_retries_later(
    demo_store: Store, slack: FakeSlack
) -> None:
    sub = subscribe(demo_store, "slack")
    sched = scheduler(demo_store, {"slack": slack_out(slack)})
    try:
        slack.ratelimit("chat.postMessage", retry_after=120)
        started = time.monotonic()
        assert sched.run(sub.id or 0) is None
        assert time.monotonic() - started < 5, "a Retry-After of 120 s does not hold the worker"
        at, run = sched.retry_job(sub, FIRE) or (None, None)
        assert at is not None and run is not None and at > FIRE
        assert run().status == "posted"
        assert len(slack_cards(slack)) == 1
    finally:
        sched.shutdown()


def test_a_week_lost_for_the_whole_grace_period_is_reported(
    demo_store: Store, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    sub = subscribe(demo_store, "slack")
    sched = scheduler(demo_store, {"slack": slack_out(slack)}, grace=timedelta(minutes=3))
    try:
        # Every try of the run and of its two retries (1, 2 min).
        slack.server_error("chat.postMessage", 500, times=3 * retries.ATTEMPTS)
        with caplog.at_level(logging.ERROR, logger="prdigest.scheduler"):
            assert sched.run(sub.id or 0) is None
            assert run_retry(sched, sub) is None
            assert run_retry(sched, sub) is None  # the next wait (4 min) ends past the grace
            assert sched.retry_job(sub, FIRE) is None
        assert any("giving up" in r.getMessage() for r in caplog.records)
        notices = [m for m in slack.messages if "could not be delivered" in m.text]
        assert len(notices) == 1 and slack_cards(slack) == []
    finally:
        sched.shutdown()


def test_lark_500_then_recovery_posts_once_while_running(demo_store: Store, lark: FakeLark) -> None:
    sub = subscribe(demo_store, "lark")
    sched = scheduler(demo_store, {"lark": lark_out(lark)})
    try:
        lark.http_error("/im/v1/messages", 500, times=retries.ATTEMPTS)  # every try of the first run
        assert sched.run(sub.id or 0) is None
        assert lark_cards(lark) == []
        assert run_retry(sched, sub).status == "posted"
        assert len(lark_cards(lark)) == 1
        lark.http_error("/im/v1/messages", 503)  # one 5xx is retried inside the call
        other = save_subscription(
            demo_store, Subscription(platform="lark", chat_id="oc_other", repo=DEMO.repo)
        )
        outcome = deliver_subscription(settings(), demo_store, other, {"lark": lark_out(lark)}, now=FIRE)
        assert outcome.status == "posted" and len(lark.in_chat("oc_other")) == 1
        assert len(lark_cards(lark)) == 1
    finally:
        sched.shutdown()


def test_lark_429_honours_retry_after(demo_store: Store, lark: FakeLark) -> None:
    sub = subscribe(demo_store, "lark")
    lark.http_error("/im/v1/messages", 429, retry_after=1)
    started = time.monotonic()
    outcome = deliver_subscription(settings(), demo_store, sub, {"lark": lark_out(lark)}, now=FIRE)
    assert outcome.status == "posted" and time.monotonic() - started >= 1
    assert len(lark_cards(lark)) == 1


def test_lark_accepts_the_card_after_the_client_timed_out(demo_store: Store, lark: FakeLark) -> None:
    sub = subscribe(demo_store, "lark")
    lark.slow("/im/v1/messages", 2.5)
    outcome = deliver_subscription(settings(), demo_store, sub, {"lark": lark_out(lark)}, now=FIRE)
    assert outcome.status == "posted"  # the retry of the send returned the first message (its uuid)
    assert len(lark_cards(lark)) == 1 and outcome.message_id == lark_cards(lark)[0].message_id


def test_lark_takeover_two_hours_after_a_crash_finds_the_card(
    demo_store: Store, lark: FakeLark, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = subscribe(demo_store, "lark")
    real_complete = delivery.complete

    def crash(store: Store, key: str, status: str, *rest: Any) -> None:
        if status == "posted":
            raise SystemExit("the worker dies after posting, before recording")
        real_complete(store, key, status, *rest)

    monkeypatch.setattr(delivery, "complete", crash)
    with pytest.raises(SystemExit):
        deliver_subscription(settings(), demo_store, sub, {"lark": lark_out(lark)}, now=FIRE)
    monkeypatch.setattr(delivery, "complete", real_complete)
    assert len(lark_cards(lark)) == 1
    key = delivery_key(sub, last_complete_week(FIRE, sub.tz))
    two_hours_ago = (utc_now() - timedelta(hours=2)).isoformat()
    with demo_store.writing() as tx:  # the dead worker's claim, two hours old
        tx.run(
            "update deliveries set claimed_by = 'dead:1', claimed_at = ? where key = ?", [two_hours_ago, key]
        )
    lark.advance(2 * 3600)  # Lark has forgotten the uuid
    outcome = deliver_subscription(settings(), demo_store, sub, {"lark": lark_out(lark)}, now=FIRE)
    assert outcome.status == "recovered" and outcome.message_id == lark_cards(lark)[0].message_id
    assert len(lark_cards(lark)) == 1


def test_the_fake_lark_forgets_a_uuid_after_an_hour(lark: FakeLark) -> None:
    """What the takeover test relies on: past the hour, the same uuid posts a second message."""
    out = LarkOutbound(lark.app_id, lark.app_secret, lark.url)
    text = {"msg_type": "text", "content": {"text": "hello"}}
    first = out.post(CHAT["lark"], None, text, "uuid-1")
    assert out.post(CHAT["lark"], None, text, "uuid-1") == first
    lark.advance(3601)
    assert out.post(CHAT["lark"], None, text, "uuid-1") != first


def test_retry_after_is_read_and_capped() -> None:
    assert retries.retry_after_s({"Retry-After": "7"}) == 7
    assert retries.retry_after_s({"retry-after": ["3"]}) == 3  # slack_sdk's headers hold lists
    assert retries.retry_after_s({"x-ogw-ratelimit-reset": "2"}) == 2  # Lark's own header
    assert retries.retry_after_s({"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}) == 0
    assert retries.retry_after_s({}) is None
    assert retries.wait_s(1, 5) == 5 and retries.wait_s(1, 120) is None  # past the cap: fail now
    assert retries.wait_s(retries.ATTEMPTS, None) is None  # the attempts are spent
    assert all(retries.backoff_s(n) <= retries.MAX_WAIT_S for n in range(1, 40))


def test_slack_history_5xx_is_retried_in_the_client(slack: FakeSlack) -> None:
    out = SlackOutbound(slack.bot_token, slack.url)
    slack.server_error("conversations.history", 503)
    assert out.find_delivery(CHAT["slack"], "prdigest:1:2026-W37") is None
    assert len(slack.calls_of("conversations.history")) == 2


@pytest.mark.parametrize("platform", ["slack", "lark"])
def test_a_platform_answering_500_twice_then_accepting_gets_one_card_in_one_run(
    demo_store: Store, slack: FakeSlack, lark: FakeLark, platform: str
) -> None:
    sub = subscribe(demo_store, platform)
    if platform == "slack":
        slack.server_error("chat.postMessage", 500, times=2)
        out, cards = slack_out(slack), lambda: slack_cards(slack)
    else:
        lark.http_error("/im/v1/messages", 500, times=2)
        out, cards = lark_out(lark), lambda: lark_cards(lark)
    outcome = deliver_subscription(settings(), demo_store, sub, {platform: out}, now=FIRE)
    assert outcome.status == "posted" and [outcome.message_id] == [
        card.ts if platform == "slack" else card.message_id for card in cards()
    ]


def test_a_refused_slack_post_is_not_looked_for_nor_tried_again(demo_store: Store, slack: FakeSlack) -> None:
    sub = subscribe(demo_store, "slack")
    slack.fail("chat.postMessage", "channel_not_found")
    with pytest.raises(slack_client.SlackError, match="channel_not_found"):
        deliver_subscription(settings(), demo_store, sub, {"slack": slack_out(slack)}, now=FIRE)
    assert len(slack.calls_of("chat.postMessage")) == 1 and not slack.calls_of("conversations.history")
