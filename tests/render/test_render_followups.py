"""Risk follow-ups a reader can take in: the Markdown and the chat thread list what changed this week and
the severe open risks, five at most, and count the rest in one line; the page holds them all, collapsed.
On a report of 33 follow-ups made by hand, as an LLM's weeks produced (1 addressed, 32 open, 56 PRs each)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser

import pytest
from test_render_support import LANGS, REPORT_URL, demo_report, markdown_shown

from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.i18n import report_texts
from prdigest.models import Attention, OpenPR, Report, RiskFollowup
from prdigest.render.html import render_html
from prdigest.render.lark import render_lark_thread
from prdigest.render.markdown import render_markdown
from prdigest.render.slack import render_slack_thread
from prdigest.render.week_words import followups_shown

# Severe and mild labels, alternating, so the open ones are of mixed severity.
LABELS = (
    "no_tests",
    "security_sensitive",
    "core_path",
    "failing_checks",
    "dependency_change",
    "tests_removed",
)
ADDRESSED = "Fixed risk AA"


def _title(i: int) -> str:
    return f"Open risk {i:02d}"  # two digits: no title is part of another


def many(lang: str) -> Report:
    """The demo week with 33 follow-ups: one addressed by a PR of the week, 32 open of mixed labels, open
    for 1 to 4 weeks, each citing 56 earlier PRs."""
    report = demo_report(lang)
    by = report.prs[0].number
    followups = [
        RiskFollowup(
            label="no_tests", title=ADDRESSED, prs=[801], since=date(2026, 8, 24), status="addressed", by=[by]
        )
    ]
    for i in range(32):
        weeks = 1 + i % 4
        followups.append(
            RiskFollowup(
                label=LABELS[i % len(LABELS)],
                title=_title(i),
                prs=list(range(1000 + 100 * i, 1056 + 100 * i)),
                since=date(2026, 9, 7) - timedelta(weeks=weeks),
                status="open",
                weeks_open=weeks,
            )
        )
    report.risk_followups = followups
    return report


def _severe_open(report: Report) -> int:
    return sum(1 for f in report.risk_followups if f.status == "open" and RISK_WEIGHT.get(f.label, 0) >= 4)


def _shown_titles(text: str, report: Report) -> list[str]:
    """The follow-ups' titles in ``text``, in the order it shows them."""
    found = [(text.find(f.title), f.title) for f in report.risk_followups if f.title in text]
    return [title for _, title in sorted(found)]


