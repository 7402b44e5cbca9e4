"""The report page read on a phone: the first screen holds the judgement (risk level, headline figures,
the stories), each figure once; long lists show their top ten and keep the rest under a closed "and N
more"; every PR number is a link to its PR where the PR has one. In headless Chromium: a large week fits
390 px without sideways scrolling, its first screen holds the judgement, and no chart's text lies on a bar."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from chromium_support import CHROMIUM, PHONE, DevTools, boxes, chromium, evaluate, open_page
from test_render_support import LANGS, demo_report, scaled_prs, week_report

from prdigest.analysis.trend import stats_figures, trend
from prdigest.i18n import texts
from prdigest.models import LLMUsage, Report
from prdigest.render.html import TOP, render_html
from prdigest.render.views import pr_urls

_LINK = re.compile(r'<a href="([^"]*)"[^>]*>#(\d+)</a>')
# What the page's first screen must hold, by where the page writes it (bench/render_bench.py checks alike).
FIRST_SCREEN = {
    "risk level": "header .badge",
    "merged PRs": ".figures .merged_prs",
    "key PRs": ".figures .key_prs",
    "first story": "#themes summary",
}


def below_first_screen(devtools: DevTools, session: str) -> list[str]:
    """Which of FIRST_SCREEN the page, open at PHONE size, shows below its first screen (or not at all)."""
    found = {what: boxes(devtools, session, selector) for what, selector in FIRST_SCREEN.items()}
    return [what for what, at in found.items() if not at or at[0][1] > PHONE["height"]]


def large_week(lang: str) -> Report:
    """400 PRs (62 hot files, 24 key PRs) against four earlier weeks of about as many, rising: the week
    chart's mean line crosses its last columns, where its note used to be written."""
    report = week_report(scaled_prs(400), lang)
    merged = (300, 350, 380, 420, 400)
    report.history = [
        h.model_copy(update={"merged_prs": n}) for h, n in zip(report.history, merged, strict=True)
    ]
    earlier = [{"merged_prs": n, "key_prs": 5} for n in merged[:-1]]
    report.stats.trend = trend(stats_figures(report.stats), earlier)
    return report


def section(page: str, name: str) -> str:
    return page.split(f'<section id="{name}">')[1].split("</section>")[0]


def closed_rest(block: str) -> tuple[str, str]:
    """What a block shows before its "and N more", and that closed details' summary and content."""
    shown, rest = block.split('<details class="more">', 1)
    summary, content = rest.split("</summary>", 1)
    return shown, summary.removeprefix("<summary>") + "\n" + content.split("</details>\n", 1)[0]


@pytest.mark.parametrize("lang", LANGS)
def test_hot_files_show_ten_and_keep_the_rest_closed_under_a_count(lang: str) -> None:
    report = large_week(lang)
    hot = report.stats.hot_files
    assert len(hot) > TOP
    block = section(render_html(report), "figures").split('<dd class="hot">')[1].split("</dd>")[0]
    shown, rest = closed_rest(block)
    paths = [html.unescape(re.sub(r"<[^>]+>", "", p)) for p in re.findall(r"<code [^>]*>(.*?)</code>", shown)]
    assert paths == [h.path for h in hot[:TOP]]
    assert rest.startswith(texts(lang)["page_more"].format(n=len(hot) - TOP) + "\n")
    assert rest.count("<code") == len(hot) - TOP and "<details open" not in block


@pytest.mark.parametrize("lang", LANGS)
def test_the_pr_list_shows_the_ten_most_important_and_keeps_every_other_row_closed(lang: str) -> None:
    report = large_week(lang)
    listed = section(render_html(report), "figures").split("<h3>")[1]
    shown, rest = closed_rest(listed)
    ranked = sorted(report.prs, key=lambda p: (-(p.importance or 0), p.number))
    assert [int(n) for n in re.findall(r'<tr id="pr-(\d+)"', shown)] == [p.number for p in ranked[:TOP]]
    assert rest.startswith(texts(lang)["page_more"].format(n=len(report.prs) - TOP) + "\n")
    assert len(re.findall(r'<tr id="pr-\d+"', rest)) == len(report.prs) - TOP  # every PR keeps its row


