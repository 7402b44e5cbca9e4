"""The adapters' shared core: de-duplication across restarts, buttons as commands, work after the ack."""

from __future__ import annotations

import threading
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import demo_services

from prdigest import clock
from prdigest.bot.app import BotCore, Inbound, action_intent, claim_event
from prdigest.bot.web import WebApp
from prdigest.config import load_settings
from prdigest.handlers import Reply, Services
from prdigest.handlers.request import Request
from prdigest.models import Window
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.events import answered

DEMO = FixtureSource(demo_fixture_path())


@pytest.fixture
def svc(demo_store: Store) -> Services:
    return demo_services(load_settings(env={}), demo_store)


def test_an_event_is_claimed_once_even_after_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "events.db")
    assert claim_event(store, "slack", "Ev1", "w1") == 1
    assert claim_event(store, "slack", "Ev1", "w1") is None
    assert claim_event(store, "lark", "Ev1", "w1") == 1  # another platform's id space
    assert answered(store, "slack", "Ev1", 1)
    store.close()
    again = Store(tmp_path / "events.db")
    assert claim_event(again, "slack", "Ev1", "w2") is None
    again.close()


def test_an_event_whose_worker_died_unanswered_is_taken_over_after_its_lease(any_store: Store) -> None:
    """On both dialects: a replica that claimed an event and died leaves it to the platform's retry."""
    lease = timedelta(minutes=4)
    start = datetime(2026, 9, 14, 9, 0, tzinfo=UTC)
    clock.set_now(start)
    assert claim_event(any_store, "slack", "Ev9", "replica-a", lease) == 1
    clock.set_now(start + lease - timedelta(seconds=1))  # replica-a may still be answering
    assert claim_event(any_store, "slack", "Ev9", "replica-b", lease) is None
    clock.set_now(start + lease + timedelta(seconds=1))
    assert claim_event(any_store, "slack", "Ev9", "replica-b", lease) == 2
    assert not answered(any_store, "slack", "Ev9", 1)  # replica-a, back too late, is refused
    assert answered(any_store, "slack", "Ev9", 2)
    clock.set_now(start + 10 * lease)  # answered: never again, however late the retry
    assert claim_event(any_store, "slack", "Ev9", "replica-c", lease) is None


def test_buttons_are_intents_with_their_cards_window_timezone_and_language() -> None:
    ref = {"repo": "acme-ml/trainer", "since": "2026-09-07", "until": "2026-09-13", "tz": "America/New_York",
           "lang": "zh"}  # fmt: skip
    risks = action_intent({**ref, "action": "risks"})
    assert (risks.command, risks.repo, risks.lang) == ("risks", "acme-ml/trainer", "zh")
    assert risks.window == Window(since="2026-09-07", until="2026-09-13", tz="America/New_York")
    top = action_intent({**ref, "action": "key_prs"})
    assert (top.command, top.n, top.window) == ("top", 10, risks.window)
    explain = action_intent({**ref, "action": "explain", "number": 4124})
    assert (explain.command, explain.pr, explain.lang) == ("explain", 4124, "zh")
    before = action_intent({**ref, "action": "another_week"})
    assert before.command == "report"
    assert before.window == Window(since="2026-08-31", until="2026-09-06", tz="America/New_York")
    # A card posted before buttons carried a language: English, as it was.
    assert action_intent({k: v for k, v in {**ref, "action": "risks"}.items() if k != "lang"}).lang == "en"


def test_a_button_on_a_chinese_card_answers_in_chinese_without_a_subscription(svc: Services) -> None:
    core = BotCore(svc, workers=1)
    value = {"repo": "acme-ml/trainer", "since": "2026-09-07", "until": "2026-09-13", "tz": "Asia/Shanghai",
             "lang": "zh", "action": "risks"}  # fmt: skip
    button = Inbound(platform="lark", event_id="b-1", chat_id="oc_9", user_id="ou_1", action=value)
    reply = core.answer(core.request(button))
    core.close()
    assert reply.kind == "risks" and reply.lang == "zh" and "风险" in reply.text


