"""The Slack adapter against a local Slack: the real slack_bolt and slack_sdk, in Socket Mode and in HTTP
mode, from the event to the answer in the right thread; and the weekly report's delivery."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import count

import pytest
from conftest import demo_services, open_access
from fakes.slack_api import (
    BOT_USER,
    FakeSlack,
    Message,
    block_action,
    direct_message,
    event_callback,
    event_id,
    mention,
    post,
    signed_action,
    signed_command,
    signed_event,
    slash_command,
)
from slack_bolt import BoltRequest, BoltResponse

from prdigest.bot.adapters import AdapterDeliverer
from prdigest.bot.app import WORKING, BotCore
from prdigest.bot.payloads import report_file_name
from prdigest.bot.slack.adapter import SlackBot, SlackError, strip_mention
from prdigest.bot.web import WebApp
from prdigest.config import Settings, load_settings
from prdigest.errors import ConfigError
from prdigest.handlers import Context, Reply, Services, commands, handle
from prdigest.handlers.request import Request
from prdigest.models import Report
from prdigest.render.markdown import render_markdown
from prdigest.render.slack import render_slack_thread
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store

pytestmark = pytest.mark.e2e  # the real slack_bolt over Socket Mode and HTTP against a local Slack

DEMO = FixtureSource(demo_fixture_path())
ADMIN = "U0ADMIN"
MODES = ["socket", "http"]
REPORT_URL = "https://prdigest.example.com/reports/abc"
_ts = count(1)


def new_ts() -> str:
    return f"1789000000.{next(_ts):06d}"


def slack_settings(slack: FakeSlack, mode: str, **env: str) -> Settings:
    return load_settings(
        env={
            "PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token,
            "PRDIGEST_SLACK_APP_TOKEN": slack.app_token,
            "PRDIGEST_SLACK_SIGNING_SECRET": slack.signing_secret,
            "PRDIGEST_SLACK_MODE": mode,
            "PRDIGEST_SLACK_API_URL": slack.url,
            **env,
        },
        overrides={("admins", "slack"): [ADMIN]},
    )


@pytest.fixture
def svc(demo_store: Store, slack: FakeSlack) -> Services:
    return demo_services(slack_settings(slack, "socket"), demo_store)


@dataclass
class Chat:
    """A running SlackBot and the ways Slack reaches it in one mode."""

    slack: FakeSlack
    bot: SlackBot
    core: BotCore
    mode: str
    events_url: str = ""

    def event(self, event: dict, eid: str | None = None, retry: int = 0) -> None:
        """Deliver an Events API event; returns once Slack has its ack."""
        body = event_callback(event, eid or event_id())
        if self.mode == "socket":
            self.slack.wait_ack(self.slack.send_event(body, retry_attempt=retry or None))
            return
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
        status, _ = post(self.events_url, signed_event(body), headers)
        assert status == 200

    def command(self, text: str, channel: str, user: str = "U0ALICE") -> str:
        """Run `/prdigest text`; returns the text of the ack (shown to the asker only)."""
        url = self.slack.response_url(channel)
        fields = slash_command(
            text, channel=channel, trigger_id=f"trig-{new_ts()}", response_url=url, user=user
        )
        if self.mode == "socket":
            return self.slack.wait_ack(self.slack.send_command(fields))["payload"]["text"]
        status, body = post(self.events_url, signed_command(fields))
        assert status == 200
        return body.decode()

    def click(self, action_id: str, value: str | None, card_ts: str, channel: str = "C0TEAM") -> None:
        """Click a button on the bot's message ``card_ts``; returns once Slack has its ack."""
        payload = block_action(
            action_id,
            value,
            channel=channel,
            message_ts=card_ts,
            trigger_id=f"trig-{new_ts()}",
            response_url=self.slack.response_url(action_id),
        )
        if self.mode == "socket":
            self.slack.wait_ack(self.slack.send_action(payload))
            return
        status, _ = post(self.events_url, signed_action(payload))
        assert status == 200

    def drain(self) -> None:
        """Wait until every listener and every answer has run: nothing more will be posted."""
        self.bot.stop()
        self.core.close()


