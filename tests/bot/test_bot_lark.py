"""The Lark adapter: the real lark-oapi SDK against a local Lark, over the long connection and HTTP events."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from conftest import demo_services
from fakes.lark_api import FakeLark, Sent
from lark_oapi.api.im.v1 import CreateMessageRequest, CreateMessageRequestBody
from lark_oapi.core.token.manager import TokenManager

from prdigest.bot.adapters import AdapterDeliverer
from prdigest.bot.app import BotCore
from prdigest.bot.lark.adapter import (
    LarkBot,
    LarkError,
    ReportUrl,
    message_text,
    report_file_name,
)
from prdigest.bot.web import WebApp
from prdigest.config import Settings, load_settings
from prdigest.errors import ConfigError
from prdigest.handlers import Context, Reply, Services, commands, handle
from prdigest.handlers.request import Request
from prdigest.models import Report
from prdigest.render.lark import render_lark_thread
from prdigest.render.markdown import render_markdown
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.cards import card_of
from prdigest.storage.subscriptions import list_subscriptions

pytestmark = pytest.mark.e2e  # the real lark-oapi SDK over its transports against a local Lark

DEMO = FixtureSource(demo_fixture_path())
ADMIN = "ou_admin"
PAGE = "https://prdigest.example.com/reports/abc"


@dataclass
class Rig:
    """A LarkBot wired to a fake Lark through one transport; `send` delivers an event as Lark would."""

    fake: FakeLark
    bot: LarkBot
    core: BotCore
    svc: Services
    send: Callable[[dict[str, Any]], tuple[bool, dict[str, Any] | None]]
    events_url: str = ""  # mode "http": where Lark posts events


@pytest.fixture
def fake() -> Iterator[FakeLark]:
    with FakeLark() as server:
        yield server
    TokenManager.cache.set(f"self_tenant_token:{server.app_id}", "", 0)  # the SDK's process-wide cache


def settings_for(fake: FakeLark, mode: str = "ws", **env: str) -> Settings:
    return load_settings(
        env={**fake.env(), "PRDIGEST_LARK_MODE": mode, **env}, overrides={("admins", "lark"): [ADMIN]}
    )


@pytest.fixture
def store(demo_store: Store) -> Store:
    return demo_store


def services(settings: Settings, store: Store) -> Services:
    return demo_services(settings, store)


@pytest.fixture(params=["ws", "http"])
def rig(request: pytest.FixtureRequest, fake: FakeLark, store: Store) -> Iterator[Rig]:
    with running(request.param, fake, store) as started:
        yield started


@contextmanager
def running(
    mode: str, fake: FakeLark, store: Store, report_url_for: ReportUrl | None = None, **core_options: Any
) -> Iterator[Rig]:
    settings = settings_for(fake, mode)
    svc = services(settings, store)
    core = BotCore(svc, workers=2, **core_options)
    bot = LarkBot(settings, core, report_url_for=report_url_for)
    web = WebApp()
    bot.start()
    url = ""
    if mode == "ws":
        fake.ws.wait_connected()
        send = _over_long_connection(fake)
    else:
        web.mount_events(LarkBot.events_path, bot.wsgi_app())
        host, port = web.start("127.0.0.1", 0)
        url = f"http://{host}:{port}{LarkBot.events_path}"
        send = _over_http(fake, url)
    try:
        yield Rig(fake, bot, core, svc, send, url)
    finally:
        bot.stop()
        web.stop()
        core.close()


def _over_long_connection(fake: FakeLark) -> Callable[[dict[str, Any]], tuple[bool, dict[str, Any] | None]]:
    def send(payload: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
        reply = fake.push(payload)
        return reply.code == 200, reply.data

    return send


def _over_http(fake: FakeLark, url: str) -> Callable[[dict[str, Any]], tuple[bool, dict[str, Any] | None]]:
    def send(payload: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
        status, body = fake.post_event(url, payload)
        return status == 200, body

    return send


def ask(rig: Rig, text: str, user: str = "ou_user", **event: Any) -> Sent:
    """Send a message (mentioning the bot, unless told) and wait for its answer in the thread."""
    payload = rig.fake.message_event(text, user=user, **event)
    ok, _ = rig.send(payload)
    assert ok
    answer = rig.fake.wait_for(lambda m: m.uuid == f"{payload['header']['event_id']}:answer")
    assert answer.reply_to == payload["event"]["message"]["message_id"] and answer.reply_in_thread
    return answer


def gate_answers(core: BotCore) -> threading.Event:
    """Hold every answer until the returned event is set: the work is slow."""
    gate, answer = threading.Event(), core.answer

    def slow(req: Request) -> Reply:
        gate.wait(10)
        return answer(req)

    core.answer = slow  # type: ignore[method-assign]
    return gate


def weekly_report(svc: Services) -> Report:
    reply = handle("report 2026-W37", Context(platform="lark", chat_id="oc_group", user_id=ADMIN), svc)
    assert reply.report is not None
    return reply.report


def buttons(content: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("tag") == "button":
                found.append(node)
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(content)
    return found


def callback_value(card: dict[str, Any], action: str) -> dict[str, Any]:
    return next(
        b["behaviors"][0]["value"]
        for b in buttons(card)
        if b["behaviors"][0]["type"] == "callback" and b["behaviors"][0]["value"]["action"] == action
    )


# --- every command, through both transports --------------------------------------


def test_every_command_reaches_its_handler_and_its_answer_the_chat(rig: Rig) -> None:
    help_ = ask(rig, "help")
    assert (
        help_.msg_type == "interactive"
        and f"{len(commands.COMMANDS)}. **help** list the commands" in help_.text
    )
    risks = ask(rig, "risks 2026-W37")
    assert (
        risks.content["header"]["title"]["content"] == "Risks in acme-ml/trainer (2026-09-07 to 2026-09-13)"
    )
    assert "security&#45;sensitive change &#40;PRs&#58; 1&#41;** #4120" in risks.text
    top = ask(rig, "top 3 2026-W37")
    assert "1. [#4107](https://github.com/acme-ml/trainer/pull/4107)" in top.text
    explain = ask(rig, "explain #4131")
    assert explain.content["header"]["title"]["content"].startswith("#4131 fix(sync)")
    authors = ask(rig, "authors 2026-W37")
    assert "- hyzhang-ml: 7 (23%)" in authors.content["text"]
    hot = ask(rig, "hot files 2026-W37")
    assert "- .github/workflows/ci.yml: 5 PRs (#4105 #4111 #4116 #4121 #4126)" in hot.content["text"]
    report = ask(rig, "report 2026-W37")
    assert report.msg_type == "interactive" and report.content["schema"] == "2.0"
    assert report.content["header"]["title"]["content"].startswith("acme-ml/trainer")
    question = "which PRs touched the rollout engine?"
    cited = handle(question, Context(platform="lark", chat_id="oc_group", user_id="ou_user"), rig.svc).cited
    asked = ask(rig, f"ask {question}")
    assert cited and all(f"#{n}" in asked.content["text"] for n in cited)
    refused = ask(rig, "subscribe acme-ml/trainer fri 17:00")
    assert refused.content["text"].startswith("Sorry, only this bot's admins")
    assert list_subscriptions(rig.svc.store) == []
    ask(rig, "subscribe acme-ml/trainer fri 17:00", user=ADMIN)
    (sub,) = list_subscriptions(rig.svc.store, "lark", "oc_group")
    assert (sub.day, sub.time, sub.created_by) == ("fri", "17:00", ADMIN)
    listing = ask(rig, "subscriptions")
    assert "acme-ml/trainer: every Friday at 17:00" in listing.content["text"]
    assert (
        ask(rig, "unsubscribe acme-ml/trainer", user=ADMIN).content["text"]
        == "Unsubscribed from acme-ml/trainer."
    )
    assert list_subscriptions(rig.svc.store) == []


def test_the_report_without_a_page_follows_as_a_file_in_the_thread(rig: Rig) -> None:
    card = ask(rig, "report 2026-W37")
    file = rig.fake.wait_for(lambda m: m.msg_type == "file")
    assert file.reply_to == card.reply_to and file.reply_in_thread
    (upload,) = rig.fake.files
    assert file.content == {"file_key": upload.file_key}
    assert (upload.file_name, upload.file_type) == ("acme-ml-trainer-2026-W37.md", "stream")
    assert upload.data.decode().startswith("# acme-ml/trainer")


def test_a_report_with_a_page_links_it_instead_of_a_file(fake: FakeLark, store: Store) -> None:
    def page(report: Report, chat_id: str, viewer: str) -> str:
        return f"{PAGE}?repo={report.repo}&chat={chat_id}&for={viewer}"

    with running("http", fake, store, report_url_for=page) as rig:
        card = ask(rig, "report 2026-W37")
        rig.core.close()
    links = [b["behaviors"][0] for b in buttons(card.content) if b["behaviors"][0]["type"] == "open_url"]
    assert links == [
        {"type": "open_url", "default_url": f"{PAGE}?repo=acme-ml/trainer&chat=oc_group&for=chat"}
    ]
    assert fake.files == [] and len(fake.messages) == 1


# --- which messages are for the bot ---------------------------------------------


def test_only_mentions_of_the_bot_and_direct_messages_are_answered(rig: Rig) -> None:
    fake = rig.fake
    for ignored in (
        fake.message_event("top 3 2026-W37", mention=None),  # a group message for someone else
        fake.message_event("top 3 2026-W37", mention="ou_colleague"),
        fake.message_event("top 3 2026-W37", sender_type="app"),  # another bot
    ):
        assert rig.send(ignored)[0]
    direct = ask(rig, "top 2 2026-W37", mention=None, chat_type="p2p", chat_id="oc_p2p")
    assert direct.chat_id == "oc_p2p" and "#4107" in direct.text
    rig.core.close()  # every queued answer is out
    assert len(fake.messages) == 1


def test_a_rich_text_message_is_read_as_plain_text(rig: Rig) -> None:
    paragraphs = [[{"tag": "text", "text": " explain "}, {"tag": "a", "text": "#4131", "href": "https://x"}]]
    answer = ask(rig, "", post=paragraphs)
    assert "#4131" in answer.text and "sglang" in answer.text


def test_message_text_of_each_kind() -> None:
    assert message_text("text", json.dumps({"text": "@_user_1 risks"})) == "@_user_1 risks"
    first = [{"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": " top"}]
    second = [{"tag": "img", "image_key": "k"}, {"tag": "md", "text": "3"}]
    post = {"zh_cn": {"title": "Q", "content": [first, second]}}
    assert message_text("post", json.dumps(post)) == "Q\n@_user_1 top\n3"
    assert message_text("image", json.dumps({"image_key": "k"})) is None
    assert message_text("text", "not json") is None


# --- acknowledgement, de-duplication, errors ------------------------------------


def test_the_same_event_three_times_gets_one_reply(rig: Rig) -> None:
    payload = rig.fake.message_event("top 3 2026-W37")
    for _ in range(3):
        assert rig.send(payload)[0]
    rig.fake.wait_messages(1)
    rig.core.close()
    assert len(rig.fake.messages) == 1


def test_a_slow_answer_gets_a_notice_first(fake: FakeLark, store: Store) -> None:
    with running("ws", fake, store, notice_after=0.0) as rig:
        gate = gate_answers(rig.core)
        rig.send(fake.message_event("风险 2026-W37"))
        (notice,) = fake.wait_messages(1)
        gate.set()
        answer = fake.wait_messages(2)[1]
        assert notice.content == {"text": "正在处理，请稍候……"} and notice.reply_to == answer.reply_to
        assert "#4120" in answer.text and "#4134" not in answer.text


def test_a_follow_up_in_a_report_cards_thread_is_about_that_cards_week(rig: Rig) -> None:
    # The chat's "last week" is W37; the card is of W36 (a week the cache holds no PR of).
    first = rig.fake.message_event("report 2026-W36")
    assert rig.send(first)[0]
    rig.fake.wait_for(lambda m: m.uuid == f"{first['header']['event_id']}:answer")
    thread = first["event"]["message"]["message_id"]
    # The card is remembered once Lark has answered its post: a person's follow-up comes later than that.
    deadline = time.monotonic() + 5
    while card_of(rig.svc.store, "lark", "oc_group", thread) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    follow = ask(rig, "risks", root_id=thread)
    assert "from 2026-08-31 to 2026-09-06" in follow.text
    outside = ask(rig, "risks")
    assert "2026-09-07" in outside.text


def test_a_handler_that_raises_gets_an_apology_and_the_error_is_logged(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("the cache is on fire")

    broken = [dataclasses.replace(c, handler=boom) if c.name == "top" else c for c in commands.COMMANDS]
    monkeypatch.setattr(commands, "COMMANDS", broken)
    answer = ask(rig, "top 3")
    assert answer.content["text"].startswith("Sorry, something went wrong")
    assert "Traceback" not in answer.text
    assert "the cache is on fire" in caplog.text and "command 'top' failed" in caplog.text


# --- buttons ----------------------------------------------------------------------


def test_a_button_gets_a_toast_at_once_then_its_answer_in_the_thread(rig: Rig) -> None:
    fake = rig.fake
    card_id = rig.bot.post_card("oc_group", None, weekly_report(rig.svc), PAGE, "prdigest:1:2026-W37")
    card = fake.messages[0].content
    gate = gate_answers(rig.core)
    click = fake.card_action_event(callback_value(card, "risks"), message_id=card_id)
    started = time.monotonic()
    ok, answer = rig.send(click)
    assert ok and time.monotonic() - started < 3 and not gate.is_set()  # acknowledged before the work
    assert answer is not None and answer["toast"]["type"] == "info" and "i18n" in answer["toast"]
    assert rig.send(click)[0]  # Lark retries a callback: still one answer
    gate.set()
    risks = fake.wait_messages(2)[1]
    assert risks.reply_to == card_id and risks.reply_in_thread and "#4120" in risks.text
    rig.core.close()
    assert len(fake.messages) == 2


def test_another_week_posts_a_new_report_card(rig: Rig) -> None:
    fake = rig.fake
    card_id = rig.bot.post_card("oc_group", None, weekly_report(rig.svc), PAGE, "prdigest:1:2026-W37")
    click = fake.card_action_event(
        callback_value(fake.messages[0].content, "another_week"), message_id=card_id
    )
    ok, answer = rig.send(click)
    assert ok and answer is not None and "toast" in answer
    new = fake.wait_messages(2)[1]
    assert new.reply_to is None and new.chat_id == "oc_group" and new.msg_type == "interactive"
    assert "2026-08-31" in new.text and "2026-09-06" in new.text  # the week before


# --- HTTP events: the checks ------------------------------------------------------


@pytest.fixture
def http_rig(fake: FakeLark, store: Store) -> Iterator[Rig]:
    with running("http", fake, store) as started:
        yield started


def test_url_verification_is_answered(http_rig: Rig) -> None:
    fake, url = http_rig.fake, http_rig.events_url
    assert fake.post_event(url, fake.url_verification("chal-123")) == (200, {"challenge": "chal-123"})
    status, _ = fake.post_event(url, fake.url_verification("chal-123"), token="wrong-token")
    assert status != 200


@pytest.mark.parametrize(
    "spoil",
    [{"signature": "0" * 64}, {"token": "wrong-token"}, {"encrypt_with": "another-key"}],
    ids=["forged signature", "wrong verification token", "undecryptable body"],
)
def test_forged_events_are_rejected_and_nothing_is_posted(http_rig: Rig, spoil: dict[str, str]) -> None:
    fake = http_rig.fake
    status, _ = fake.post_event(http_rig.events_url, fake.message_event("top 3 2026-W37"), **spoil)
    assert status != 200
    http_rig.core.close()
    assert fake.messages == []


def test_http_mode_needs_a_verification_token(fake: FakeLark, store: Store) -> None:
    settings = settings_for(fake, "http", PRDIGEST_LARK_VERIFICATION_TOKEN="")
    with pytest.raises(ConfigError, match="VERIFICATION_TOKEN"):
        LarkBot(settings, BotCore(services(settings, store)))


# --- the long connection ----------------------------------------------------------


def test_the_long_connection_comes_back_after_a_drop_and_stops_cleanly(fake: FakeLark, store: Store) -> None:
    with running("ws", fake, store) as rig:
        fake.ws.drop()
        fake.ws.wait_connected(accepted=2)
        assert "#4107" in ask(rig, "top 1 2026-W37").text
        threads = [t for t in threading.enumerate() if t.name == "prdigest-lark-ws"]
        assert threads and all(t.daemon for t in threads)
    fake.ws.wait_closed()
    assert not any(t.name == "prdigest-lark-ws" for t in threading.enumerate())


# --- the weekly delivery ----------------------------------------------------------


@pytest.fixture
def sender(fake: FakeLark, store: Store) -> Iterator[tuple[LarkBot, Services]]:
    settings = settings_for(fake)
    svc = services(settings, store)
    core = BotCore(svc)
    yield LarkBot(settings, core), svc  # not started: delivery needs no events
    core.close()


def test_deliver_posts_once_per_key_and_the_report_as_a_file_without_a_page(
    fake: FakeLark, sender: tuple[LarkBot, Services]
) -> None:
    bot, svc = sender
    report = weekly_report(svc)
    markdown = render_markdown(report)
    first = AdapterDeliverer(bot).deliver("oc_team", report, "prdigest:7:2026-W37", None, markdown)
    again = AdapterDeliverer(bot).deliver("oc_team", report, "prdigest:7:2026-W37", None, markdown)
    assert first == again
    card, file, *thread = fake.in_chat("oc_team")  # once each: the uuids dedupe the second run
    assert (card.message_id, card.uuid, card.msg_type) == (first, "prdigest:7:2026-W37", "interactive")
    assert (file.msg_type, file.uuid) == ("file", "prdigest:7:2026-W37:file")
    assert len(thread) == len(render_lark_thread(report)) and all(m.reply_to == first for m in thread)
    upload = next(f for f in fake.files if f.file_key == file.content["file_key"])
    assert upload.file_name == "acme-ml-trainer-2026-W37.md" and upload.data == markdown.encode()
    assert not any(b["behaviors"][0]["type"] == "open_url" for b in buttons(card.content))


def test_deliver_with_a_page_links_it_and_sends_no_file(
    fake: FakeLark, sender: tuple[LarkBot, Services]
) -> None:
    bot, svc = sender
    AdapterDeliverer(bot).deliver("oc_team", weekly_report(svc), "prdigest:8:2026-W37", PAGE, "# md")
    card, *thread = fake.in_chat("oc_team")
    assert thread and all(m.reply_in_thread for m in thread)
    links = [b["behaviors"][0] for b in buttons(card.content) if b["behaviors"][0]["type"] == "open_url"]
    assert links == [{"type": "open_url", "default_url": PAGE}] and fake.files == []


def test_update_report_patches_the_card(fake: FakeLark, sender: tuple[LarkBot, Services]) -> None:
    bot, svc = sender
    report = weekly_report(svc)
    deliverer = AdapterDeliverer(bot)
    message_id = deliverer.deliver("oc_team", report, "prdigest:9:2026-W37", None, "# md")
    deliverer.update_report("oc_team", message_id, report, PAGE, "prdigest:9:2026-W37")
    card = fake.in_chat("oc_team")[0]
    (update,) = card.updates
    assert update["header"] == card.content["header"] and PAGE in json.dumps(update)
    assert "prdigest:9:2026-W37" in json.dumps(update)  # the key line stays: the card is still findable


def test_a_refused_send_is_a_lark_error(fake: FakeLark, sender: tuple[LarkBot, Services]) -> None:
    bot, svc = sender
    fake.fail_next("/im/v1/messages", 230002, "Bot/User can NOT be out of the chat.")
    with pytest.raises(LarkError) as info:
        AdapterDeliverer(bot).deliver(
            "oc_elsewhere", weekly_report(svc), "prdigest:10:2026-W37", PAGE, "# md"
        )
    assert info.value.code == 230002 and "out of the chat" in str(info.value)
    assert fake.messages == []


def test_wrong_credentials_are_a_lark_error_without_the_secret(
    fake: FakeLark, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-secret-value-42"
    settings = settings_for(fake, PRDIGEST_LARK_APP_SECRET=wrong)
    bot = LarkBot(settings, BotCore(services(settings, store)))
    with pytest.raises(LarkError) as info:
        bot.start()
    assert info.value.code == 10014 and wrong not in str(info.value) and wrong not in caplog.text
    assert fake.ws.accepted == 0


def test_the_fake_refuses_cards_over_30_kb_as_lark_does(
    fake: FakeLark, sender: tuple[LarkBot, Services]
) -> None:
    bot, _ = sender
    huge = {"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": "x" * 40_000}]}}
    body = (
        CreateMessageRequestBody.builder()
        .receive_id("oc_team")
        .msg_type("interactive")
        .content(json.dumps(huge))
        .uuid("big-1")
        .build()
    )
    request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
    assert bot.client.im.v1.message.create(request).code == 230025 and fake.messages == []


def test_report_file_names(sender: tuple[LarkBot, Services]) -> None:
    report = weekly_report(sender[1])
    assert report_file_name(report) == "acme-ml-trainer-2026-W37.md"
    days = report.window.model_copy(update={"until": report.window.until - timedelta(days=2)})
    assert (
        report_file_name(report.model_copy(update={"window": days}))
        == "acme-ml-trainer-2026-09-07_2026-09-11.md"
    )
