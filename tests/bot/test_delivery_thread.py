"""The weekly card's thread, exactly once: the card, then each thread reply in the card's thread with a
key of its own; a reply that fails leaves the delivery to the next run, which finds the card and
posts only the replies the thread lacks; ``--force`` redraws card and replies in place.

Real slack_sdk and lark-oapi clients talk to the fake Slack and Lark (127.0.0.1, port 0). Lark's
takeovers run two hours after the fault, past its one-hour uuid window, so that only the listing of
the card's thread keeps a reply from being posted twice.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack
from rich.console import Console

from prdigest.bot import retries
from prdigest.bot.adapters import AdapterDeliverer, thread_key
from prdigest.bot.delivery import ConsoleDeliverer, Outcome, deliver_subscription, delivery_key
from prdigest.bot.lark import client as lark_client
from prdigest.bot.lark.adapter import LarkBot
from prdigest.bot.slack import client as slack_client
from prdigest.bot.slack.adapter import SlackBot
from prdigest.config import Settings, load_settings
from prdigest.errors import PrdigestError
from prdigest.models import Report
from prdigest.periods import last_complete_week
from prdigest.render.lark import render_lark_thread
from prdigest.render.slack import render_slack_thread
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.deliveries import get_delivery
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

DEMO = FixtureSource(demo_fixture_path())
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)  # Monday 09:30 in Shanghai: the demo week just ended
HOURS_2 = 2 * 3600


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short client timeouts and backoff, so that every fault plays out at once."""
    monkeypatch.setattr(slack_client, "TIMEOUT_S", 1)
    monkeypatch.setattr(lark_client, "HTTP_TIMEOUT_S", 1)
    monkeypatch.setattr(retries, "BASE_S", 0.01)


@dataclass
class Chat:
    """One platform's fake, seen the same way for both: its cards, a card's thread and the faults."""

    name: str
    chat_id: str
    deliverer: AdapterDeliverer
    cards: Callable[[], list[str]]  # ids of the report cards at the top level
    thread: Callable[[str], list[tuple[str, str, int]]]  # (key, id, edits) of a card's replies, in order
    fail_second_reply: Callable[[], None]
    later: Callable[[], None]  # the next run comes this much later (Lark: past the uuid window)
    render_thread: Callable[[Report], list[dict[str, Any]]]
    posts: Callable[[], int]  # messages sent so far (calls that post)
    drop: Callable[[str], None]  # a thread reply someone deleted