@contextmanager
def running(slack: FakeSlack, svc: Services, mode: str, core: BotCore | None = None) -> Iterator[Chat]:
    svc.settings = open_access(slack_settings(slack, mode))  # one team's install: every chat sees the demo
    core = core or BotCore(svc, workers=2)
    bot = SlackBot(svc.settings, core)
    web = WebApp()
    try:
        bot.start()
        chat = Chat(slack, bot, core, mode)
        if mode == "http":
            web.mount_events(bot.events_path, bot.wsgi_app())
            host, port = web.start("127.0.0.1", 0)
            chat.events_url = f"http://{host}:{port}{bot.events_path}"
        else:
            slack.wait_connected()
        yield chat
    finally:
        bot.stop()
        core.close()
        web.stop()


@pytest.fixture(params=MODES)
def chat(request: pytest.FixtureRequest, slack: FakeSlack, svc: Services) -> Iterator[Chat]:
    with running(slack, svc, request.param) as chat:
        yield chat


# For behaviour that does not depend on how events arrive (a Socket Mode client takes ~3 s to close).
HTTP_ONLY = pytest.mark.parametrize("chat", ["http"], indirect=True)


def answers(slack: FakeSlack, channel: str, thread: str | None) -> list[Message]:
    """What the bot said in a thread, "working on it" notices aside."""
    return [m for m in slack.in_thread(channel, thread) if m.text not in WORKING.values()]


def next_answer(slack: FakeSlack, channel: str, thread: str | None, before: int) -> Message:
    return slack.wait_for(lambda: answers(slack, channel, thread)[before:])[0]


# (command, what its answer must show); run in this order, in one chat.
COMMANDS: list[tuple[str, list[str]]] = [
    ("help", ["explain #N", "subscribe"]),
    ("risks", ["Risks in acme-ml/trainer", "#4120"]),
    ("top 3", ["#4107", "#4123", "#4129"]),
    ("explain #4131", ["#4131", "block weight updates while SGLang requests are in flight"]),
    ("authors", ["hyzhang-ml: 7", "lin-qiao: 6"]),
    ("hot files", [".github/workflows/ci.yml: 5 PRs"]),
    ("report 2026-W37", ["acme-ml/trainer", "2026"]),
    ("who worked on NVFP4 last week?", ["#4107", "NVFP4"]),
    ("subscribe acme-ml/trainer", ["Subscribed to acme-ml/trainer"]),
    ("subscriptions", ["acme-ml/trainer: every Monday at 09:30"]),
    ("unsubscribe acme-ml/trainer", ["Unsubscribed from acme-ml/trainer"]),
]


@pytest.mark.parametrize("via", ["mention", "dm", "command"])
def test_every_command_reaches_its_handler_and_answers_in_the_thread(chat: Chat, via: str) -> None:
    channel = {"mention": "C0TEAM", "dm": "D0ADMIN", "command": "C0CMD"}[via]
    for text, shown in COMMANDS:
        ts = new_ts()
        thread = None if via == "command" else ts  # a slash command has no message to thread under
        before = len(answers(chat.slack, channel, thread))
        if via == "mention":
            chat.event(mention(text, channel=channel, ts=ts, user=ADMIN))
        elif via == "dm":
            chat.event(direct_message(text, channel=channel, ts=ts, user=ADMIN))
        else:
            ack = chat.command(text, channel, ADMIN)
            assert ack == WORKING["en"]
        answer = next_answer(chat.slack, channel, thread, before)
        for fragment in shown:
            assert fragment in answer.all_text, (text, fragment, answer.all_text[:500])
        if text.startswith("report"):  # no page URL: the full report follows as a file in its thread
            upload = chat.slack.wait_for(lambda: [u for u in chat.slack.uploads.values() if u.completed])[0]
            assert (upload.channel, upload.thread_ts) == (channel, thread or answer.ts)
            assert upload.content.decode().startswith("# acme-ml/trainer")
            assert upload.filename.endswith(".md")
    assert not chat.slack.responses  # everything went through chat.postMessage


