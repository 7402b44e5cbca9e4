"""snooze and ack on open PRs and risks, typed in chat: an open PR anyone's (for a week, or while it waits
for the same reason), a risk an admin's; `open` and the report's attention leave them out and say who.
Open PRs come from the local fake GitHub through the real client."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from conftest import open_access
from fakes.github_api import TOKEN, FakeGitHub, FakePR, FakeRepo, FakeReview
from test_github_source import FAST

from prdigest.bot.app import action_intent
from prdigest.config import load_settings
from prdigest.config.models import AdminSettings
from prdigest.handlers import Context, Reply, Services, handle
from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.sources.github.source import GitHubClient, GitHubSource
from prdigest.storage import Store
from prdigest.storage.snoozes import active_snoozes

REPO = "acme/rocket"
NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
BOB = Context(platform="slack", chat_id="C1", user_id="U-bob")
ADMIN = Context(platform="slack", chat_id="C1", user_id="U-admin")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        repo.add(merged_at=NOW - timedelta(days=30), title="merged long ago")
        yield server


def open_pr(fake: FakeGitHub, number: int, days: float, **fields: object) -> FakePR:
    created = NOW - timedelta(days=days)
    return fake.repos[REPO].add(number, is_open=True, merged_at=None, created_at=created, **fields)


class Chat:
    """Services over the fake GitHub, their clock movable."""

    def __init__(self, fake: FakeGitHub, store: Store):
        self.now = NOW
        settings = load_settings(env={}).model_copy(update={"admins": AdminSettings(slack=["U-admin"])})
        client = GitHubClient(TOKEN, fake.url, FAST)
        self.source = GitHubSource(client, REPO)
        self.svc = Services(
            settings=open_access(settings), store=store, default_repo=REPO,
            source_for=lambda repo: GitHubSource(client, repo), clock=lambda: self.now,
        )  # fmt: skip  # a source per command, as the bot's: what is open is read afresh

    def say(self, text: str, ctx: Context = BOB) -> Reply:
        return handle(text, ctx, self.svc)

    def open_numbers(self) -> list[int]:
        listed = self.say("open prs").text.split("_Snoozed or acknowledged_")[0]  # what was quieted: below
        return [n for n in (10, 12, 14) if f"[#{n}]" in listed]


@pytest.fixture
def chat(fake: FakeGitHub, store: Store) -> Chat:
    open_pr(fake, 10, 8, author="alice")  # waiting 8 days for a review
    approved = FakeReview("carol", "APPROVED", "", NOW - timedelta(days=4))
    open_pr(fake, 12, 9, reviews=[approved], review_decision="APPROVED")  # approved 4 days, not merged
    open_pr(fake, 14, 10, author="dave")
    return Chat(fake, store)


def test_anyone_snoozes_an_open_pr_for_a_week_and_it_comes_back(chat: Chat, store: Store) -> None:
    assert chat.open_numbers() == [10, 12, 14]
    reply = chat.say("snooze #10")
    assert "Snoozed #10" in reply.text and "2026-09-27" in reply.text
    (row,) = active_snoozes(store, REPO, NOW)
    assert (row.kind, row.number, row.by, row.until) == ("open", 10, "U-bob", NOW + timedelta(days=7))
    assert chat.open_numbers() == [12, 14]
    assert "snoozed by U-bob until 2026-09-27" in chat.say("open").text
    chat.now = NOW + timedelta(days=7, minutes=1)
    assert chat.open_numbers() == [10, 12, 14]


def test_an_acknowledged_pr_stays_quiet_while_it_waits_for_the_same_reason(
    chat: Chat, fake: FakeGitHub, store: Store
) -> None:
    assert "Acknowledged #10" in chat.say("ack #10").text
    (row,) = active_snoozes(store, REPO, NOW)
    assert (row.label, row.until, row.by) == ("waiting_review", None, "U-bob")
    chat.now = NOW + timedelta(days=30)  # no end: still quiet a month on
    assert 10 not in chat.open_numbers()
    # Approved since, and waiting to be merged: another reason, so it is back.
    pr = fake.repos[REPO].prs[10]
    pr.reviews.append(FakeReview("carol", "APPROVED", "", NOW + timedelta(days=20)))
    pr.review_decision = "APPROVED"
    assert 10 in chat.open_numbers()
    assert "not among the open PRs" in chat.say("ack #99").text
    assert len(active_snoozes(store, REPO, chat.now)) == 1  # nothing stored for #99


def test_the_reports_attention_leaves_a_snoozed_pr_out_and_says_who(chat: Chat, store: Store) -> None:
    chat.say("snooze #14")
    week = Window(since="2026-09-14", until="2026-09-20", tz="UTC")
    settings = chat.svc.settings
    report = make_report(settings, store, chat.source, week, repo=REPO, lang="en", save=False, now=NOW)
    assert report.attention is not None
    assert [op.number for op in report.attention.open_prs] == [10, 12]
    assert [(s.number, s.by) for s in report.snoozed] == [(14, "U-bob")]


def test_a_risk_is_an_admins_to_snooze_and_the_refusal_is_in_the_askers_language(
    chat: Chat, store: Store
) -> None:
    assert chat.say("snooze no_tests").kind == "refusal"
    refused = chat.say("暂缓 no_tests")
    assert refused.kind == "refusal" and "管理员" in refused.text
    assert active_snoozes(store, REPO, NOW) == []
    assert "Snoozed no_tests" in chat.say("snooze no_tests", ADMIN).text
    (row,) = active_snoozes(store, REPO, NOW)
    assert (row.kind, row.number, row.label, row.by) == ("risk", 0, "no_tests", "U-admin")
    assert "open PR's #number, or a risk rule" in chat.say("snooze soon").text


def test_an_open_prs_buttons_act_for_anyone_with_the_cards_reason(chat: Chat, store: Store) -> None:
    card = {"repo": REPO, "since": "2026-09-14", "until": "2026-09-20", "tz": "UTC", "lang": "zh"}
    redrawn: list[tuple[str, str, str, str]] = []
    chat.svc.redraw = lambda platform, chat_id, repo, window: redrawn.append(
        (platform, chat_id, repo, str(window.since))
    )
    acked = handle(
        action_intent({**card, "action": "ack", "number": 12, "label": "approved_not_merged"}), BOB, chat.svc
    )
    assert "已知悉 #12" in acked.text  # the card's language
    snoozed = handle(action_intent({**card, "action": "snooze", "number": 14}), BOB, chat.svc)
    assert "已暂缓 #14" in snoozed.text
    rows = {(s.number, s.label, s.by) for s in active_snoozes(store, REPO, NOW)}
    assert rows == {(12, "approved_not_merged", "U-bob"), (14, "", "U-bob")}
    assert chat.open_numbers() == [10]
    # Each press redraws the chat's weekly card of that week in place.
    assert redrawn == [("slack", "C1", REPO, "2026-09-14")] * 2
