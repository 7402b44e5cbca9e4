"""The buttons under a weekly card's risks: "snooze a week" and "acknowledged", clicked on Slack and on
Lark through the real SDKs against the local fakes. A snoozed risk leaves the card (redrawn in place)
and the next week's report, and is back the week after; the row names who; a risk is an admin's.

The repository is test_followups' three weeks: week 1 merges a feature without tests (no_tests), which
the reports of weeks 2 and 3 still follow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack, block_action, post, signed_action
from fakes.slack_api import Message as SlackMessage
from lark_oapi.core.token.manager import TokenManager
from test_bot_lark import buttons as lark_buttons
from test_bot_lark import settings_for as lark_settings
from test_bot_slack import slack_settings
from test_followups import REPO, WEEKS, build_clone

from prdigest import clock
from prdigest.bot.adapters import AdapterDeliverer
from prdigest.bot.app import BotCore
from prdigest.bot.delivery import deliver_subscription, redraw_delivered
from prdigest.bot.lark.adapter import LarkBot
from prdigest.bot.slack.adapter import SlackBot
from prdigest.bot.web import WebApp
from prdigest.config import Settings
from prdigest.config.models import RepoSettings
from prdigest.handlers import Services
from prdigest.models import Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.snoozes import active_snoozes
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

CHAT = {"slack": "C0TEAM", "lark": "oc_team"}
ADMINS = {"slack": "U0ADMIN", "lark": "ou_admin"}
OTHERS = {"slack": "U0BOB", "lark": "ou_bob"}
LANGS = {"slack": "en", "lark": "zh"}  # each platform's card in another language: the refusal follows it
REFUSED = {"en": "only this bot's admins may snooze", "zh": "只有本机器人的管理员可以暂缓"}
SNOOZED = {"en": "Snoozed no_tests", "zh": "已暂缓 no_tests"}


def monday_after(week: int) -> datetime:
    """09:00 UTC on the Monday after week ``week`` (0-based): when that week's card goes out."""
    return datetime.combine(WEEKS[week].until + timedelta(days=1), time(9), UTC)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("buttons") / "app")


def with_repo(settings: Settings, clone: Path) -> Settings:
    report = settings.report.model_copy(update={"timezone": "UTC"})
    return settings.model_copy(update={"repos": [RepoSettings(name=REPO, git=clone)], "report": report})


class Platform:
    """A running bot of one platform over HTTP with its fake, its weekly deliverer and a subscription;
    a button's redraw goes through the deliverer, as `prdigest serve` wires it."""

    def __init__(self, name: str, fake: Any, settings: Settings, store: Store, bot: Any, url: str):
        self.name, self.fake, self.settings, self.store, self.bot, self.url = (
            name,
            fake,
            settings,
            store,
            bot,
            url,
        )
        self.deliverers = {name: AdapterDeliverer(bot)}
        self.sub = save_subscription(
            store, Subscription(platform=name, chat_id=CHAT[name], repo=REPO, lang=LANGS[name], tz="UTC")
        )

    def redraw(self, platform: str, chat_id: str, repo: str, window: Window) -> None:
        redraw_delivered(self.settings, self.store, self.deliverers, (platform, chat_id), repo, window)


@pytest.fixture
def wired(tmp_path: Path) -> Iterator[Callable[..., Platform]]:
    """Start a platform's bot with its web app; everything stopped at the end."""
    stops: list[Callable[[], None]] = []

    def start(
        name: str, fake: Any, settings: Settings, make_bot: Callable[[Settings, BotCore], Any]
    ) -> Platform:
        store = Store(tmp_path / f"{name}.db")
        svc = Services(settings=settings, store=store, source_for=source_factory(settings))
        core = BotCore(svc, workers=2)
        bot = make_bot(settings, core)
        web = WebApp()
        web.mount_events(bot.events_path, bot.wsgi_app())
        host, port = web.start("127.0.0.1", 0)
        bot.start()
        stops.extend([store.close, web.stop, core.close, bot.stop])
        p = Platform(name, fake, settings, store, bot, f"http://{host}:{port}{bot.events_path}")
        svc.redraw = p.redraw
        return p

    yield start
    for stop in reversed(stops):
        stop()


def report_of(p: Platform, week: int) -> Report:
    """Week ``week``'s report as the subscription's card would say it, made on the Monday after it."""
    clock.set_now(monday_after(week))
    source = source_factory(p.settings)(REPO)
    return make_report(p.settings, p.store, source, WEEKS[week], repo=REPO, lang=LANGS[p.name], save=False,
                       subscription=p.sub)  # fmt: skip


def followed(report: Report) -> set[str]:
    return {f.label for f in report.risk_followups} | {o.label for o in report.risk_observations}


Click = Callable[[dict[str, Any], str, str], str]