def slack_chat(slack: FakeSlack) -> Chat:
    settings = load_settings(
        env={"PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token, "PRDIGEST_SLACK_API_URL": slack.url}
    )
    channel = "C0THREAD"

    def thread(card: str) -> list[tuple[str, str, int]]:
        return [
            (m.metadata["event_payload"]["key"], m.ts, m.edits)
            for m in slack.in_thread(channel, card)
            if m.metadata
        ]

    def drop(ts: str) -> None:
        slack.messages[:] = [m for m in slack.messages if m.ts != ts]

    return Chat(
        name="slack",
        chat_id=channel,
        deliverer=AdapterDeliverer(SlackBot(settings, None)),
        cards=lambda: [m.ts for m in slack.in_thread(channel, None) if m.metadata],
        thread=thread,
        # The card is the first post, the first reply the second: the third call fails (a 500: nothing
        # done), and so does each try of it in the run (looked for, not found, posted again).
        fail_second_reply=lambda: slack.server_error(
            "chat.postMessage", 500, times=retries.ATTEMPTS, after=2
        ),
        later=lambda: None,
        render_thread=render_slack_thread,
        posts=lambda: len(slack.calls_of("chat.postMessage")),
        drop=drop,
    )


def lark_chat(lark: FakeLark) -> Chat:
    settings = load_settings(env=lark.env())
    chat_id = "oc_thread"

    def thread(card: str) -> list[tuple[str, str, int]]:
        replies = [m for m in lark.in_chat(chat_id) if m.reply_to == card]
        assert all(m.reply_in_thread for m in replies), "a thread reply went to the chat"
        return [(m.uuid or "", m.message_id, len(m.updates)) for m in replies]

    def drop(message_id: str) -> None:
        lark.messages[:] = [m for m in lark.messages if m.message_id != message_id]

    return Chat(
        name="lark",
        chat_id=chat_id,
        deliverer=AdapterDeliverer(LarkBot(settings, None)),
        cards=lambda: [
            m.message_id for m in lark.in_chat(chat_id) if m.msg_type == "interactive" and not m.reply_to
        ],
        thread=thread,
        # The first reply goes through; the second fails every attempt the client makes.
        fail_second_reply=lambda: lark.http_error("/reply", 500, times=retries.ATTEMPTS, after=1),
        later=lambda: lark.advance(HOURS_2),
        render_thread=render_lark_thread,
        posts=lambda: len(lark.messages),
        drop=drop,
    )


@pytest.fixture(params=["slack", "lark"])
def chat(request: pytest.FixtureRequest) -> Iterator[Chat]:
    fake = request.getfixturevalue(request.param)
    yield slack_chat(fake) if request.param == "slack" else lark_chat(fake)


@pytest.fixture
def sub(demo_store: Store, chat: Chat) -> Subscription:
    return save_subscription(
        demo_store, Subscription(platform=chat.name, chat_id=chat.chat_id, repo=DEMO.repo)
    )


def settings() -> Settings:
    return load_settings(env={})


def run(store: Store, sub: Subscription, chat: Chat, *, force: bool = False) -> Outcome:
    return deliver_subscription(settings(), store, sub, {chat.name: chat.deliverer}, now=FIRE, force=force)


def keys(key: str, n: int) -> list[str]:
    return [thread_key(key, i) for i in range(n)]


def test_a_weekly_delivery_posts_the_card_then_its_thread_in_the_cards_thread(
    demo_store: Store, sub: Subscription, chat: Chat
) -> None:
    outcome = run(demo_store, sub, chat)
    assert outcome.status == "posted" and outcome.report is not None
    replies = len(chat.render_thread(outcome.report))
    assert replies >= 3  # key PRs, risks, the details
    assert chat.cards() == [outcome.message_id]
    key = delivery_key(sub, last_complete_week(FIRE, sub.tz))
    assert [k for k, _, _ in chat.thread(outcome.message_id)] == keys(key, replies)


def test_a_failed_reply_is_completed_by_the_next_run_without_a_second_card_or_reply(
    demo_store: Store, sub: Subscription, chat: Chat
) -> None:
    key = delivery_key(sub, last_complete_week(FIRE, sub.tz))
    chat.fail_second_reply()
    with pytest.raises(PrdigestError):
        run(demo_store, sub, chat)
    row = get_delivery(demo_store, key)
    assert row is not None and row.status == "claimed", "uncertain: the card is out, the thread is not"
    (card,) = chat.cards()
    assert [k for k, _, _ in chat.thread(card)] == keys(key, 1)
    posts = chat.posts()
    chat.later()
    outcome = run(demo_store, sub, chat)
    assert outcome.status == "recovered" and outcome.message_id == card and outcome.report is not None
    replies = len(chat.render_thread(outcome.report))
    assert chat.cards() == [card]  # the card: zero times more
    assert [k for k, _, _ in chat.thread(card)] == keys(key, replies)  # each key once, in order
    assert chat.posts() - posts == replies - 1  # exactly the missing replies
    assert run(demo_store, sub, chat).status == "already" and chat.posts() - posts == replies - 1


def test_force_redraws_the_card_and_its_replies_in_place_and_posts_the_missing_one(
    demo_store: Store, sub: Subscription, chat: Chat
) -> None:
    first = run(demo_store, sub, chat)
    card = first.message_id
    *kept, (lost_key, lost_id, _) = chat.thread(card)
    chat.drop(lost_id)  # someone deleted the last reply
    chat.later()
    posts = chat.posts()
    forced = run(demo_store, sub, chat, force=True)
    assert forced.status == "updated" and forced.message_id == card
    assert chat.cards() == [card] and chat.posts() - posts == 1  # the lost reply alone
    after = chat.thread(card)
    assert [(k, i, 1) for k, i, _ in kept] == after[:-1]  # each kept reply redrawn once, in place
    assert after[-1][0] == lost_key and after[-1][1] != lost_id


def test_a_lark_reply_repeated_with_its_uuid_within_the_hour_is_the_same_message(lark: FakeLark) -> None:
    out = lark_client.LarkOutbound(lark.app_id, lark.app_secret, lark.url)
    card = out.create("oc_thread", {"msg_type": "text", "content": {"text": "card"}}, "k")
    header = {"title": {"tag": "plain_text", "content": "Key PRs"}}
    reply = lark_client.keyed({"schema": "2.0", "header": header, "body": {"elements": []}}, "k:thread:0")
    first = out.reply(card, reply, "k:thread:0")
    assert out.reply(card, reply, "k:thread:0") == first and len(lark.messages) == 2
    lark.advance(HOURS_2)  # past Lark's window the uuid no longer dedupes: the thread is listed instead
    assert out.thread_replies(card, "k") == {"k:thread:0": first}
    assert out.thread_replies(card, "k:thread") == {}  # another delivery's key is not this one's


def test_the_console_prints_the_thread_after_the_card(demo_store: Store) -> None:
    sub = save_subscription(demo_store, Subscription(platform="console", chat_id="console", repo=DEMO.repo))
    printed = io.StringIO()
    console = Console(file=printed, width=120, color_system=None)
    outcome = deliver_subscription(
        settings(), demo_store, sub, {"console": ConsoleDeliverer(console)}, now=FIRE
    )
    assert outcome.report is not None
    text = printed.getvalue()
    replies = len(render_slack_thread(outcome.report))
    card_at = text.index(outcome.key)
    titles = [text.index(f"{outcome.key} · {i}/{replies}") for i in range(1, replies + 1)]
    assert card_at < titles[0] and titles == sorted(titles)
    heading = render_slack_thread(outcome.report)[0]["blocks"][0]["text"]["text"]
    assert heading in text[titles[0] :] and "<https://" not in text  # the thread's text, links as labels
