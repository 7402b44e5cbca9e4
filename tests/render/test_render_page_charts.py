"""The report page shows each figure once, as a chart only where a chart tells more than a line of text,
in the report's language, with every PR number a link."""

from __future__ import annotations

import re
from datetime import date, timedelta
from html.parser import HTMLParser

import pytest
from test_render_support import demo_report, scaled_prs, week_report

from prdigest.analysis.taxonomy import TAGS
from prdigest.i18n import texts
from prdigest.i18n.tags import TAG_NAMES, tag_name, tag_share
from prdigest.models import Report, Stats
from prdigest.render.chart_choice import dominant_tag
from prdigest.render.charts import WIDTH
from prdigest.render.html import render_html

_CJK = re.compile(r"[\u3400-\u9fff]")


class _Headings(HTMLParser):
    """The text of every heading of the page's <main> (h2, h3, dt), in order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3", "dt"):
            self.found.append("")
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._open and tag == self._open[-1]:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            self.found[-1] += data


def headings(page: str) -> list[str]:
    parser = _Headings()
    parser.feed(page.split("<main>")[1])
    return [h.strip() for h in parser.found]


def svg(page: str, name: str) -> str | None:
    """The chart whose accessible name is `name`, or None."""
    found = re.search(rf'<svg [^>]*aria-label="{re.escape(name)}".*?</svg>', page)
    return found.group(0) if found else None


def with_tags(report: Report, tags: dict[str, int]) -> Report:
    return report.model_copy(update={"stats": report.stats.model_copy(update={"tags": tags})})


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_dominant_tag_is_one_line_not_a_chart(lang: str) -> None:
    report = demo_report(lang)
    assert report.stats.tags["testing"] == 22 and report.stats.merged_prs == 30  # the demo week
    page = render_html(report)
    t = texts(lang)
    assert svg(page, t["tags"]) is None
    line = {"zh": "30 个 PR 中有 22 个带「测试」标签", "en": "22 of 30 PRs are testing"}[lang]
    assert f'<p class="one-line">{line}</p>' in page
    # the other tags follow as chips, the dominant one is not repeated
    tags_dd = page.split(f"<dt>{t['tags']}</dt>")[1].split("</dd>")[0]
    assert tags_dd.count('class="chip"') == len(report.stats.tags) - 1
    assert f'<span class="chip">{tag_name("testing", lang)} ' not in tags_dd


@pytest.mark.parametrize(
    ("tags", "chart"),
    [
        ({"feature": 14, "bugfix": 12, "docs": 9}, True),  # 14 of 30: no tag holds half
        ({"feature": 15, "bugfix": 12, "docs": 9}, False),  # 15 of 30: half the PRs
        ({"feature": 9, "bugfix": 8}, False),  # two tags: a line names both
        ({f"area-{i}": 3 for i in range(14)}, True),  # many small tags: every one a bar
    ],
)
def test_the_tag_chart_only_when_no_tag_dominates(tags: dict[str, int], chart: bool) -> None:
    report = with_tags(demo_report("zh"), tags)
    page = render_html(report)
    drawn = svg(page, texts("zh")["tags"])
    assert (drawn is not None) == chart
    assert (dominant_tag(report.stats) is None) == chart
    if drawn:
        names = re.findall(r"<title>([^<:]+): \d+</title>", drawn)
        assert names == [tag_name(tag, "zh") for tag in tags]
        assert 'class="one-line"' not in page
        # a row per bar: the chart is as tall as its tags need
        assert f'height="{26 * len(tags) + 8}"' in drawn.split(">")[0]


def test_no_tag_line_or_chart_without_tags() -> None:
    assert dominant_tag(Stats()) is None
    assert dominant_tag(Stats(merged_prs=3, tags={"docs": 1})) == ("docs", 1)


def test_the_per_day_chart_has_a_bar_per_day_of_its_merges() -> None:
    report = demo_report("en")
    page = render_html(report)
    drawn = svg(page, texts("en")["per_day"])
    assert drawn is not None
    bars = dict(re.findall(r"<title>(\d\d-\d\d): (\d+)</title>", drawn))
    assert {day: int(n) for day, n in bars.items()} == {
        f"{d:%m-%d}": n for d, n in report.stats.per_day.items()
    }
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', drawn)]
    counts = list(report.stats.per_day.values())
    assert [h / heights[0] for h in heights] == pytest.approx([n / counts[0] for n in counts])
    width = int(re.search(r'width="(\d+)"', drawn).group(1))  # type: ignore[union-attr]
    assert width <= 20 + 64 * len(counts)  # columns of a bounded width, not stretched to the page


def test_one_day_of_merges_is_a_line_and_an_empty_week_has_neither() -> None:
    prs = scaled_prs(5)
    prs = [
        p.model_copy(update={"merged_at": prs[0].merged_at + timedelta(minutes=i)}) for i, p in enumerate(prs)
    ]
    report = week_report(prs, "en")
    day = next(d for d, n in report.stats.per_day.items() if n)
    page = render_html(report)
    t = texts("en")
    assert svg(page, t["per_day"]) is None
    per_day = page.split(f"<dt>{t['per_day']}</dt>")[1].split("</dd>")[0]
    assert f'<span class="chip">{day:%m-%d} <b>5</b></span>' in per_day
    empty = render_html(week_report([], "en"))
    assert t["per_day"] not in empty and svg(empty, t["tags"]) is None


def test_no_trend_chart_of_one_period() -> None:
    report = demo_report("en")
    t = texts("en")
    assert svg(render_html(report), t["chart_weeks"]) is not None
    alone = report.model_copy(update={"history": report.history[-1:]})
    assert svg(render_html(alone), t["chart_weeks"]) is None


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_heading_once(lang: str) -> None:
    report = with_tags(demo_report(lang), {"feature": 10, "bugfix": 9, "docs": 8})  # the tag chart too
    found = headings(render_html(report))
    assert len(found) == len(set(found)), found
    t = texts(lang)
    for key in ("tags", "authors", "per_day", "chart_weeks", "risk_counts", "s_summary", "s_figures"):
        assert found.count(t[key]) == 1, key
    assert "<figcaption" not in render_html(report)  # a chart is named by its heading alone


def test_every_built_in_tag_has_a_chinese_name_and_a_repositorys_own_stays_as_written() -> None:
    assert set(TAG_NAMES["zh"]) == set(TAGS)
    assert all(_CJK.search(name) or name == "CI" for name in TAG_NAMES["zh"].values())
    assert tag_name("rollout", "zh") == "rollout" and tag_name("testing", "en") == "testing"
    assert tag_share("rollout", 9, 41, "zh") == "41 个 PR 中有 9 个带「rollout」标签"


def test_the_chinese_page_names_tags_in_chinese() -> None:
    report = demo_report("zh")
    report.prs[0].tags = [*report.prs[0].tags, "rollout"]
    report = with_tags(report, {**report.stats.tags, "rollout": 1})
    page = render_html(report)
    for p in report.prs:
        row = page.split(f'<tr id="pr-{p.number}"')[1].split("</tr>")[0]
        cell = row.split(f'data-label="{texts("zh")["tags"]}">')[1].split("</td>")[0]
        assert cell == ", ".join(tag_name(tag, "zh") for tag in p.tags)
        assert not set(cell.split(", ")) & (set(TAGS) - {"ci"})  # no English built-in tag left
    assert "rollout</td>" in page  # the repository's own tag as written
    figures = page.split('<section id="figures">')[1].split("<table")[0]  # the distributions
    assert "测试" in figures and not re.search(r">\s*(testing|bugfix|feature)\b", figures)


def test_every_pr_number_on_the_page_is_a_link() -> None:
    report = demo_report("en")
    first, second = report.prs[0].number, report.prs[1].number
    report.prs[2].title = f"Follow-up to #{first}"
    report.prs[2].summary = f"Fixes what #{second} left open."
    report.prs[2].watch = [f"re-check #{first}"]
    report.themes[0].title = f"The #{first} line"
    report.themes[0].trend = f"grows since #{second}"
    if report.risk_observations:
        report.risk_observations[0].title = f"Watch #{second}"
    report.warnings = [f"#{first} was re-read"]
    page = render_html(report)
    main = page.split("<main>")[1]
    unlinked = re.findall(r"(?<![&\w\"])#(\d+)", re.sub(r"<a [^>]*>#\d+</a>", "", main))
    assert unlinked == []
    # to the PR itself, which the source links
    assert main.count(f'<a href="{report.prs[0].url}" rel="noopener noreferrer nofollow">#{first}</a>') >= 5


def test_chart_sizes_follow_their_bars() -> None:
    report = with_tags(demo_report("en"), {"feature": 10, "bugfix": 9, "docs": 8})
    tags = svg(render_html(report), "Tags")
    assert tags is not None and 'height="86"' in tags.split(">")[0]  # three rows, not a 4:3 box
    days = {date(2026, 1, 1) + timedelta(days=i): 1 for i in range(90)}
    long = week_report(scaled_prs(40), "en").model_copy(update={"stats": Stats(merged_prs=90, per_day=days)})
    quarter = svg(render_html(long), "Merged per day")
    assert quarter is not None and f'width="{WIDTH}"' in quarter.split(">")[0]  # many days share the width
