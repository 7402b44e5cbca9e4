"""A chat platform defined only here: registered, its subscription read from a config file, its weekly
card delivered through `deliver_subscription`, and a lost week told to its chat as it writes text."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from prdigest.bot.adapters import AdapterDeliverer, ChatAdapter
from prdigest.bot.connector import refused
from prdigest.bot.delivery import Deliverer, deliver_subscription
from prdigest.bot.give_up import report_give_up
from prdigest.bot.people import mentions
from prdigest.config import load_settings
from prdigest.errors import ConfigError
from prdigest.models import Report
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import PLATFORMS, Subscription, register_platform

DEMO = FixtureSource(demo_fixture_path())
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)  # Monday 09:30 in Shanghai: the demo week just ended
CONFIG = f'[[subscriptions]]\nplatform = "pigeon"\nchat_id = "loft-1"\nrepo = "{DEMO.repo}"\nlang = "en"\n'


class PigeonRefused(Exception):
    """The loft's answer to a ring it does not know."""


class Pigeon:
    """A carrier-pigeon platform: it records every message it is asked to carry."""

    events_path = None  # it never posts events to the web app

    def __init__(self) -> None:
        self.messages: list[tuple[str, str | None, dict[str, Any], str]] = []  # (chat, thread, payload, key)
        self.asked: list[str] = []  # the emails it was asked to find a user by

    def _carry(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        self.messages.append((chat_id, thread, payload, key))
        return f"note-{len(self.messages)}"

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def post_reply(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        return self._carry(chat_id, thread, payload, key)

    def post_card(
        self, chat_id: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        return self._carry(chat_id, thread, {"card": report.repo, "prs": report.stats.merged_prs}, key)

    def update_card(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("a first delivery redraws nothing")

    def post_file(
        self, chat_id: str, thread: str | None, card_id: str, report: Report, markdown: str, key: str
    ) -> None:
        self._carry(chat_id, card_id, {"file": markdown}, key)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return None

    def thread_messages(self, report: Report, report_url: str | None) -> list[dict[str, Any]]:
        return [{"scroll": report.summary or report.repo}, {"scroll": "end"}]

    def thread_replies(self, chat_id: str, card_id: str, key: str) -> dict[str, str]:
        return {}

    def post_thread_reply(self, chat_id: str, card_id: str, message: dict[str, Any], key: str) -> str:
        return self._carry(chat_id, card_id, message, key)

    def update_thread_reply(self, chat_id: str, message_id: str, message: dict[str, Any], key: str) -> None:
        raise AssertionError("a first delivery redraws nothing")

    def member_chats(self, user_id: str, chat_ids: Collection[str]) -> set[str] | None:
        return None

    def refused(self, exc: BaseException) -> bool:
        return isinstance(exc, PigeonRefused)

    def mention(self, user: str) -> str:
        return f"~{user}~"

    def user_by_email(self, email: str) -> str | None:
        self.asked.append(email)
        return "ring-7"

    def text_payload(self, text: str) -> dict[str, Any]:
        return {"scroll": text}


@pytest.fixture
def pigeon_platform() -> Iterator[None]:
    register_platform("pigeon", "Carrier pigeon")
    yield
    PLATFORMS.pop("pigeon")


def test_an_unregistered_platform_is_refused_in_the_settings(tmp_path: Path) -> None:
    (tmp_path / "prdigest.toml").write_text(CONFIG)
    with pytest.raises(ConfigError, match=r"prdigest.toml:2: subscriptions.0.platform.*'pigeon'"):
        load_settings(tmp_path / "prdigest.toml", env={})


def test_a_registered_platform_gets_its_weekly_card_through_its_adapter(
    pigeon_platform: None, demo_store: Store, tmp_path: Path
) -> None:
    (tmp_path / "prdigest.toml").write_text(CONFIG)
    settings = load_settings(tmp_path / "prdigest.toml", env={})
    sub = save_subscription(demo_store, settings.subscriptions[0])
    pigeon = Pigeon()
    adapter: ChatAdapter = pigeon  # the contract, checked by the type checker
    deliverers: dict[str, Deliverer] = {"pigeon": AdapterDeliverer(adapter)}

    outcome = deliver_subscription(settings, demo_store, sub, deliverers, now=FIRE)

    assert outcome.status == "posted" and outcome.message_id == "note-1"
    key = outcome.key
    assert [(chat, thread, key_) for chat, thread, _, key_ in pigeon.messages] == [
        ("loft-1", None, key),  # the card
        ("loft-1", "note-1", key),  # the report as a file beside it: no page to link
        ("loft-1", "note-1", f"{key}:thread:0"),  # the thread, each reply with its own key
        ("loft-1", "note-1", f"{key}:thread:1"),
    ]
    assert pigeon.messages[0][2] == {"card": DEMO.repo, "prs": 30}
    assert pigeon.messages[1][2]["file"].startswith("#")  # the Markdown report
    assert deliver_subscription(settings, demo_store, sub, deliverers, now=FIRE).status == "already"
    assert len(pigeon.messages) == 4


def test_a_lost_week_is_told_in_the_platforms_text_and_its_refusals_are_its_own(
    pigeon_platform: None, demo_store: Store
) -> None:
    sub = save_subscription(demo_store, Subscription(platform="pigeon", chat_id="loft-2", repo=DEMO.repo))
    pigeon = Pigeon()
    report_give_up(load_settings(env={}), AdapterDeliverer(pigeon), sub, "prdigest:1:2026-W37")
    ((chat, thread, payload, key),) = pigeon.messages
    assert (chat, thread, key) == ("loft-2", None, "prdigest:1:2026-W37:given-up")
    assert set(payload) == {"scroll"} and "could not be delivered" in payload["scroll"]
    assert refused(pigeon, PigeonRefused()) and not refused(pigeon, OSError("the loft is far"))


def test_a_platform_whose_user_ids_prdigest_cannot_check_gets_no_mentions(
    pigeon_platform: None, store: Store, tmp_path: Path
) -> None:
    (tmp_path / "prdigest.toml").write_text('[[people]]\ngithub = "jdoe"\nemail = "jane@acme.example"\n')
    settings = load_settings(tmp_path / "prdigest.toml", env={})
    pigeon = Pigeon()
    assert mentions(settings, store, pigeon, "pigeon", ["jdoe", "jane@acme.example"], FIRE) == {}
    assert pigeon.asked == []  # not even asked: an id it answered could carry any markup
