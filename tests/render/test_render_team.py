"""A team digest in every output: the card keeps one repository's one-screen layout with one line per
repository (its merged and key PRs and its top risk, linked to that repository's PR), within 1,200
visible characters for 3 and 12 repositories in zh and en; the thread holds each repository's replies,
headed by its name; the page and the Markdown report give the team's figures, then each repository's
sections with its own links.

The team report is put together by analysis/team.py, as a team subscription's delivery makes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chromium_support import CHROMIUM, page_heights
from test_render_injection import _assert_lark_inert as assert_lark_inert
from test_render_injection import _assert_slack_inert as assert_slack_inert
from test_render_support import (
    HOSTILE_TEXT,
    LANGS,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    hostile_report,
    scaled_prs,
    strings_of,
    week_report,
)

from prdigest.analysis.team import combine
from prdigest.i18n import report_texts, risk_name
from prdigest.models import Report
from prdigest.render.html import render_html
from prdigest.render.lark import BODY_LIMIT, lark_messages, lark_request_body_bytes, render_lark_card
from prdigest.render.markdown import render_markdown
from prdigest.render.preview import lark_preview, preview_page, slack_preview, visible_text
from prdigest.render.slack import render_slack_message, render_slack_thread, slack_messages
from prdigest.render.views import pr_urls

CAP = 1200
PHONE_PX = 1400
SIZES = (3, 12)
NAMES = (
    "trainer",
    "serving",
    "kernels",
    "docs",
    "eval",
    "data",
    "infra",
    "tokenizer",
    "ops",
    "web",
    "cli",
    "rl",
)


def part(name: str, count: int, lang: str) -> Report:
    """A week of ``count`` of the demo's PRs as the report of acme-ml/``name``, its PRs linked there."""
    report = week_report(scaled_prs(count), lang, history=False)
    repo = f"acme-ml/{name}"
    report.repo = repo
    for p in report.prs:
        p.url = f"https://github.com/{repo}/pull/{p.number}"
    return report


def team_of(parts: list[Report], lang: str) -> Report:
    """The team report of ``parts``, as a team subscription's delivery makes it."""
    return combine(parts, ",".join(p.repo for p in parts), lang)


def team_report(size: int, lang: str) -> Report:
    """``size`` repositories of 40, 1, 12, 3 … PRs each."""
    counts = (40, 1, 12, 3, 25, 7, 2, 18, 5, 9, 30, 4)
    return team_of([part(NAMES[i], counts[i], lang) for i in range(size)], lang)


@pytest.fixture(scope="module", params=[(n, lang) for n in SIZES for lang in LANGS], ids=str)
def team(request: pytest.FixtureRequest) -> Report:
    size, lang = request.param
    return team_report(size, lang)


def _lark_text(card: dict) -> str:
    return visible_text(lark_preview(card))


def _slack_text(message: dict) -> str:
    return visible_text(slack_preview(message))


@pytest.mark.parametrize("url", [None, REPORT_URL], ids=["no-url", "url"])
def test_the_team_card_holds_at_most_1200_visible_characters(team: Report, url: str | None) -> None:
    lark, slack = render_lark_card(team, url), render_slack_message(team, url)
    assert len(_lark_text(lark)) <= CAP and len(_slack_text(slack)) <= CAP
    check_lark_card(lark)
    assert lark_request_body_bytes(lark) <= BODY_LIMIT
    check_slack_message(slack)


def test_one_line_per_repository_with_its_counts_and_top_risk_linked_there(team: Report) -> None:
    t = report_texts(team.lang, team.window.since, team.window.until)
    lark = render_lark_card(team, REPORT_URL)
    [repos] = [e["content"] for e in lark["body"]["elements"] if e.get("content", "").startswith("**")]
    slack = render_slack_message(team, REPORT_URL)
    [section] = [
        b["text"]["text"] for b in slack["blocks"] if "text" in b and "*" + t["td_repos"] in b["text"]["text"]
    ]
    lark_lines, slack_lines = repos.split("\n")[1:], section.split("\n")[1:]
    assert len(lark_lines) == len(slack_lines) == len(team.parts)
    for p in team.parts:
        name = p.repo.split("/")[1]
        counts = t["td_counts"].format(merged=p.stats.merged_prs, key=p.stats.key_prs)
        [lark_line] = [line for line in lark_lines if visible_text(lark_preview(_md(line))).startswith(name)]
        [slack_line] = [line for line in slack_lines if line.startswith(f"*{name}*")]
        assert counts in visible_text(lark_preview(_md(lark_line))) and counts in slack_line
        top = p.risk_observations[0] if p.risk_observations else None  # the weightiest
        if top is None:
            assert "](" not in lark_line and "<http" not in slack_line  # no risk: nothing cited
            continue
        url = pr_urls(p)[top.prs[0]]
        assert url.startswith(f"https://github.com/{p.repo}/pull/")
        assert f"[#{top.prs[0]}]({url})" in lark_line and f"<{url}|#{top.prs[0]}>" in slack_line
        shown = risk_name(top.label, p.lang)
        assert shown[:6] in visible_text(lark_preview(_md(lark_line))) and shown[:6] in slack_line


def _elsewhere(p: Report) -> re.Pattern[str]:
    """A link to another repository of the team than ``p``'s."""
    return re.compile(rf"github\.com/acme-ml/(?!{re.escape(p.repo.split('/')[1])}/)")