@pytest.mark.parametrize(("text", "lang"), [("风险", "zh"), ("周报 in English", "en"), ("risks", "en")])
def test_a_slash_commands_ack_speaks_its_answers_language(chat: Chat, text: str, lang: str) -> None:
    before = len(answers(chat.slack, "C0CMD", None))
    assert chat.command(text, "C0CMD", ADMIN) == WORKING[lang]
    assert next_answer(chat.slack, "C0CMD", None, before).text  # answered as well


@HTTP_ONLY
def test_a_mention_in_a_thread_is_answered_in_that_thread(chat: Chat) -> None:
    parent, ts = new_ts(), new_ts()
    chat.event(mention("top 3", channel="C0TEAM", ts=ts, thread_ts=parent))
    assert "#4107" in next_answer(chat.slack, "C0TEAM", parent, 0).all_text
    assert chat.slack.in_thread("C0TEAM", ts) == []


def test_a_button_is_acked_then_answered_in_the_cards_thread(chat: Chat, svc: Services) -> None:
    report = week_report(svc)
    card_ts = chat.bot.post_card("C0TEAM", None, report, REPORT_URL, "prdigest:1:2026-W37")
    buttons = {
        e["action_id"]: e
        for b in chat.slack.in_thread("C0TEAM", None)[0].blocks
        if b["type"] == "actions"
        for e in b["elements"]
    }
    risks = buttons["prdigest_risks"]
    assert json.loads(risks["value"])["action"] == "risks"
    chat.click("prdigest_risks", risks["value"], card_ts)
    answer = next_answer(chat.slack, "C0TEAM", card_ts, 0)
    assert "#4120" in answer.all_text and "2026-09-07" in answer.all_text
    # The link button only opens the page: acked, nothing posted.
    assert buttons["prdigest_open_url"]["url"] == REPORT_URL
    chat.click("prdigest_open_url", None, card_ts)
    chat.drain()
    assert len(chat.slack.in_thread("C0TEAM", card_ts)) == 1


@HTTP_ONLY
def test_a_button_with_a_strange_value_gets_help(chat: Chat) -> None:
    card_ts = new_ts()
    chat.click("prdigest_risks", "{not json", card_ts)
    assert "explain #N" in next_answer(chat.slack, "C0TEAM", card_ts, 0).all_text


def test_the_same_event_delivered_three_times_is_answered_once(chat: Chat) -> None:
    ts, eid = new_ts(), event_id()
    event = mention("top 3", channel="C0TEAM", ts=ts)
    for retry in range(3):  # the first delivery, then Slack's retries 1 and 2
        chat.event(event, eid, retry)
    next_answer(chat.slack, "C0TEAM", ts, 0)
    chat.drain()
    assert len(chat.slack.in_thread("C0TEAM", ts)) == 1
    assert len(chat.slack.calls_of("chat.postMessage")) == 1


@HTTP_ONLY
def test_direct_messages_from_bots_edits_and_channels_are_ignored(chat: Chat) -> None:
    ignored = [
        direct_message("top 3", channel="D0X", ts=new_ts(), bot_id="B0OTHER"),
        direct_message("top 3", channel="D0X", ts=new_ts(), subtype="message_changed"),
        {**direct_message("top 3", channel="C0X", ts=new_ts()), "channel_type": "channel"},
        direct_message("top 3", channel="D0X", ts=new_ts(), user=BOT_USER),  # our own message
    ]
    for event in ignored:
        chat.event(event)
    ts = new_ts()
    chat.event(direct_message("top 3", channel="D0X", ts=ts))
    next_answer(chat.slack, "D0X", ts, 0)
    chat.drain()
    assert [m.thread_ts for m in chat.slack.messages] == [ts]


