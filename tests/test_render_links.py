"""Every PR number the report card cites (themes, risks, key PRs) links to the PR, on both platforms."""

from __future__ import annotations

import re

import pytest
from test_render_support import demo_report, strings_of

from prdigest.render.lark import render_lark_card
from prdigest.render.slack import render_slack_message
from prdigest.render.views import pr_urls


def _markdown(node: object) -> list[str]:
    """The Markdown texts of a Lark card or a Slack message: where a number can be a link (a button's
    label cannot)."""
    if isinstance(node, dict):
        own = [node["content"]] if node.get("tag") == "markdown" else []
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
    lark = "\n".join(_markdown(render_lark_card(report)))
    slack = "\n".join(_markdown(render_slack_message(report)["blocks"]))
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
    slack = " ".join(strings_of(render_slack_message(report)))
    assert f"#{first}" in slack and "javascript" not in slack
