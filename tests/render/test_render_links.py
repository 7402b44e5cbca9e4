"""Every PR number the report card and its thread cite (judgement, stories, risks, key PRs, summary,
recommendations) links to the PR, on both platforms."""

from __future__ import annotations

import re

import pytest
from test_render_support import demo_report, strings_of

from prdigest.render.lark import lark_messages
from prdigest.render.slack import slack_messages
from prdigest.render.views import pr_urls


def _markdown(node: object) -> list[str]:
    """The Markdown texts of a Lark card or a Slack message: where a number can be a link (a button's
    label cannot), a Lark table's lark_md cells included."""
    if isinstance(node, dict):
        own = [node["content"]] if node.get("tag") == "markdown" else []
        if node.get("tag") == "table":
            cells = [c["name"] for c in node["columns"] if c.get("data_type") == "lark_md"]
            own += [row[name] for row in node["rows"] for name in cells]
        own += [node["text"]] if node.get("type") == "mrkdwn" else []
        return own + [s for value in node.values() for s in _markdown(value)]
    if isinstance(node, list):
        return [s for value in node for s in _markdown(value)]
    return []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cited_prs_are_links_in_the_lark_card_and_the_slack_message(lang: str) -> None:
    report = demo_report(lang)
    urls = pr_urls(report)
    assert report.themes and report.risk_observations and len(urls) == len(report.prs)
    lark = "\n".join(_markdown(lark_messages(report)))
    slack = "\n".join(_markdown([m["blocks"] for m in slack_messages(report)]))
    assert lark.count("](") > 60 and slack.count("|#") > 60  # the thread's key PRs, risks and advice too
    first = (report.themes[0].representative or report.themes[0].prs)[0]
    assert f"[#{first}]({urls[first]})" in lark and f"<{urls[first]}|#{first}>" in slack
    # Every number shown in the Markdown is a link to its own PR.
    for m in re.finditer(r"(?<!&)#(\d+)", lark):  # not an entity (&#47; is "/")
        n = int(m.group(1))
        link = f"[#{n}]({urls[n]})"
        assert lark[m.start() - 1 : m.start() - 1 + len(link)] == link, lark[m.start() - 20 :]
    for m in re.finditer(r"#(\d+)", slack):
        n = int(m.group(1))
        assert slack[: m.end() + 1].endswith(f"<{urls[n]}|#{n}>"), slack[m.start() - 60 : m.end() + 5]


def test_a_pr_without_its_own_link_is_cited_as_a_number() -> None:
    report = demo_report("en")
    first = report.risk_observations[0].prs[0]
    for p in report.prs:
        if p.number == first:
            p.url = "javascript:alert(1)"
    assert first not in pr_urls(report)
    slack = " ".join(strings_of(slack_messages(report)))
    assert f"#{first}" in slack and "javascript" not in slack


def test_the_markdown_links_numbers_inside_chinese_text_and_not_entities() -> None:
    from prdigest.render.markdown import render_markdown

    report = demo_report("zh")
    urls = pr_urls(report)
    a, b = list(urls)[:2]
    report.risk_observations[0].evidence = f"见#{a}和#{b}，另见 a#{a} 与 &#{b};"
    markdown = render_markdown(report)
    assert f"见[#{a}]({urls[a]})和[#{b}]({urls[b]})，另见 a#{a} 与 &#{b};" in markdown
