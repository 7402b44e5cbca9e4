"""The Slack message: slack_sdk's validators and Slack's limits for any week, and what a reader sees in it."""

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
from prdigest.render.slack import render_slack_message
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


def test_header_figures_and_sections_lay_out_the_report(demo: Report) -> None:
    t = texts(demo.lang)
    message = render_slack_message(demo)
    blocks = message["blocks"]
    assert blocks[0]["type"] == "header" and demo.repo in blocks[0]["text"]["text"]
    assert t[f"risk_{demo.risk_level}"] in blocks[1]["elements"][0]["text"]
    fields = [f["text"] for f in blocks[2]["fields"]]
    assert fields[0] == f"*{t['merged_prs']}*\n{demo.stats.merged_prs}"
    text = "\n".join(slack_texts(message))
    for key in ("s_themes", "s_risks", "s_key_prs"):
        assert f"*{t[key]}*" in text
    key = key_prs(demo)
    first = key[0]
    assert f"<{first.url}|#{first.number}>" in text
    assert t["more_in_full"].format(n=len(key) - 10) in text


def test_buttons_carry_the_same_actions_as_the_lark_card(demo: Report) -> None:
    key = key_prs(demo)
    without = _buttons(render_slack_message(demo))
    values = [ActionValue.model_validate(json.loads(b["value"])) for b in without]
    assert [v.action for v in values] == ["risks", "key_prs", "explain", "explain", "explain", "another_week"]
    assert [v.number for v in values if v.action == "explain"] == [p.number for p in key[:3]]
    assert [b["action_id"] for b in without][:2] == ["prdigest_risks", "prdigest_key_prs"]

    with_url = _buttons(render_slack_message(demo, REPORT_URL))
    assert with_url[0]["url"] == REPORT_URL and "value" not in with_url[0]
    assert with_url[1:] == without


def test_long_content_is_cut_with_a_count_of_the_rest() -> None:
    report = demo_report("en")
    long = "word " * 2000
    for obs in report.risk_observations:
        obs.title, obs.evidence = long, long
    for p in report.prs:
        p.summary = long
    report.summary = long
    message = render_slack_message(report, REPORT_URL)
    check_slack_message(message)
    assert "more in the full report" in "\n".join(slack_texts(message))


def test_warnings_come_right_after_the_figures(demo: Report) -> None:
    warned = demo.model_copy(update={"warnings": ["sync stopped at 1,000 PRs: <!channel>"]})
    message = render_slack_message(warned)
    check_slack_message(message)
    assert message["blocks"][3]["text"]["text"] == "⚠ sync stopped at 1,000 PRs: &lt;!channel&gt;"