@pytest.mark.parametrize("lang", LANGS)
def test_the_markdown_lists_five_follow_ups_and_counts_the_rest_in_one_line(lang: str) -> None:
    report = many(lang)
    t = report_texts(lang, report.window.since, report.window.until)
    text = markdown_shown(render_markdown(report))
    section = text.split(f"## {t['s_followups']}\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.strip()]
    assert len(lines) <= 6, section
    assert lines[0].startswith(f"1. **{ADDRESSED}** #801: ")  # what changed this week comes first
    assert len(lines) == 6 and all(re.match(r"[1-5]\. \*\*", line) for line in lines[:5])
    assert lines[-1] == "_" + t["fu_rest_open"].format(n=32 - 4) + "_"  # 4 severe open ones are listed
    for line in lines[1:5]:  # three PR numbers, then how many more
        assert len(re.findall(r"#\d+", line.split(":")[0])) == 3 and " +53:" in line, line
    severe = {f.title for f in report.risk_followups if RISK_WEIGHT.get(f.label, 0) >= 4}
    assert set(_shown_titles(section, report)[1:]) <= severe


@pytest.mark.parametrize("lang", LANGS)
def test_the_thread_shows_the_same_five_follow_ups_with_links_and_the_count(lang: str) -> None:
    report = many(lang)
    t = report_texts(lang, report.window.since, report.window.until)
    expected = [f.title for f in followups_shown(report).shown]
    assert len(expected) == 5 and expected[0] == ADDRESSED and _severe_open(report) > 4
    markdown = render_markdown(report)
    rest = t["fu_rest_open"].format(n=28)
    for messages in (render_lark_thread(report, REPORT_URL), render_slack_thread(report, REPORT_URL)):
        text = " ".join(str(m) for m in messages)
        assert _shown_titles(text, report) == expected == _shown_titles(markdown, report)
        assert rest in text
        first = followups_shown(report).shown[1]
        assert f"/pull/{first.prs[0]}" in text and f"/pull/{first.prs[3]}" not in text and "+53" in text


def test_the_longest_open_severe_risks_come_first_and_mild_ones_are_only_counted() -> None:
    report = many("en")
    report.risk_followups[1] = report.risk_followups[1].model_copy(update={"weeks_open": 9})  # no_tests
    shown = followups_shown(report)
    # Open 4 weeks: 07, 19 and 31 security-sensitive (weight 5), then 03 with failing checks (4); 00,
    # open longest, is of a mild label.
    assert [f.title for f in shown.shown] == [ADDRESSED, *map(_title, (7, 19, 31, 3))]
    assert len(shown.left) == 28 and all(f.status == "open" for f in shown.left)


@pytest.mark.parametrize("lang", LANGS)
def test_closed_ones_past_five_are_counted_apart_from_the_open_ones(lang: str) -> None:
    report = many(lang)
    closed, mild = report.risk_followups[0], report.risk_followups[1]
    assert mild.label == "no_tests"
    report.risk_followups = [closed.model_copy(update={"title": f"Fixed risk {i:02d}"}) for i in range(7)]
    report.risk_followups.append(mild)
    t = report_texts(lang, report.window.since, report.window.until)
    text = render_markdown(report)
    words = t["fu_rest_open_one"] + t["trend_sep"] + t["fu_rest_closed"].format(n=2)
    assert f"_{words}_" in text and "Fixed risk 04" in text and "Fixed risk 05" not in text


class _Followups(HTMLParser):
    """The page's follow-ups section: its <details> elements, the text of each item and of the summary,
    and the PR links of each item."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside = self.in_details = self.in_summary = False
        self.details = 0
        self.summary = ""
        self.items: list[str] = []
        self.links: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.inside = dict(attrs).get("id") == "followups"
        if not self.inside:
            return
        if tag == "details":
            self.details += 1
            self.in_details = "open" not in dict(attrs)  # collapsed
        self.in_summary = self.in_summary or tag == "summary"
        if tag == "li" and self.in_details:
            self.items.append("")
            self.links.append([])
        if tag == "a" and self.items:
            self.links[-1].append(dict(attrs).get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        self.inside = self.inside and tag != "section"
        self.in_details = self.in_details and tag != "details"
        self.in_summary = self.in_summary and tag != "summary"

    def handle_data(self, data: str) -> None:
        if self.in_summary:
            self.summary += data
        elif self.items and self.in_details:
            self.items[-1] += data


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_holds_every_follow_up_in_one_collapsed_section(lang: str) -> None:
    report = many(lang)
    t = report_texts(lang, report.window.since, report.window.until)
    page = _Followups()
    page.feed(render_html(report))
    assert page.details == 1 and len(page.items) == 33
    assert page.summary == t["fu_counts"].format(open=32, addressed=1, reverted=0)
    assert page.items[0].startswith(ADDRESSED)  # the same ones first as the chat and the Markdown
    assert {f.title for f in report.risk_followups} == {item.split(" #")[0] for item in page.items}
    base = report.prs[0].url.rsplit("/", 1)[0]
    for item, links, f in zip(
        page.items[1:5], page.links[1:5], followups_shown(report).shown[1:], strict=True
    ):
        assert "+53" in item and links == [f"{base}/{n}" for n in f.prs[:3]], item
    assert all(len(links) == 3 for links in page.links[5:])  # the rest capped alike


def test_a_quiet_page_links_the_follow_ups_from_an_open_prs_link() -> None:
    base = "https://github.com/acme-ml/trainer/pull/"
    waiting = OpenPR(
        number=5000, title="Open", author="a", url=f"{base}5000", created_at=datetime(2026, 9, 1, tzinfo=UTC),
        reason="waiting_review",
    )  # fmt: skip
    report = many("en").model_copy(update={"prs": [], "themes": [], "risk_observations": []})
    report.stats = report.stats.model_copy(update={"merged_prs": 0})
    link = f'<a href="{base}801" rel="noopener noreferrer nofollow">#801</a>'
    assert link not in render_html(report)  # no link to take the repository's from
    report.attention = Attention(open_prs=[waiting])
    assert link in render_html(report)
