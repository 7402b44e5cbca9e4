"""Week over week as every renderer says it: the trend in words (Markdown, page), a theme that continues
naming its earlier PRs, the risk follow-ups section, the card's changes and open follow-ups, the thread's
follow-ups. On reports built here (the follow-ups are computed elsewhere: made by hand)."""

from __future__ import annotations

from datetime import date

import pytest
from test_render_digest import CAP, _lark_text, _slack_text
from test_render_support import (
    LANGS,
    LONG_TITLE,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    demo_report,
    markdown_shown,
)

from prdigest.analysis.trend import stats_figures, trend
from prdigest.i18n import texts
from prdigest.models import Report, RiskFollowup
from prdigest.render.html import render_html
from prdigest.render.lark import lark_messages, render_lark_card, render_lark_thread
from prdigest.render.markdown import render_markdown
from prdigest.render.slack import render_slack_message, render_slack_thread, slack_messages
from prdigest.render.week_words import trend_words

EARLIER = (901, 902)  # PRs of earlier weeks, not in the report


def compared(lang: str) -> Report:
    """The demo week against four earlier weeks of 4, 6, 5 and 5 merged PRs, one risk kind rising, with a
    theme that continues and three follow-ups: a severe open one, one addressed and one reverted."""
    report = demo_report(lang)
    own = stats_figures(report.stats)
    label = next(iter(report.stats.risks))
    earlier = [{"merged_prs": n, "key_prs": 1, label: 0 if n == 4 else 1} for n in (4, 6, 5, 5)]
    report.stats.trend = trend(own, earlier)
    report.themes[0].continues = list(EARLIER)
    w36, w35 = date(2026, 8, 31), date(2026, 8, 24)
    report.risk_followups = [
        RiskFollowup(label="failing_checks", title="Flaky test", prs=[901], since=w36, status="open",
                     weeks_open=2),
        RiskFollowup(label=label, title="Option removed", prs=[902], since=w36, status="addressed",
                     by=[report.prs[0].number]),
        RiskFollowup(label=label, title="Risky change", prs=[903], since=w35, status="reverted", by=[904]),
    ]  # fmt: skip
    return report


def test_the_markdown_report_says_the_trend_the_continued_theme_and_the_follow_ups() -> None:
    report = compared("en")
    merged = report.stats.merged_prs
    change = f"{(merged - 5) / 5:+.0%}"
    text = markdown_shown(render_markdown(report))
    assert f"- Merged PRs {merged}, {change} on the 4-week mean; Key PRs {report.stats.key_prs}," in text
    assert "Risks that rose: " in text
    assert "_Continues from #901 #902._" in text
    assert "## Risk follow-ups" in text
    assert "3. **Flaky test** #901: " in text and "open · 2 wk" in text  # after what changed this week
    assert "addressed by #" in text and "reverted by #904" in text


def test_the_chinese_report_says_it_in_chinese() -> None:
    text = markdown_shown(render_markdown(compared("zh")))
    assert "较前 4 周均值" in text and "上升的风险" in text
    assert "延续自 #901 #902" in text and "## 风险跟进" in text and "未解决 · 2 周" in text


def test_no_trend_no_words_and_no_follow_ups_no_section() -> None:
    report = demo_report("en")
    assert trend_words(report, {}) == ""
    text = render_markdown(report)
    assert "4-week mean" not in text and "Risk follow-ups" not in text and "Continues from" not in text


def test_a_longer_period_compares_with_the_previous_one() -> None:
    report = compared("en")
    report.window = report.window.model_copy(update={"since": date(2026, 8, 31)})
    report.stats.trend = trend(stats_figures(report.stats), [{"merged_prs": 2}])
    assert "on the previous period" in render_markdown(report)


def test_the_page_says_it_links_the_earlier_prs_and_charts_the_earlier_mean() -> None:
    report = compared("en")
    page = render_html(report)
    base = report.prs[0].url.rsplit("/", 1)[0]
    merged = page.split('<div class="merged_prs">')[1].split("</div>")[0]  # says what it is compared with
    assert "· 4-week mean</span>" in merged and 'id="followups"' in page and "Risk follow-ups" in page
    assert f'<a href="{base}/901" rel="noopener noreferrer nofollow">#901</a>' in page  # the theme's
    assert f'<a href="{base}/903" rel="noopener noreferrer nofollow">#903</a>' in page  # a follow-up's
    assert 'stroke-dasharray="4 3"' in page and "4-week mean 5" in page


@pytest.mark.parametrize("lang", LANGS)
def test_the_card_shows_the_changes_and_the_open_follow_ups(lang: str) -> None:
    report = compared(lang)
    merged = report.stats.merged_prs
    lark, slack = _lark_text(render_lark_card(report, REPORT_URL)), _slack_text(render_slack_message(report))
    for text in (lark, slack):
        assert f"{merged} ({(merged - 5) / 5:+.0%})" in text
        assert len(text) <= CAP
    open_label = "Open follow-ups" if lang == "en" else "待跟进风险"
    assert f"{open_label} 1" in lark.replace("\n", " ") or f"{open_label}: 1" in lark
    assert open_label in slack


@pytest.mark.parametrize("lang", LANGS)
def test_the_thread_lists_the_changed_and_the_severe_follow_ups(lang: str) -> None:
    report = compared(lang)
    lark = " ".join(str(card) for card in render_lark_thread(report, REPORT_URL))
    slack = " ".join(str(m) for m in render_slack_thread(report, REPORT_URL))
    for text in (lark, slack):
        assert "Flaky test" in text and "Option removed" in text and "Risky change" in text
        assert "/pull/903" in text and "/pull/904" in text  # the earlier PR and what reverted it, linked


@pytest.mark.parametrize("lang", LANGS)
def test_many_long_follow_ups_keep_every_message_within_limits(lang: str) -> None:
    report = compared(lang)
    report.risk_followups = [
        f.model_copy(update={"title": LONG_TITLE, "prs": list(range(1000, 1300))})
        for f in report.risk_followups * 40
    ]
    assert len(_lark_text(render_lark_card(report, REPORT_URL))) <= CAP
    assert len(_slack_text(render_slack_message(report))) <= CAP
    for card in lark_messages(report, REPORT_URL):
        check_lark_card(card)
    for message in slack_messages(report, REPORT_URL):
        check_slack_message(message)


@pytest.mark.parametrize("lang", LANGS)
def test_a_quiet_week_still_shows_the_earlier_weeks_follow_ups(lang: str) -> None:
    report = compared(lang).model_copy(update={"prs": [], "themes": [], "risk_observations": []})
    report.stats = report.stats.model_copy(update={"merged_prs": 0})
    t = texts(lang)
    assert f"## {t['s_followups']}" in render_markdown(report)
    page = render_html(report)
    assert 'id="followups"' in page and 'href="#followups"' in page and "Flaky test" in page
    assert 'id="key-prs"' not in page