def check_snooze_comes_and_goes(
    p: Platform, click: Click, values: Callable[[], list[dict[str, Any]]]
) -> None:
    """Deliver week 1, click "snooze a week" on its no_tests risk (a non-admin first), then read the
    reports of weeks 2 and 3. ``click(value, user, expected)`` returns the answer holding ``expected``;
    ``values()`` are the button values the card's thread shows now."""
    assert "no_tests" in followed(report_of(p, 1)) and "no_tests" in followed(report_of(p, 2))  # unsnoozed
    clock.set_now(monday_after(0))
    assert deliver_subscription(p.settings, p.store, p.sub, p.deliverers, window=WEEKS[0]).status == "posted"
    value = next(v for v in values() if v["action"] == "snooze" and v.get("label") == "no_tests")
    clock.set_now(monday_after(0) + timedelta(hours=1))
    lang = LANGS[p.name]
    click(value, OTHERS[p.name], REFUSED[lang])
    assert active_snoozes(p.store, REPO, clock.utc_now()) == []
    click(value, ADMINS[p.name], SNOOZED[lang])
    (row,) = active_snoozes(p.store, REPO, clock.utc_now())
    assert (row.kind, row.label, row.by) == ("risk", "no_tests", ADMINS[p.name])
    assert monday_after(0) + timedelta(days=7) < row.until < monday_after(1) + timedelta(days=1)
    # The card's thread was redrawn in place (before the answer): no button quiets no_tests any more.
    assert not [v for v in values() if v.get("label") == "no_tests"]
    week2, week3 = report_of(p, 1), report_of(p, 2)
    assert "no_tests" not in followed(week2) and [s.label for s in week2.snoozed] == ["no_tests"]
    assert "no_tests" in followed(week3) and week3.snoozed == []


# --- Slack ------------------------------------------------------------------------------------


def slack_thread(fake: FakeSlack) -> list[SlackMessage]:
    card = next(m for m in fake.messages if m.channel == CHAT["slack"] and m.thread_ts is None)
    return [m for m in fake.messages if m.thread_ts == card.ts]


def slack_buttons(fake: FakeSlack) -> list[tuple[SlackMessage, dict[str, Any]]]:
    return [
        (m, e)
        for m in slack_thread(fake)
        for b in m.blocks
        if b.get("type") == "actions"
        for e in b["elements"]
        if e.get("value")
    ]


def test_snooze_a_week_on_a_risk_from_a_slack_thread(
    slack: FakeSlack, clone: Path, wired: Callable[..., Platform]
) -> None:
    p = wired("slack", slack, with_repo(slack_settings(slack, "http"), clone), SlackBot)

    def click(value: dict[str, Any], user: str, expected: str) -> str:
        message, element = next((m, e) for m, e in slack_buttons(slack) if json.loads(e["value"]) == value)
        before = len(slack.messages)
        payload = block_action(
            element["action_id"], element["value"], channel=CHAT["slack"], message_ts=message.ts,
            thread_ts=message.thread_ts, trigger_id=f"trig-{user}", response_url=slack.response_url(user),
            user=user,
        )  # fmt: skip
        status, _ = post(p.url, signed_action(payload))
        assert status == 200
        found = slack.wait_for(lambda: [m for m in slack.messages[before:] if expected in m.all_text])
        assert found[0].thread_ts == message.thread_ts  # answered in the card's thread
        return found[0].all_text

    check_snooze_comes_and_goes(p, click, lambda: [json.loads(e["value"]) for _, e in slack_buttons(slack)])
    assert any(m.edits for m in slack_thread(slack))  # redrawn with chat.update


# --- Lark -------------------------------------------------------------------------------------


def lark_thread(fake: FakeLark) -> list[Any]:
    card = fake.in_chat(CHAT["lark"])[0]
    return [m for m in fake.messages if m.reply_to == card.message_id and m.msg_type == "interactive"]


def lark_values(fake: FakeLark) -> list[tuple[Any, dict[str, Any]]]:
    """Each callback button's value in the thread as it reads now (its latest patch)."""
    return [
        (m, b["behaviors"][0]["value"])
        for m in lark_thread(fake)
        for b in lark_buttons(m.updates[-1] if m.updates else m.content)
        if b["behaviors"][0]["type"] == "callback"
    ]


@pytest.fixture
def lark_fake() -> Iterator[FakeLark]:
    with FakeLark() as server:
        yield server
    TokenManager.cache.set(f"self_tenant_token:{server.app_id}", "", 0)  # the SDK's process-wide cache


def test_snooze_a_week_on_a_risk_from_a_lark_thread(
    lark_fake: FakeLark, clone: Path, wired: Callable[..., Platform]
) -> None:
    p = wired("lark", lark_fake, with_repo(lark_settings(lark_fake, "http"), clone), LarkBot)

    def click(value: dict[str, Any], user: str, expected: str) -> str:
        message = next(m for m, v in lark_values(lark_fake) if v == value)
        before = len(lark_fake.messages)
        event = lark_fake.card_action_event(
            value, message_id=message.message_id, chat_id=CHAT["lark"], user=user
        )
        status, body = lark_fake.post_event(p.url, event)
        assert status == 200 and body is not None and "toast" in body  # acknowledged at once
        found = lark_fake.wait_for(lambda m: lark_fake.messages.index(m) >= before and expected in m.text)
        assert found.reply_to == message.message_id and found.reply_in_thread
        return found.text

    check_snooze_comes_and_goes(p, click, lambda: [v for _, v in lark_values(lark_fake)])
    assert any(m.updates for m in lark_thread(lark_fake))  # patched in place
