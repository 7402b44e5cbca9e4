"""What people write in a team chat, read as they meant it: the admin commands said in sentences, a rule
silenced in words, a misspelt explain beside a PR number, waiting PRs and review questions."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo

from prdigest.config import load_settings
from prdigest.errors import UsageError
from prdigest.handlers import Context, Services, handle
from prdigest.handlers.args import read_args
from prdigest.handlers.understand import understand
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import list_subscriptions, save_subscription
from prdigest.subscription import Subscription

NOW = datetime(2026, 9, 16, 4, 0, tzinfo=UTC)
ADMIN = Context(platform="console", chat_id="console", user_id="me")


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("please stop posting the weekly report in this channel", "unsubscribe"),
        ("停止这个群的周报推送", "unsubscribe"),
        ("pause the weekly digest for acme/api", "unsubscribe"),
        ("不要再发周报了", "unsubscribe"),
        ("which repos does this chat follow?", "subscriptions"),
        ("这个群关注了哪些仓库", "subscriptions"),
        ("what repos are we subscribed to?", "subscriptions"),
        ("how do I unsubscribe?", "help"),  # a question about the command, not the command
        ("how do I subscribe?", "help"),
        ("why did the report stop?", "report"),
        ("不要再提示 no_tests 了", "mute"),
        ("stop flagging no_tests on acme/api", "mute"),
        ("show no_tests again", "unmute"),
        ("what is no_tests?", "ask"),  # no word that silences it
        ("open", "open"),
        ("which PRs are stuck?", "open"),
        ("还有哪些 PR 在等评审", "open"),
        ("any PRs waiting for review?", "open"),
        ("who reviewed the most last week?", "reviewers"),
        ("谁评审最多", "reviewers"),
        ("what got merged on Monday?", "report"),  # only what was merged: the period's report
        ("rsks", "help"),  # a misspelt command alone is help suggesting it
        ("what happened in 2025?", "report"),  # a year, not a PR
        ("风险最高的PR", "ask"),  # one PR ranked by its risks, not the week's risks
        ("what's the most risky change this week?", "ask"),
        ("sub acme/api every friday 9am", "subscribe"),
    ],
)
def test_sentences_read_as_meant(text: str, command: str) -> None:
    assert understand(text).command == command


@pytest.mark.parametrize(
    ("text", "command", "pr"),
    [
        ("expalin 1750", "explain", 1750),  # the number leaves no doubt
        ("explian #1750", "explain", 1750),
        ("why is 2301 flagged?", "explain", 2301),  # a number no year can be, in a question
        ("2301", "explain", 2301),
        ("PR2301干了啥", "explain", 2301),
        ("ignore no_tests for 1750", "dismiss", 1750),
        ("dismiss #1750 no_tests", "dismiss", 1750),
        ("忽略 1750 no_tests", "dismiss", 1750),
        ("restore no_tests on #1750", "undismiss", 1750),
    ],
)
def test_a_pr_number_fills_pr(text: str, command: str, pr: int) -> None:
    intent = understand(text)
    assert (intent.command, intent.pr) == (command, pr)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    found = Store(tmp_path / "c.db")
    yield found
    found.close()


def _services(store: Store, env: dict[str, str] | None = None, source: GitSource | None = None) -> Services:
    settings = load_settings(env=env or {})
    return Services(
        settings=settings, store=store, default_repo="acme/api", source_for=source_factory(settings, source),
        clock=lambda: NOW,
    )  # fmt: skip


def test_stop_posting_removes_the_chats_one_subscription(store: Store) -> None:
    save_subscription(store, Subscription(platform="console", chat_id="console", repo="acme/api"))
    reply = handle("please stop posting the weekly report in this channel", ADMIN, _services(store))
    assert "acme/api" in reply.text and list_subscriptions(store, "console", "console") == []


def test_the_chats_subscriptions_answer_a_question_about_them(store: Store) -> None:
    save_subscription(store, Subscription(platform="console", chat_id="console", repo="acme/api"))
    reply = handle("这个群关注了哪些仓库", ADMIN, _services(store))
    assert reply.kind == "subscriptions" and "acme/api" in reply.text and reply.lang == "zh"


def test_open_lists_a_pr_waiting_eight_days_from_github(store: Store) -> None:
    with FakeGitHub() as fake:
        repo = fake.add_repo(FakeRepo("acme/api"))
        opened = {"is_open": True, "merged_at": None, "files": [FakeFile("core/engine.py", 10, 2)]}
        repo.add(41, created_at=NOW - timedelta(days=8), title="Speed up the engine", **opened)
        repo.add(42, created_at=NOW - timedelta(days=1), title="Fresh", **opened)
        env = {"PRDIGEST_GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": fake.url}
        en = handle("which PRs are stuck?", ADMIN, _services(store, env))
        zh = handle("待处理", ADMIN, _services(store, env))
    assert "#41" in en.text and "Speed up the engine" in en.text and "waiting 8 days for review" in en.text
    assert "#42" not in en.text  # a day old: nobody is late yet
    assert "等待评审 8 天" in zh.text


def test_open_on_a_clone_says_it_cannot_tell(tmp_path: Path, store: Store) -> None:
    clone = new_repo(tmp_path / "clone")
    (clone / "a.py").write_text("x = 1\n")
    commit(clone, "fix: a bug (#7)", "2026-09-10T10:00:00+00:00")
    reply = handle("open", ADMIN, _services(store, source=GitSource(clone, repo="acme/api")))
    assert "cannot tell its open PRs" in reply.text


def test_a_rule_silenced_in_words_is_muted(store: Store) -> None:
    save_subscription(store, Subscription(platform="console", chat_id="console", repo="acme/api"))
    reply = handle("不要再提示 no_tests 了", ADMIN, _services(store))
    assert reply.lang == "zh" and list_subscriptions(store, "console", "console")[0].muted == ["no_tests"]
    handle("show no_tests again", ADMIN, _services(store))
    assert list_subscriptions(store, "console", "console")[0].muted == []


@pytest.mark.parametrize(
    ("words", "day", "time"),
    [
        ("to acme/api every friday 9am", "fri", "09:00"),
        ("acme/api 5:30pm", None, "17:30"),
        ("acme/api 12am", None, "00:00"),
    ],
)
def test_a_twelve_hour_time_is_read(words: str, day: str | None, time: str) -> None:
    args = read_args(words)
    assert (args.day, args.time, args.repos) == (day, time, ["acme/api"])


def test_a_twelve_hour_time_out_of_range_is_said() -> None:
    with pytest.raises(UsageError, match="13pm is not a time of day"):
        read_args("acme/api 13pm")


@pytest.mark.parametrize(
    ("words", "day", "time"),
    [("每周五早上十点推送 acme/api 的周报", "fri", "10:00"), ("acme/api 周三 下午3点半", "wed", "15:30"),
     ("acme/api 星期天 9点30分", "sun", "09:30")],
)  # fmt: skip
def test_a_day_and_time_inside_a_chinese_sentence_are_read(words: str, day: str, time: str) -> None:
    args = read_args(words)
    assert (args.day, args.time, args.repos) == (day, time, ["acme/api"])


@pytest.mark.parametrize("words", ["acme/api 零零零点", "acme/api 九九点", "acme/api 十十十点"])
def test_a_garbled_chinese_time_never_fails(words: str) -> None:
    args = read_args(words)  # a numeral that is no hour reads its last good part, or none
    assert args.repos == ["acme/api"] and (args.time is None or args.time.endswith(":00"))


def test_a_chinese_hour_past_the_day_is_said() -> None:
    with pytest.raises(UsageError, match="25:00 is not a time of day"):
        read_args("acme/api 二十五点")
