"""Open PRs needing attention and dismissed risks in every output: the card's one line (a red default
branch as a warning), a thread reply, the Markdown section and the page's, each reason in zh and en; a
source that cannot tell says so in the list of what it could not supply; the risks admins dismissed are a
footnote naming who. Nothing of it shows when the report has none."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from test_render_support import (
    LANGS,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    demo_report,
    slack_texts,
    strings_of,
)
from test_render_team import part, team_of

from prdigest.i18n import report_texts
from prdigest.models import Attention, ChecksState, Dismissal, OpenPR, Report
from prdigest.render.html import render_html
from prdigest.render.lark import lark_messages, render_lark_card
from prdigest.render.markdown import render_markdown
from prdigest.render.preview import lark_preview, slack_preview, visible_text
from prdigest.render.slack import render_slack_message, slack_messages

URL = "https://github.com/acme-ml/trainer/pull/{}"
OPENED = datetime(2026, 9, 1, 9, tzinfo=UTC)
REASONS = {
    "zh": ("等待评审 8 天", "已批准未合并 4 天", "大改动未评审"),
    "en": ("waiting 8 days for review", "approved, not merged for 4 days", "large and unreviewed"),
}


def open_pr(number: int, reason: str, days: int, title: str = "Add a rollout cache") -> OpenPR:
    return OpenPR.model_validate(
        {"number": number, "title": title, "author": "alice", "url": URL.format(number), "created_at": OPENED,
         "reason": reason, "waiting_days": days, "additions": 900, "deletions": 40}
    )  # fmt: skip


def attention(red: bool = False) -> Attention:
    checks = ChecksState(state="FAILURE", failing=["build", "lint"]) if red else ChecksState(state="SUCCESS")
    prs = [
        open_pr(12, "waiting_review", 8),
        open_pr(15, "approved_not_merged", 4),
        open_pr(21, "large_unreviewed", 2),
    ]
    return Attention(open_prs=prs, default_branch="main", default_branch_checks=checks)


def with_attention(lang: str, red: bool = False) -> Report:
    report = demo_report(lang)
    report.attention = attention(red)
    return report


def test_each_reason_reads_in_both_languages() -> None:
    for lang in LANGS:
        md = render_markdown(with_attention(lang))
        t = report_texts(lang, *_window())
        assert f"## {t['att_heading']}" in md
        section = md.split(f"## {t['att_heading']}")[1].split("\n## ")[0]
        for n, reason in zip((12, 15, 21), REASONS[lang], strict=True):
            [line] = [line for line in section.splitlines() if f"[#{n}](" in line]  # linked to the PR
            assert reason in line and "alice" in line


def _window() -> tuple:
    report = demo_report("en")
    return report.window.since, report.window.until


@pytest.mark.parametrize("lang", LANGS)
def test_the_card_has_one_line_naming_the_pr_waiting_8_days(lang: str) -> None:
    report = with_attention(lang)
    lark, slack = render_lark_card(report, REPORT_URL), render_slack_message(report, REPORT_URL)
    check_lark_card(lark)
    check_slack_message(slack)
    for text in (visible_text(lark_preview(lark)), visible_text(slack_preview(slack))):
        assert len(text) <= 1200
        assert f"#12 {REASONS[lang][0]}" in text and "#21" not in text  # two named, the rest "…"
    assert f"[#12]({URL.format(12)})" in json.dumps(lark, ensure_ascii=False)
    assert f"<{URL.format(12)}|#12>" in json.dumps(slack, ensure_ascii=False)


@pytest.mark.parametrize("lang", LANGS)
def test_a_red_default_branch_is_a_warning_on_the_card_the_thread_and_the_page(lang: str) -> None:
    report = with_attention(lang, red=True)
    warning = report_texts(lang, *_window())["att_red"].split("{")[0].strip()
    assert warning in visible_text(lark_preview(render_lark_card(report)))
    assert warning in visible_text(slack_preview(render_slack_message(report)))
    thread = "\n".join(s for m in slack_messages(report)[1:] for s in slack_texts(m))
    assert warning in thread and "build, lint" in thread
    page = render_html(report)
    assert 'id="attention"' in page and "build, lint" in page.split('id="attention"')[1]
    green = with_attention(lang)
    assert warning not in render_markdown(green) and warning not in render_html(green)


@pytest.mark.parametrize("lang", LANGS)
def test_the_thread_ends_with_a_reply_listing_every_open_pr(lang: str) -> None:
    report = with_attention(lang)
    t = report_texts(lang, *_window())
    last = lark_messages(report)[-1]
    check_lark_card(last)
    assert last["header"]["title"]["content"] == t["att_heading"]
    text = visible_text(lark_preview(last))
    assert all(reason in text for reason in REASONS[lang])
    assert all(f"[#{n}]({URL.format(n)})" in "".join(strings_of(last)) for n in (12, 15, 21))
    slack_last = slack_messages(report)[-1]
    check_slack_message(slack_last)
    assert slack_last["blocks"][0]["text"]["text"] == t["att_heading"]


def test_the_page_lists_every_open_pr_linked_with_why() -> None:
    page = render_html(with_attention("en"))
    section = page.split('<section id="attention">')[1].split("</section>")[0]
    for n, reason in zip((12, 15, 21), REASONS["en"], strict=True):
        assert f'<a href="{URL.format(n)}" rel="noopener noreferrer nofollow">#{n}</a>' in section
        assert reason in section
    assert '<a href="#attention">' in page


def test_untrusted_titles_of_open_prs_stay_inert() -> None:
    report = demo_report("en")
    report.attention = Attention(open_prs=[open_pr(12, "waiting_review", 8, title="@all <script>x</script>")])
    assert "<script>" not in render_html(report)
    assert "`@all`" in render_markdown(report) and "<script>" not in render_markdown(report)
    lark = json.dumps(lark_messages(report), ensure_ascii=False)
    assert "@all" not in lark and "<script>" not in lark


def test_nothing_shows_when_nothing_needs_attention() -> None:
    plain = demo_report("en")
    quiet = demo_report("en")
    quiet.attention = Attention(open_prs=[], default_branch_checks=ChecksState(state="SUCCESS"))
    assert render_markdown(quiet) == render_markdown(plain)
    assert render_html(quiet) == render_html(plain)
    assert lark_messages(quiet) == lark_messages(plain)
    assert slack_messages(quiet) == slack_messages(plain)


def test_a_source_that_cannot_tell_adds_one_item_to_what_it_could_not_supply() -> None:
    report = demo_report("en")
    report.unavailable = [*report.unavailable, "open_prs"]
    t = report_texts("en", *_window())
    [line] = [line for line in render_markdown(report).splitlines() if t["unavailable"].split("{")[0] in line]
    assert line.rstrip("_").endswith("open_prs")
    assert t["att_heading"] not in render_markdown(report)


@pytest.mark.parametrize("lang", LANGS)
def test_dismissed_risks_are_a_footnote_naming_who(lang: str) -> None:
    report = demo_report(lang)
    report.dismissed = [
        Dismissal(
            repo=report.repo, number=12, label="no_tests", by="alice", at=datetime(2026, 11, 30, tzinfo=UTC)
        )
    ]
    t = report_texts(lang, *_window())
    md = render_markdown(report)
    footnote = md.split(t["dis_heading"])[1]
    assert "#12" in footnote and "no\\_tests" in footnote and "alice" in footnote and "2026-11-30" in footnote
    page = render_html(report)
    assert "alice" in page.split('id="dismissed"')[1] and "2026-11-30" in page.split('id="dismissed"')[1]
    assert t["dis_heading"] not in render_markdown(demo_report(lang))


def test_in_a_team_digest_each_repository_has_its_own_section() -> None:
    busy, quiet = part("trainer", 12, "en"), part("serving", 3, "en")
    busy.attention = attention()
    team = team_of([busy, quiet], "en")
    md = render_markdown(team)
    t = report_texts("en", *_window())
    assert md.split("\n## acme-ml/trainer\n")[1].split("\n## ")[0].count(f"### {t['att_heading']}") == 1
    assert t["att_heading"] not in md.split("\n## acme-ml/serving\n")[1]
    page = render_html(team)
    assert 'id="r1-attention"' in page and 'id="r2-attention"' not in page
    card = visible_text(lark_preview(render_lark_card(team)))
    assert f"trainer #12 {REASONS['en'][0]}" in card


def test_a_card_with_open_prs_has_a_button_that_asks_for_them() -> None:
    from prdigest.bot.app import action_intent

    for lang in LANGS:
        report = with_attention(lang)
        values = [
            e["value"] for b in render_slack_message(report)["blocks"] if b["type"] == "actions"
            for e in b["elements"] if "value" in e
        ]  # fmt: skip
        [opened] = [json.loads(v) for v in values if json.loads(v)["action"] == "open"]
        intent = action_intent(opened)
        assert (intent.command, intent.repo, intent.lang) == ("open", report.repo, lang)
        assert '"action": "open"' not in json.dumps(render_lark_card(demo_report(lang)))  # none open: none