def test_a_failing_handler_gets_a_short_apology_and_the_error_is_logged(
    chat: Chat, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*_: object) -> Reply:
        raise RuntimeError("the risks handler broke")

    broken = [replace(c, handler=boom) if c.name == "risks" else c for c in commands.COMMANDS]
    monkeypatch.setattr(commands, "COMMANDS", broken)
    ts = new_ts()
    chat.event(mention("risks", channel="C0TEAM", ts=ts))
    answer = next_answer(chat.slack, "C0TEAM", ts, 0)
    assert answer.text.startswith("Sorry, something went wrong") and "Traceback" not in answer.all_text
    assert "the risks handler broke" in caplog.text and "command 'risks' failed" in caplog.text


def test_a_slow_answer_posts_working_on_it_in_the_thread_first(
    slack: FakeSlack, svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = BotCore(svc, workers=1, notice_after=0.0)
    answer = core.answer

    def slow(req: Request) -> Reply:
        slack.wait_for(lambda: slack.in_thread("C0TEAM", ts))  # the notice is out before the answer
        return answer(req)

    monkeypatch.setattr(core, "answer", slow)
    ts = new_ts()
    with running(slack, svc, "http", core) as chat:
        chat.event(mention("风险", channel="C0TEAM", ts=ts))
        slack.wait_for(lambda: len(slack.in_thread("C0TEAM", ts)) == 2)
    notice, reply = slack.in_thread("C0TEAM", ts)
    assert notice.text == WORKING["zh"] and "#4120" in reply.all_text


@HTTP_ONLY
def test_a_command_where_the_bot_is_not_a_member_is_answered_through_the_response_url(chat: Chat) -> None:
    chat.slack.fail("chat.postMessage", "not_in_channel")
    chat.command("top 3", "C0ELSEWHERE")
    name, body = chat.slack.wait_for(lambda: chat.slack.responses)[0]
    assert name == "C0ELSEWHERE" and body["response_type"] == "in_channel"
    assert "#4107" in json.dumps(body["blocks"])


# --- HTTP mode: signatures ------------------------------------------------------------------------


def test_forged_and_stale_requests_are_rejected_and_nothing_is_posted(
    slack: FakeSlack, svc: Services, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with running(slack, svc, "http") as chat:
        body = event_callback(mention("top 3", channel="C0TEAM", ts=new_ts()), event_id())
        forged = signed_event(body, secret="not-the-secret")
        stale = signed_event(body, timestamp=int(time.time()) - 301)
        tampered = signed_event(body)
        tampered = replace(tampered, body=tampered.body.replace(b"top 3", b"risks"))
        unsigned = replace(forged, headers={"Content-Type": "application/json"})
        for request in (forged, stale, tampered, unsigned):
            status, _ = post(chat.events_url, request)
            assert status == 401
        fields = slash_command(
            "top 3", channel="C0TEAM", trigger_id="t-1", response_url=slack.response_url("x")
        )
        status, _ = post(chat.events_url, signed_command(fields, secret="not-the-secret"))
        assert status == 401
        status, _ = post(chat.events_url, signed_event(body))  # the genuine one still works
        assert status == 200
        slack.wait_for(lambda: slack.messages)
        chat.drain()
    assert len(slack.messages) == 1
    assert "Invalid request signature" in caplog.text  # Bolt logs the body: its legacy token is masked
    assert "legacy-verification-token" not in caplog.text and slack.bot_token not in caplog.text


# --- start, stop, settings ---------------------------------------------------------------------------


def test_a_refused_token_stops_start_with_the_error_code_only(slack: FakeSlack, svc: Services) -> None:
    settings = slack_settings(slack, "socket", PRDIGEST_SLACK_BOT_TOKEN="xoxb-wrong-token")
    with pytest.raises(SlackError) as info:
        SlackBot(settings, None).start()
    assert info.value.code == "invalid_auth" and "xoxb" not in str(info.value)


def test_missing_secrets_are_config_errors(slack: FakeSlack, svc: Services) -> None:
    env = {"PRDIGEST_SLACK_API_URL": slack.url}
    with pytest.raises(ConfigError, match="PRDIGEST_SLACK_BOT_TOKEN"):
        SlackBot(load_settings(env=env), None)
    env["PRDIGEST_SLACK_BOT_TOKEN"] = slack.bot_token
    core = BotCore(svc)
    bot = SlackBot(load_settings(env=env), core)
    with pytest.raises(ConfigError, match="PRDIGEST_SLACK_SIGNING_SECRET"):
        bot.wsgi_app()
    with pytest.raises(ConfigError, match="PRDIGEST_SLACK_APP_TOKEN"):
        bot.start()
    bot.stop()
    core.close()


def test_strip_mention_keeps_other_mentions_and_unescapes() -> None:
    assert strip_mention(f"<@{BOT_USER}> explain #3 &amp; <@U9>", BOT_USER) == "explain #3 & <@U9>"
    assert strip_mention(f"<@{BOT_USER}|prdigest>  top 3 ", BOT_USER) == "top 3"


# --- the weekly report -------------------------------------------------------------------------------


def week_report(svc: Services) -> Report:
    ctx = Context(platform="slack", chat_id="C0TEAM", user_id=ADMIN)
    report = handle("report 2026-W37", ctx, svc).report
    assert report is not None
    return report


@pytest.fixture
def delivery(slack: FakeSlack, svc: Services) -> tuple[Callable[[], SlackBot], Report]:
    """A delivery-only bot (no core, as `prdigest deliver` makes it), and the demo week's report."""
    settings = slack_settings(slack, "socket")
    return (lambda: SlackBot(settings, None)), week_report(svc)


def test_deliver_posts_the_report_with_its_key_and_finds_it_again_after_a_crash(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report]
) -> None:
    make_bot, report = delivery
    deliverer = AdapterDeliverer(make_bot())
    ts = deliverer.deliver("C0TEAM", report, "prdigest:7:2026-W37", REPORT_URL, render_markdown(report))
    (posted,) = slack.in_thread("C0TEAM", None)
    assert posted.ts == ts and "acme-ml/trainer" in posted.all_text
    assert posted.metadata == {
        "event_type": "prdigest_report",
        "event_payload": {"key": "prdigest:7:2026-W37"},
    }
    assert slack.uploads == {}  # the page has the full report
    # The process died before recording the delivery: a new one finds the message by its key.
    for _ in range(250):  # the channel went on talking
        slack.api("chat.postMessage", {"channel": "C0TEAM", "text": "chatter"}, slack.bot_token)
    again = make_bot()
    assert again.find_delivery("C0TEAM", "prdigest:7:2026-W37") == ts
    history = slack.calls_of("conversations.history")
    assert len(history) == 2 and history[1].args["cursor"] == "200"  # paginated
    assert history[0].args["include_all_metadata"] in ("1", "true")
    assert again.find_delivery("C0TEAM", "prdigest:7:2026-W38") is None
    assert again.find_delivery("C0TEAM", "prdigest:7:2026-W37", limit=100) is None  # bounded


def test_deliver_without_a_page_uploads_the_full_report_in_the_thread(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report]
) -> None:
    make_bot, report = delivery
    markdown = render_markdown(report)
    ts = AdapterDeliverer(make_bot()).deliver("C0TEAM", report, "prdigest:7:2026-W37", None, markdown)
    (upload,) = slack.uploads.values()
    assert upload.completed and (upload.channel, upload.thread_ts) == ("C0TEAM", ts)
    assert upload.content.decode() == markdown and upload.filename == report_file_name(report)
    # The card, the file under it, then the card's thread.
    thread = ["chat.postMessage"] * len(render_slack_thread(report))
    assert [c.method for c in slack.calls] == [
        "chat.postMessage",
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
        *thread,
    ]
    assert not any(e.get("url") for b in slack.messages[0].blocks for e in b.get("elements", []))