def test_submit_answers_once_after_the_ack(svc: Services) -> None:
    core = BotCore(svc, workers=2)
    replies: list[Reply] = []
    done = threading.Event()

    def respond(reply: Reply) -> None:
        replies.append(reply)
        done.set()

    event = Inbound(platform="lark", event_id="e-1", chat_id="oc_1", user_id="ou_1", text="top 3 2026-W37")
    futures = [core.submit(event, respond) for _ in range(3)]
    assert futures[1] is None and futures[2] is None  # the same event delivered three times
    assert done.wait(10)
    core.close()
    assert len(replies) == 1 and [p.number for p in replies[0].prs][:1] == [4107]


@pytest.mark.parametrize(
    ("text", "notice", "kind", "lang"),
    [
        ("风险 2026-W37", "正在处理，请稍候……", "risks", "zh"),
        # Asked in Chinese for an English answer: the notice speaks the answer's language too.
        ("周报 2026-W37 in English", "Working on it…", "report", "en"),
    ],
)
def test_a_slow_answer_sends_a_notice_first_in_the_answers_language(
    svc: Services, text: str, notice: str, kind: str, lang: str
) -> None:
    core = BotCore(svc, workers=1, notice_after=0.0)
    gate = threading.Event()
    notices: list[str] = []
    replies: list[Reply] = []
    original = core.answer

    def slow(req: Request) -> Reply:
        gate.wait(5)
        return original(req)

    core.answer = slow  # type: ignore[method-assign]
    event = Inbound(platform="slack", event_id="e-2", chat_id="C1", user_id="U1", text=text)
    future = core.submit(event, replies.append, notices.append)
    for _ in range(100):
        if notices:
            break
        threading.Event().wait(0.02)
    gate.set()
    assert future is not None
    future.result(10)
    core.close()
    assert notices == [notice] and replies[0].kind == kind and replies[0].lang == lang


def test_a_failing_post_becomes_an_apology(svc: Services, caplog: pytest.LogCaptureFixture) -> None:
    core = BotCore(svc, workers=1)
    posted: list[Reply] = []

    def respond(reply: Reply) -> None:
        if reply.kind != "error":
            raise RuntimeError("platform said no")
        posted.append(reply)

    future = core.submit(
        Inbound(platform="lark", event_id="e-3", chat_id="c", user_id="u", text="help"), respond
    )
    assert future is not None
    future.result(10)
    core.close()
    assert posted and "Sorry" in posted[0].text
    assert "could not post the answer" in caplog.text


def test_web_app_serves_health_and_mounted_routes() -> None:
    web = WebApp()
    web.mount("/echo", lambda environ, start: (start("200 OK", []), [environ["PATH_INFO"].encode()])[1])
    host, port = web.start("127.0.0.1", 0)
    try:
        base = f"http://{host}:{port}"
        assert urllib.request.urlopen(f"{base}/healthz", timeout=5).read() == b"ok\n"
        assert urllib.request.urlopen(f"{base}/echo/x", timeout=5).read() == b"/echo/x"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{base}/nope", timeout=5)
        assert info.value.code == 404
    finally:
        web.stop()


def test_a_button_in_a_chat_first_seen_as_a_direct_message_is_a_direct_messages(svc: Services) -> None:
    # A Lark button's event does not say whether its chat is a direct message; the chat's message did.
    core = BotCore(svc)
    button = Inbound(platform="lark", event_id="Eb", chat_id="oc_p2p", user_id="ou_a", action={"action": "x"})
    try:
        assert core.context(button).direct is False
        done = core.submit(
            Inbound(
                platform="lark", event_id="Em", chat_id="oc_p2p", user_id="ou_a", text="help", direct=True
            ),
            lambda reply: None,
        )
        assert done is not None
        done.result(10)
        assert core.context(button).direct is True
        other = button.model_copy(update={"chat_id": "oc_group"})
        assert core.context(other).direct is False
    finally:
        core.close()
