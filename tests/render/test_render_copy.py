"""Paths and code copied out of a Slack message, a Lark card (or their threads) or the Markdown read as
written: no invisible character inside them, whatever escaping each platform needs."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt
from test_render_support import demo_report, strings_of

from prdigest.bot.payloads import slack_payload
from prdigest.handlers.replies import Reply
from prdigest.models import Report
from prdigest.render.lark import lark_messages
from prdigest.render.markdown import render_markdown
from prdigest.render.sanitize import slack_text
from prdigest.render.slack import slack_messages

PATHS = [
    "miles/utils/__init__.py",
    "src/weight_sync.py",
    "miles/backends/fsdp_utils/update_weight_utils.py",
    "_private/__main__.py",
    "configs/a-b/c.d_e.toml",
    "测试/数据_同步.py",
]
CODE = ["@pytest.mark.skip", "lz4<=0.36", "x*y", "x~y", "~/.cache"]
INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")


def with_paths(lang: str) -> Report:
    report = demo_report(lang)
    report.summary = "Code: " + " ".join(CODE) + ". Hot files: " + ", ".join(f"{p} (3)" for p in PATHS)
    for theme in report.themes:
        theme.trend = f"changes in {PATHS[0]} and {PATHS[1]}"
    for obs in report.risk_observations:
        obs.evidence = f"{PATHS[2]} drops {CODE[0]}"
    return report


def _copied(text: str) -> str:
    """What a reader copies: entities decoded, code-span fences gone."""
    return html.unescape(text).replace("`", "")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paths_copied_out_of_the_slack_message_read_as_written(lang: str) -> None:
    text = " ".join(_copied(s) for s in strings_of(slack_messages(with_paths(lang))))
    for path in PATHS:
        assert path in text, path
    for code in CODE[1:]:
        assert code in text, code  # "@" keeps its word joiner: Slack would read @pytest as a mention


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paths_copied_out_of_the_lark_card_read_as_written(lang: str) -> None:
    text = " ".join(_copied(s) for s in strings_of(lark_messages(with_paths(lang))))
    for path in PATHS:
        assert path in text, path


def test_paths_and_code_in_the_markdown_read_as_written() -> None:
    markdown = render_markdown(with_paths("en"))
    shown = " ".join(
        t.content for block in MarkdownIt("commonmark").parse(markdown) for t in block.children or []
    )
    for item in PATHS + CODE:
        assert item in shown, item
    assert not INVISIBLE.search(markdown)


def test_a_plain_slack_reply_carries_no_fences() -> None:
    payload = slack_payload(Reply(kind="text", lang="en", text=f"hot: {PATHS[0]}, {PATHS[1]} and a*b"))
    assert payload["mrkdwn"] is False  # shown as it is: nothing to fence
    assert _copied(payload["text"]) == f"hot: {PATHS[0]}, {PATHS[1]} and a*b"
    assert not INVISIBLE.search(payload["text"])


TICKED = ["Fix `_LazyAutoMapping.get` for `a*b` keys", "Drop `__init__.py` re-exports of `x~y`"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_titles_with_code_spans_reach_slack_without_invisible_characters(lang: str) -> None:
    report = demo_report(lang)
    for i, p in enumerate(report.prs):
        p.title = p.summary = TICKED[i % 2]
    for i, theme in enumerate(report.themes):
        theme.title = TICKED[i % 2]
    for obs in report.risk_observations:
        obs.title = obs.evidence = TICKED[0]
    strings = strings_of(slack_messages(report))
    assert sum(TICKED[0] in s for s in strings) > 3  # the spans are sent as the author wrote them
    # The one invisible character left is the demo's own "@pytest" word joiner (a mention otherwise).
    assert not [s for s in strings if INVISIBLE.search(s.replace("@\u2060", "@"))]
    text = " ".join(_copied(s) for s in strings)
    assert "Fix _LazyAutoMapping.get for a*b keys" in text and "__init__.py re-exports of x~y" in text


def test_a_backtick_without_a_partner_is_still_fenced() -> None:
    # It must not pair with the code span after it; a span starting with a space is none in Slack.
    assert slack_text("a ` b `c_d`") == "a \u200b`\u200b b `c_d`"
    assert slack_text("` x ` `y`") == "\u200b`\u200b x \u200b`\u200b `y`"