def test_a_failed_upload_after_the_post_is_logged_and_the_ts_still_returned(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report], caplog: pytest.LogCaptureFixture
) -> None:
    make_bot, report = delivery
    slack.fail("files.completeUploadExternal", "not_in_channel")
    ts = AdapterDeliverer(make_bot()).deliver("C0TEAM", report, "k", None, render_markdown(report))
    assert ts == slack.messages[0].ts
    assert "its file is not: Slack files.upload failed: not_in_channel" in caplog.text


def test_update_report_redraws_the_posted_card(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report]
) -> None:
    make_bot, report = delivery
    deliverer = AdapterDeliverer(make_bot())
    ts = deliverer.deliver("C0TEAM", report, "k", REPORT_URL, render_markdown(report))
    renamed = report.model_copy(update={"repo": "acme-ml/renamed"})
    deliverer.update_report("C0TEAM", ts, renamed, REPORT_URL, "k")
    posted, *thread = slack.messages
    assert posted.edits == 1 and "acme-ml/renamed" in posted.all_text
    assert len(thread) == len(render_slack_thread(report)) and all(m.edits == 1 for m in thread)


def test_a_failed_post_is_a_slack_error_with_the_code_and_no_token(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report]
) -> None:
    make_bot, report = delivery
    slack.fail("chat.postMessage", "channel_not_found")
    with pytest.raises(SlackError) as info:
        AdapterDeliverer(make_bot()).deliver("C0GONE", report, "k", REPORT_URL, render_markdown(report))
    assert info.value.code == "channel_not_found" and info.value.method == "chat.postMessage"
    assert slack.bot_token not in str(info.value) and slack.messages == []