def _md(content: str) -> dict:
    return {"header": {}, "body": {"elements": [{"tag": "markdown", "content": content}]}}


def test_the_title_names_the_team_and_the_figures_are_the_sums(team: Report) -> None:
    text = _lark_text(render_lark_card(team))
    assert "acme-ml: trainer, serving, kernels" in text and "2026-W37" in text
    assert str(team.stats.merged_prs) in text and str(team.stats.key_prs) in text
    assert str(sum(len(p.risk_observations) for p in team.parts)) in text
    assert team.summary in text


def test_the_team_thread_has_each_repositorys_replies_headed_by_its_name(team: Report) -> None:
    lark = lark_messages(team, REPORT_URL)[1:]
    for card in [*lark_messages(team, REPORT_URL), *slack_messages(team, REPORT_URL)]:
        if "schema" in card:
            check_lark_card(card)
            assert lark_request_body_bytes(card) <= BODY_LIMIT
        else:
            check_slack_message(card)
    heads = [card["header"]["title"]["content"] for card in lark]
    slack_heads = [m["blocks"][0]["text"]["text"] for m in render_slack_thread(team)]
    for p in team.parts:
        assert any(h.startswith(f"{p.repo} · ") for h in heads)
        assert any(h.startswith(f"{p.repo} · ") for h in slack_heads)
        mine = "\n".join(
            s
            for card in lark
            if card["header"]["title"]["content"].startswith(p.repo + " ")
            for s in strings_of(card)
        )
        for n, url in pr_urls(p).items():
            if f"[#{n}](" in mine:
                assert f"[#{n}]({url})" in mine
        assert not _elsewhere(p).search(mine)


def test_the_team_page_has_each_repositorys_sections_with_its_links(team: Report) -> None:
    page = render_html(team)
    for i, p in enumerate(team.parts):
        section = page.split(f'<section id="repo-{i + 1}"')[1].split("</section><!-- repo -->")[0]
        assert p.repo in section
        for pr in p.prs:
            assert f'href="https://github.com/{p.repo}/pull/{pr.number}"' in section
        assert not _elsewhere(p).search(section)
    assert len(set(re.findall(r'id="([^"]+)"', page))) == len(re.findall(r'id="([^"]+)"', page))


def test_the_team_markdown_has_the_figures_then_each_repository(team: Report) -> None:
    md = render_markdown(team)
    t = report_texts(team.lang, team.window.since, team.window.until)
    heads = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert heads[0] == t["td_overview"]
    assert [h for h in heads if h.startswith("acme-ml/")] == [p.repo for p in team.parts]
    assert f"{t['merged_prs']}: {team.stats.merged_prs}" in md
    for p in team.parts:
        body = md.split(f"\n## {p.repo}\n")[1].split("\n## ")[0]
        assert f"### {t['s_summary']}" in body
        if p.risk_observations:
            assert p.risk_observations[0].title in body or "\\" in body


@pytest.mark.e2e  # headless Chromium
@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium fonts-noto-cjk)"
)
def test_the_team_card_fits_a_phone_screen_in_chromium(tmp_path: Path) -> None:
    pages = [
        preview_page(preview(message))
        for size in SIZES
        for lang in LANGS
        for preview, message in (
            (lark_preview, render_lark_card(team_report(size, lang), REPORT_URL)),
            (slack_preview, render_slack_message(team_report(size, lang), REPORT_URL)),
        )
    ]
    heights = page_heights(pages, tmp_path, ".lark, .slack")
    assert all(200 < h <= PHONE_PX for h in heights), heights


@pytest.mark.parametrize("lang", LANGS)
def test_a_hostile_repositorys_texts_stay_inert_in_the_team_card_and_thread(lang: str) -> None:
    # Both of acme-ml/trainer: the inertness checks accept that repository's PR links only.
    team = team_of([hostile_report(lang), part("trainer", 3, lang)], lang)
    team.summary = HOSTILE_TEXT
    team.warnings = [HOSTILE_TEXT]
    for card in lark_messages(team, REPORT_URL):
        assert_lark_inert(card)
    for message in slack_messages(team, REPORT_URL):
        assert_slack_inert(message)
    assert "<script>" not in render_html(team) and "<script>" not in render_markdown(team)


def test_a_quiet_repository_has_its_line_and_more_than_twelve_are_counted() -> None:
    quiet = team_of([part("trainer", 12, "en"), part("docs", 0, "en")], "en")
    text = _lark_text(render_lark_card(quiet))
    assert "docs · 0 merged · 0 key" in text
    assert "## acme-ml/docs" in render_markdown(quiet) and 'id="repo-2"' in render_html(quiet)
    many = team_of([part(f"r{i}", 1 + i % 3, "en") for i in range(15)], "en")
    t = report_texts("en", many.window.since, many.window.until)
    for text in (_lark_text(render_lark_card(many)), _slack_text(render_slack_message(many))):
        assert len(text) <= CAP and t["td_more_repos"].format(n=3) in text
        assert "acme-ml: r0, r1, r2 … (15 repositories)" in text


def test_the_team_summary_counts_its_repositories_in_words() -> None:
    one = team_of([part("trainer", 3, "en")], "en")
    assert "1 repository," in one.summary
    assert "3 repositories," in team_report(3, "en").summary
    assert "3 个仓库，" in team_report(3, "zh").summary
