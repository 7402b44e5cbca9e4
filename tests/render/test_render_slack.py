"""The Slack message and its thread: slack_sdk's validators and Slack's limits for any week, and what a reader
sees in them."""

from __future__ import annotations

import json

import pytest
from test_render_support import (
    REPORT_URL,
    check_slack_message,
    demo_report,
    slack_texts,
)

from prdigest.i18n import texts
from prdigest.models import Report
from prdigest.render.slack import render_slack_message, render_slack_thread, slack_messages
from prdigest.render.views import ActionValue, key_prs


def _buttons(message: dict) -> list[dict]:
    return [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]


@pytest.mark.parametrize("url", [None, REPORT_URL], ids=["no-url", "url"])
def test_the_message_passes_slack_validation_and_limits_whatever_the_week(
    week: Report, url: str | None
) -> None:
    message = render_slack_message(week, url)
    check_slack_message(message)
    assert message["unfurl_links"] is False and message["unfurl_media"] is False


def test_every_thread_message_passes_slack_validation_and_limits_whatever_the_week(week: Report) -> None:
    for message in render_slack_thread(week, REPORT_URL):
        check_slack_message(message)


def test_header_judgement_figures_and_sections_lay_out_the_digest(demo: Report) -> None:
    t = texts(demo.lang)
    message = render_slack_message(demo)
    blocks = message["blocks"]
    assert blocks[0]["type"] == "header" and blocks[0]["text"]["text"] == f"{demo.repo} · 2026-W37"
    assert f"*{t[f'risk_{demo.risk_level}']}*" in blocks[1]["text"]["text"]
    fields = [f["text"] for f in blocks[2]["fields"]]
    assert fields[0] == f"*{t['merged_prs']}*\n{demo.stats.merged_prs}" and len(fields) == 3
    text = "\n".join(slack_texts(message))
    assert f"*{t['c_stories']}*" in text and f"*{t['c_top_risks']}*" in text
    thread = "\n".join(s for m in render_slack_thread(demo) for s in slack_texts(m))
    for p in key_prs(demo):
        assert f"<{p.url}|#{p.number}>" in thread


def test_buttons_carry_the_same_actions_as_the_lark_card(demo: Report) -> None:
    without = _buttons(render_slack_message(demo))
    values = [ActionValue.model_validate(json.loads(b["value"])) for b in without]
    assert [v.action for v in values] == ["risks", "key_prs", "another_week"]
    assert [b["action_id"] for b in without] == [
        "prdigest_risks",
        "prdigest_key_prs",
        "prdigest_another_week",
    ]

    with_url = _buttons(render_slack_message(demo, REPORT_URL))
    assert with_url[0]["url"] == REPORT_URL and "value" not in with_url[0]
    assert with_url[1:] == without and len(with_url) == 4


def test_long_content_is_cut_and_the_thread_split_to_fit() -> None:
    report = demo_report("en")
    long = "word " * 2000
    for obs in report.risk_observations:
        obs.title, obs.evidence = long, long
    for p in report.prs:
        p.summary = long
    report.summary = long
    messages = slack_messages(report, REPORT_URL)
    for message in messages:
        check_slack_message(message)
    assert "word…" in "\n".join(s for m in messages for s in slack_texts(m))


def test_a_top_n_subscription_lists_that_many_key_prs_in_the_thread(demo: Report) -> None:
    t = texts(demo.lang)
    three = demo.model_copy(update={"card_prs": 3})
    [first, *_] = render_slack_thread(three)
    text = "\n".join(slack_texts(first))
    assert "\n3. " in text and "\n4. " not in text
    assert t["more_in_full"].format(n=demo.stats.key_prs - 3) in text


def test_warnings_come_right_after_the_judgement(demo: Report) -> None:
    warned = demo.model_copy(update={"warnings": ["sync stopped at 1,000 PRs: <!channel>"]})
    message = render_slack_message(warned)
    check_slack_message(message)
    assert message["blocks"][2]["text"]["text"] == "⚠ sync stopped at 1,000 PRs: &lt;!channel&gt;"