@pytest.mark.parametrize("lang", LANGS)
def test_every_pr_number_with_a_link_is_a_link_to_its_pr(lang: str) -> None:
    report = large_week(lang)
    report.themes[0].story += f" See #{report.prs[3].number}和#{report.prs[4].number}。"  # Chinese runs on
    urls = pr_urls(report)
    page = render_html(report).split("<main>")[1]
    for href, number in _LINK.findall(page):
        assert href == urls.get(int(number), f"#pr-{number}"), (href, number)
    text = html.unescape(re.sub(r"<[^>]+>", "", _LINK.sub("", page)))
    unlinked = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert not unlinked & set(urls), sorted(unlinked & set(urls))[:5]
    assert len(_LINK.findall(page)) > 2 * len(report.prs)


@pytest.mark.parametrize("lang", LANGS)
def test_the_figures_are_said_once_and_the_rules_paragraph_is_not_the_lead(lang: str) -> None:
    report = demo_report(lang)
    s = report.stats
    page = render_html(report)
    summary = section(page, "summary")
    lead, tiles = summary.split('<div class="figures">')
    for value in (f"{s.avg_importance:g}", f"+{s.additions}", f"-{s.deletions}", str(s.files_changed)):
        assert value not in lead and tiles.count(value) == 1, value
    fixed = [piece for piece in re.split(r"\{\w+\}", texts(lang)["summary_para"]) if len(piece.strip()) > 5]
    assert report.summary and fixed and not [piece for piece in fixed if piece in html.unescape(page)]
    assert texts(lang)[f"level_{report.risk_level}"].split("{")[0] in html.unescape(lead)
    # The model's summary is its judgement in a few sentences, no figures (its brief): the page opens on it.
    usage = LLMUsage(model="m", narrative="llm")
    said = report.model_copy(update={"summary": "A week of fixes.", "llm_usage": usage})
    assert '<p class="lead u">A week of fixes.</p>' in render_html(said)


def test_an_empty_week_leads_with_its_one_line_and_no_list() -> None:
    page = render_html(week_report([], "en"))
    assert texts("en")["none"] in section(page, "summary") and 'class="more"' not in page


# --- in a browser ------------------------------------------------------------------------------


# Each chart's text boxes that overlap a bar, or stick out of the chart.
TEXT_ON_BARS = """(() => {
  const hits = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const frame = svg.getBoundingClientRect();
    const bars = Array.from(svg.querySelectorAll('rect'), r => r.getBoundingClientRect());
    for (const text of svg.querySelectorAll('text')) {
      if (!text.textContent) continue;
      const t = text.getBoundingClientRect();
      if (t.left < frame.left - 1 || t.right > frame.right + 1) hits.push('out: ' + text.textContent);
      for (const b of bars) {
        if (b.width && t.left < b.right && b.left < t.right && t.top < b.bottom - 1 && b.top + 1 < t.bottom)
          hits.push(text.textContent);
      }
    }
  }
  return hits;
})()"""


@pytest.mark.e2e  # headless Chromium
@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium fonts-noto-cjk)"
)
@pytest.mark.timeout(120)
def test_a_large_week_on_a_phone(tmp_path: Path) -> None:
    with chromium(tmp_path / "profile") as devtools:
        for lang in LANGS:
            page = tmp_path / f"{lang}.html"
            page.write_text(render_html(large_week(lang)), encoding="utf-8")
            phone = open_page(devtools, page.as_uri(), PHONE)
            assert evaluate(devtools, phone, "document.documentElement.scrollWidth") <= PHONE["width"]
            assert below_first_screen(devtools, phone) == [], lang
            assert evaluate(devtools, phone, TEXT_ON_BARS) == [], lang
            height = evaluate(devtools, phone, "document.documentElement.scrollHeight")
            assert isinstance(height, int) and height < 40 * PHONE["height"], height  # lists stay closed


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_says_the_review_flow_with_its_prs_linked_and_nothing_without_reviews(lang: str) -> None:
    from prdigest.render.flow import flow_lines

    report = demo_report(lang)
    lines = flow_lines(report, texts(lang))
    assert report.stats.review_flow is not None and len(lines) >= 3
    page = render_html(report)
    flow = section(page, "review-flow")
    assert 'href="#review-flow"' in page.split("<main>")[0]  # the contents menu names it
    assert [
        html.unescape(re.sub(r"<[^>]+>", "", item)) for item in re.findall(r"<li[^>]*>(.*?)</li>", flow)
    ] == lines
    urls = pr_urls(report)
    slowest = [int(n) for n in re.findall(r"#(\d+)", lines[-1])]
    assert slowest and all(f'<a href="{urls[n]}"' in flow for n in slowest)
    report.stats.review_flow = None  # a clone: its source keeps no reviews
    assert "review-flow" not in render_html(report)