def test_a_rate_limited_post_is_retried_after_retry_after(
    slack: FakeSlack, delivery: tuple[Callable[[], SlackBot], Report]
) -> None:
    make_bot, report = delivery
    slack.ratelimit("chat.postMessage", retry_after=0)
    AdapterDeliverer(make_bot()).deliver("C0TEAM", report, "k", REPORT_URL, render_markdown(report))
    replies = len(render_slack_thread(report))
    assert len(slack.calls_of("chat.postMessage")) == 2 + replies and len(slack.messages) == 1 + replies


def test_an_event_is_acked_before_bolt_reads_it_and_answered_once_after(
    slack: FakeSlack, svc: Services
) -> None:
    with running(slack, svc, "http") as chat:
        gate = threading.Event()
        dispatch = chat.bot.app.dispatch

        def held(request: BoltRequest) -> BoltResponse:
            gate.wait(10)
            return dispatch(request)

        chat.bot.app.dispatch = held  # type: ignore[method-assign]
        ts = new_ts()
        started = time.monotonic()
        eid = event_id()
        for retry in range(3):  # acked each time, Bolt still held
            chat.event(mention("top 3", channel="C0TEAM", ts=ts), eid, retry)
        assert time.monotonic() - started < 5 and not slack.messages
        gate.set()
        next_answer(slack, "C0TEAM", ts, 0)
        chat.drain()
    assert len(slack.in_thread("C0TEAM", ts)) == 1


def test_a_burst_of_events_is_acked_and_each_answered_once(slack: FakeSlack, svc: Services) -> None:
    with running(slack, svc, "http") as chat:
        events = [(new_ts(), event_id()) for _ in range(12)]
        ready = threading.Barrier(len(events))

        def send(event: tuple[str, str]) -> None:
            ready.wait(5)
            chat.event(mention("help", channel="C0TEAM", ts=event[0]), event[1])

        with ThreadPoolExecutor(len(events)) as pool:
            list(pool.map(send, events))
        slack.wait_for(lambda: all(answers(slack, "C0TEAM", ts) for ts, _ in events))
        chat.drain()
    assert all(len(answers(slack, "C0TEAM", ts)) == 1 for ts, _ in events)
