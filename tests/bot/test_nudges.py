"""Nudges on the weekly card: with [attention] mention_reviewers, a PR waiting for review names the
people asked (its requested reviewers) as chat users on the card's attention line and in the thread.
Through the real SDKs against the local fake GitHub, Slack and Lark, wired as `prdigest deliver` wires
them (bot/platforms.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack
from lark_oapi.core.token.manager import TokenManager
from pydantic import SecretStr
from test_bot_lark import settings_for as lark_settings
from test_bot_slack import slack_settings

from prdigest import clock
from prdigest.bot.delivery import deliver_subscription
from prdigest.bot.platforms import chat_adapters
from prdigest.config import Settings
from prdigest.config.models import PersonSettings, RepoSettings
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

REPO = "acme/rocket"
NOW = datetime(2026, 9, 21, 9, 0, tzinfo=UTC)  # a Monday: the card of the week before goes out
HOSTILE = 'Fix <@U0EVIL> and <at user_id="all"></at> <!channel>'
MENTION = {"slack": "<@U0ALICE1>", "lark": '<at user_id="ou_alice1"></at>'}
CHAT = {"slack": "C0TEAM", "lark": "oc_team"}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        opened = NOW - timedelta(days=8)
        # Waiting 8 days; alice is a chat user ([[people]]), bob is nobody the chat knows.
        repo.add(
            10,
            is_open=True,
            merged_at=None,
            created_at=opened,
            title=HOSTILE,
            author="carol",
            requested=["alice", "bob"],
        )
        yield server


@pytest.fixture
def lark_fake() -> Iterator[FakeLark]:
    with FakeLark() as server:
        yield server
    TokenManager.cache.set(f"self_tenant_token:{server.app_id}", "", 0)  # the SDK's process-wide cache


def configured(base: Settings, github: FakeGitHub, mention: bool) -> Settings:
    alice = PersonSettings(github="alice", slack="U0ALICE1", lark="ou_alice1")
    return base.model_copy(update={
        "github": base.github.model_copy(update={"token": SecretStr(TOKEN), "url": github.url}),
        "repos": [RepoSettings(name=REPO)],
        "people": [alice],
        "attention": base.attention.model_copy(update={"mention_reviewers": mention}),
    })  # fmt: skip


def deliver(settings: Settings, platform: str, tmp_path: Path) -> None:
    clock.set_now(NOW)  # the weekly job's Monday: the open PRs are today's
    store = Store(tmp_path / f"{platform}.db")
    try:
        sub = save_subscription(
            store, Subscription(platform=platform, chat_id=CHAT[platform], repo=REPO, tz="UTC")
        )
        deliverers = {name: d for name, _, d in chat_adapters(settings, None, None, store)}
        outcome = deliver_subscription(settings, store, sub, deliverers, now=NOW)
        assert outcome.status == "posted" and outcome.report is not None
        assert [op.requested for op in outcome.report.attention.open_prs] == [["alice", "bob"]]
    finally:
        store.close()


def slack_texts(slack: FakeSlack) -> tuple[str, str]:
    """The card's text, and its thread's."""
    card, *thread = [m for m in slack.messages if m.channel == CHAT["slack"]]
    return card.all_text, "\n".join(m.all_text for m in thread)


@pytest.mark.parametrize("mention", [True, False])
def test_a_waiting_prs_reviewer_is_mentioned_on_slack_only_when_asked(
    slack: FakeSlack, github: FakeGitHub, tmp_path: Path, mention: bool
) -> None:
    deliver(configured(slack_settings(slack, "http"), github, mention), "slack", tmp_path)
    card, thread = slack_texts(slack)
    attention = next(line for line in card.splitlines() if "#10" in line)
    assert (MENTION["slack"] in attention) is mention
    line = next(line for line in thread.splitlines() if "#10" in line)
    assert (MENTION["slack"] in line) is mention and "bob" in line  # unmapped: a plain name
    assert "<@U0EVIL>" not in card + thread and "<!channel>" not in card + thread  # the title stays text
    assert "Fix &lt;@" in thread and "U0EVIL&gt;" in thread  # escaped, shown as written


@pytest.mark.parametrize("mention", [True, False])
def test_a_waiting_prs_reviewer_is_mentioned_on_lark_only_when_asked(
    lark_fake: FakeLark, github: FakeGitHub, tmp_path: Path, mention: bool
) -> None:
    deliver(configured(lark_settings(lark_fake, "http"), github, mention), "lark", tmp_path)
    card, *thread = [m for m in lark_fake.in_chat(CHAT["lark"]) if m.msg_type == "interactive"]
    texts = [t for m in [card, *thread] for t in markdown_of(m.content)]
    attention = next(t for t in markdown_of(card.content) if "#10" in t)
    assert (MENTION["lark"] in attention) is mention
    line = next(t for m in thread for t in markdown_of(m.content) if "#10" in t and "bob" in t)
    assert (MENTION["lark"] in line) is mention
    assert not any('<at user_id="all">' in t or '<at user_id="all"></at>' in t for t in texts)


def markdown_of(node: Any) -> list[str]:
    """Every markdown element's content in a card."""
    if isinstance(node, list):
        return [t for n in node for t in markdown_of(n)]
    if isinstance(node, dict):
        own = [node["content"]] if node.get("tag") == "markdown" else []
        return own + [t for v in node.values() for t in markdown_of(v)]
    return []


def test_config_check_says_when_the_app_may_not_find_people_by_email(
    slack: FakeSlack, tmp_path: Path, run_cli
) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(
        '[attention]\nmention_reviewers = true\n[[people]]\ngithub = "jdoe"\nemail = "jdoe@acme.example"\n'
    )
    env = {
        "PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token, "PRDIGEST_SLACK_API_URL": slack.url,
        "PRDIGEST_SLACK_MODE": "http", "PRDIGEST_SLACK_SIGNING_SECRET": slack.signing_secret,
        "GITHUB_TOKEN": "ghp_test",
    }  # fmt: skip
    allowed = run_cli("config", "check", "--config", str(config), env=env)
    assert allowed.returncode == 0 and "warning" not in allowed.stderr, allowed.stderr
    slack.scopes.discard("users:read.email")
    denied = run_cli("config", "check", "--config", str(config), env=env)
    (line,) = [line for line in denied.stderr.splitlines() if line.startswith("warning: slack:")]
    assert "users:read.email" in line and "plain names" in line
    assert denied.returncode == 0  # a nudge without a lookup still names people: a warning, not a failure
