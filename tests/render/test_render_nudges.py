"""Whom a waiting PR asked, and the buttons that quiet a risk or an open PR, in the rendered card and
thread: mentions only where the delivery put them (Report.mentions), only for PRs waiting for review,
a team's card too; every risk with a rule and every open PR has "acknowledged" and "snooze a week"; what
was quieted is said, and by whom."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from test_render_attention import attention, open_pr, with_attention
from test_render_support import check_lark_card, check_slack_message, demo_report, slack_texts, strings_of
from test_render_team import part, team_of

from prdigest.bot.app import action_intent
from prdigest.models import Attention, Report, Snooze
from prdigest.render.lark import lark_messages, render_lark_card
from prdigest.render.markdown import render_markdown
from prdigest.render.slack import render_slack_message, slack_messages

MENTION = "<@U0ALICE1>"


def asking(report: Report) -> Report:
    """The report's open PRs asking alice (a chat user) and bob (not one); #15 is approved, not waiting."""
    report.attention = attention()
    for op in report.attention.open_prs:
        op.requested = ["alice", "bob"]
    report.mentions = {"alice": MENTION}
    return report


def slack_card(report: Report) -> str:
    return "\n".join(slack_texts(render_slack_message(report)))


def slack_thread(report: Report) -> list[str]:
    return [t for m in slack_messages(report)[1:] for t in slack_texts(m)]


def test_the_card_mentions_the_chat_users_a_waiting_pr_asked_and_the_thread_names_all() -> None:
    report = asking(with_attention("en"))
    card = slack_card(report)
    line = next(t for t in card.splitlines() if "#12" in t)
    assert line.endswith(f"· review asked of {MENTION}") and "bob" not in line
    thread = slack_thread(report)
    assert any("#12" in t and f"review asked of {MENTION}, bob" in t for t in thread)
    approved = next(t for t in thread if "#15" in t and "approved" in t)
    assert "asked" not in approved  # merging is its author's move: nobody is nudged
    for message in slack_messages(report):
        check_slack_message(message)


def test_without_the_deliverys_mentions_nobody_is_mentioned() -> None:
    report = asking(with_attention("zh"))
    report.mentions = {}
    assert MENTION not in slack_card(report) and "请" not in next(
        t for t in slack_card(report).splitlines() if "#12" in t
    )
    assert any("请 alice, bob 评审" in t for t in slack_thread(report))
    lark = json.dumps(lark_messages(report), ensure_ascii=False)
    assert "<at " not in lark


def test_a_lark_card_mentions_with_the_lark_syntax_and_stays_valid() -> None:
    report = asking(with_attention("en"))
    report.mentions = {"alice": '<at user_id="ou_alice1"></at>'}
    for card in lark_messages(report):
        check_lark_card(card)
    assert '<at user_id=\\"ou_alice1\\"></at>' in json.dumps(render_lark_card(report))


def test_a_team_card_mentions_too() -> None:
    busy, quiet = part("trainer", 12, "en"), part("serving", 3, "en")
    asking(busy)
    team = team_of([busy, quiet], "en")
    team.mentions = {"alice": MENTION}
    line = next(t for t in slack_card(team).splitlines() if "trainer #12" in t)
    assert line.endswith(f"review asked of {MENTION}")


def quiet_buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        json.loads(e["value"]) for b in message["blocks"] if b["type"] == "actions"
        for e in b["elements"] if "value" in e and json.loads(e["value"])["action"] in ("ack", "snooze")
    ]  # fmt: skip


def test_each_risk_and_open_pr_in_the_thread_has_its_two_buttons_and_they_read_back() -> None:
    report = with_attention("en")
    values = [v for m in slack_messages(report)[1:] for v in quiet_buttons(m)]
    risks = [o for o in report.risk_observations if o.label]
    assert len(values) == 2 * (len(risks) + len(report.attention.open_prs))
    snooze_risk = next(v for v in values if v["action"] == "snooze" and v.get("label") == risks[0].label)
    intent = action_intent(snooze_risk)
    assert (intent.command, intent.pr, intent.args, intent.repo) == (
        "snooze",
        None,
        risks[0].label,
        report.repo,
    )
    ack_pr = next(v for v in values if v["action"] == "ack" and v.get("number") == 15)
    intent = action_intent(ack_pr)
    assert (intent.command, intent.pr, intent.args) == ("ack", 15, "approved_not_merged")
    assert intent.window is not None and intent.window.since == report.window.since  # the card's week
    lark = [b for card in lark_messages(report) for b in strings_of(card)]
    assert sum(1 for s in lark if s in ("Acknowledged", "Snooze a week")) == len(values)


def test_what_was_quieted_is_said_with_who_in_the_thread_and_the_markdown() -> None:
    report = demo_report("en")
    at = datetime(2026, 9, 14, 10, tzinfo=UTC)
    report.attention = Attention(open_prs=[open_pr(12, "waiting_review", 8)])
    report.snoozed = [
        Snooze(
            repo=report.repo,
            kind="risk",
            number=0,
            label="no_tests",
            until=at.replace(day=21),
            by="U1",
            at=at,
        ),
        Snooze(repo=report.repo, kind="open", number=15, label="waiting_review", by="U2", at=at),
    ]
    thread = "\n".join(slack_thread(report))
    assert "snoozed by U1 until 2026-09-21" in thread and "#15 — acknowledged by U2 on 2026-09-14" in thread
    md = render_markdown(report)
    assert "_Snoozed or acknowledged_" in md and "snoozed by U1 until 2026-09-21" in md
