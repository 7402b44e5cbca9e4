"""The report page: every section, PR anchors and links, SVG charts, nothing fetched; and in headless Chromium
a page that renders (not blank), requests nothing but itself, logs no error and fits a phone's width."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import pytest
from chromium_support import (
    CHROMIUM,
    DESKTOP,
    PHONE,
    chromium,
    errors,
    evaluate,
    open_page,
    png_colours,
    screenshot,
)
from test_render_support import demo_report, hostile_report, scaled_prs, week_report

from prdigest.i18n import texts
from prdigest.models import Report
from prdigest.render.charts import PALETTE, Bar, column_chart, hbar_chart
from prdigest.render.html import render_html
from prdigest.render.views import key_prs

SECTIONS = ("s_summary", "s_themes", "s_trends", "s_risks", "s_key_prs", "s_recommendations")
# Read at import: the autouse clean_env fixture removes every PRDIGEST_* variable before a test runs.
ARTIFACTS = os.environ.get("PRDIGEST_ARTIFACTS")


def _h2(page: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", page)


def test_every_section_in_the_markdown_order(demo: Report) -> None:
    t = texts(demo.lang)
    page = render_html(demo)
    assert _h2(page) == [t[key] for key in SECTIONS] + [t["rf_heading"], t["s_figures"]]
    assert page.count("<svg") == 2  # per day, week over week (one tag holds 22 of 30 PRs: a line, no chart)
    assert f'<html lang="{"zh-CN" if demo.lang == "zh" else "en"}">' in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


def test_warnings_open_the_summary(demo: Report) -> None:
    page = render_html(demo.model_copy(update={"warnings": ["sync stopped at 1,000 PRs: <b>"]}))
    summary = page.split('<section id="summary">')[1]
    assert summary.index('<p class="warn u">⚠ sync stopped at 1,000 PRs: &lt;b&gt;</p>') < summary.index(
        "lead"
    )


def test_every_pr_has_an_anchor_and_a_link_to_itself(demo: Report) -> None:
    page = render_html(demo)
    for p in demo.prs:
        row = page.split(f'<tr id="pr-{p.number}"')[1].split("</tr>")[0]
        assert f'<a href="{p.url}" rel="noopener noreferrer nofollow">#{p.number}</a>' in row
    first = demo.themes[0].prs[0]
    url = next(p.url for p in demo.prs if p.number == first)
    assert f'<a href="{url}" rel="noopener noreferrer nofollow">#{first}</a>' in page.split("<h3")[1]
    # A source that knows no links (a clone of no known origin): each "#N" points at its PR's row instead.
    unlinked = demo.model_copy(update={"prs": [p.model_copy(update={"url": None}) for p in demo.prs]})
    page = render_html(unlinked)
    assert "https://" not in page
    for p in key_prs(unlinked):  # the key-PR table and theme stories point at the anchors
        assert f'<a href="#pr-{p.number}">#{p.number}</a>' in page.split('id="key-prs"')[1]
    assert f'<a href="#pr-{first}">#{first}</a>' in page.split("<h3")[1]


def test_the_page_fetches_nothing(demo: Report) -> None:
    page = render_html(demo)
    assert not re.search(r"<(script|link|img|iframe|object|embed)\b", page)
    assert not re.search(r"\bsrc=|url\(|@import", page)
    external = re.findall(r'href="(https?://[^"]*)"', page)
    assert external and set(external) <= {p.url for p in demo.prs}  # only links to the PRs
    assert "default-src 'none'" in page  # and a CSP that would block anything else


def test_no_history_no_trend_chart_and_an_empty_week_has_only_the_summary() -> None:
    report = week_report(scaled_prs(40), "en", history=False)
    assert render_html(report).count("<svg") == 1  # per day
    empty = render_html(week_report([], "en"))
    t = texts("en")
    assert _h2(empty) == [t["s_summary"], t["s_figures"]]
    assert t["none"] in empty and empty.count("<svg") == 1  # earlier weeks; no chart of seven days of zero


def test_a_2000_pr_page_lists_every_pr() -> None:
    report = week_report(scaled_prs(2000), "zh")
    page = render_html(report)
    assert len(re.findall(r'<tr id="pr-\d+"', page)) == 2000


def test_bar_charts_lay_out_the_numbers_they_are_given() -> None:
    svg = hbar_chart([Bar("testing", 22, "22"), Bar("<docs>", 11, "11"), Bar("ci", 0, "0")], title="Tags")
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == pytest.approx(2 * widths[1]) and widths[2] == 0
    assert "&lt;docs&gt;" in svg and "<docs>" not in svg
    fills = re.findall(r'fill="(#[0-9a-f]{6})"', svg)
    assert fills == list(PALETTE[:3])
    weeks = column_chart([Bar("08-10", 30), Bar("08-17", 15), Bar("now", 20)], title="W", highlight_last=True)
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', weeks)]
    assert heights[0] == pytest.approx(2 * heights[1])
    assert re.findall(r'rx="3" fill="(#[0-9a-f]{6})"', weeks)[-1] != PALETTE[0]  # this week stands out


# --- in a browser ------------------------------------------------------------------------------


BROKEN_WORDS = """(() => {
  const broken = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.textContent.matchAll(/[A-Za-z0-9_.]{2,}/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const boxes = Array.from(range.getClientRects()).filter(r => r.width > 0);
      const lines = new Set(boxes.map(r => Math.round(r.bottom)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
  return broken;
})()"""


@pytest.mark.e2e  # headless Chromium
@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium fonts-noto-cjk)"
)
def test_the_page_in_headless_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = Path(ARTIFACTS) if ARTIFACTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    page = tmp_path / "report.html"
    page.write_text(render_html(demo_report("zh")), encoding="utf-8")
    hostile = tmp_path / "hostile.html"
    hostile.write_text(render_html(hostile_report("en")), encoding="utf-8")
    balanced = demo_report("en")  # no tag dominates: the tag chart is drawn too
    balanced.stats.tags = {"feature": 10, "bugfix": 9, "docs": 8, "a-repository-own-tag": 5}
    charts = tmp_path / "charts.html"
    charts.write_text(render_html(balanced), encoding="utf-8")
    with chromium(tmp_path / "profile") as devtools:
        phone = open_page(devtools, page.as_uri(), PHONE)
        # The six sections, the review flow and the appendix.
        assert evaluate(devtools, phone, "document.querySelectorAll('main section').length") == 8
        assert evaluate(devtools, phone, "document.documentElement.scrollWidth <= window.innerWidth")
        assert evaluate(devtools, phone, BROKEN_WORDS) == []
        phone_png = screenshot(devtools, phone, out / "report_page_phone.png")
        desktop = open_page(devtools, page.as_uri(), DESKTOP)
        assert evaluate(devtools, desktop, BROKEN_WORDS) == []
        desktop_png = screenshot(devtools, desktop, out / "report_page.png")
        tagged = open_page(devtools, charts.as_uri(), PHONE)
        assert evaluate(devtools, tagged, "document.querySelectorAll('main svg.chart').length") == 3
        assert evaluate(devtools, tagged, "document.documentElement.scrollWidth <= window.innerWidth")
        assert evaluate(devtools, tagged, BROKEN_WORDS) == []
        evil = open_page(devtools, hostile.as_uri(), PHONE)
        assert (
            evaluate(devtools, evil, "document.querySelectorAll('script, img, iframe, object').length") == 0
        )
        assert evaluate(devtools, evil, "document.documentElement.scrollWidth <= window.innerWidth")
        requested = [e["request"]["url"] for e in devtools.of("Network.requestWillBeSent")]
        assert requested == [page.as_uri(), page.as_uri(), charts.as_uri(), hostile.as_uri()]
        assert errors(devtools) == []
        assert not devtools.of("Page.javascriptDialogOpening")
    assert png_colours(phone_png) >= 16  # text, header colour, figure boxes, chips: not a blank page
    assert struct.unpack(">II", desktop_png[16:24]) == (DESKTOP["width"], DESKTOP["height"])
    assert len(desktop_png) > 50_000  # a blank page of that size compresses to a few kB
    with capsys.disabled():
        print(f"\nscreenshots: {out / 'report_page.png'} {out / 'report_page_phone.png'}")
