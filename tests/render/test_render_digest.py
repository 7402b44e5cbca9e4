"""The weekly card as a digest of one phone screen and its thread, on Lark and Slack: at most 1,200
visible characters for a week of any size, the judgement first with its level and what drives it,
the title once, four buttons at most; the thread holds every key PR and every risk, every PR number a
link; in headless Chromium the preview of either fits 1,400 px at 390 px wide."""

from __future__ import annotations

import html
import json
import os
import re
from datetime import date
from pathlib import Path

import pytest
from chromium_support import CHROMIUM, PHONE, chromium, evaluate, open_page, screenshot
from test_render_injection import _assert_lark_inert as assert_lark_inert
from test_render_injection import _assert_slack_inert as assert_slack_inert
from test_render_support import (
    LANGS,
    LONG_TITLE,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    demo_report,
    hostile_report,
    markdown_shown,
    scaled_prs,
    slack_texts,
    strings_of,
    week_report,
)

from prdigest.analysis.risks.level import MANY, level_driver, level_sentence
from prdigest.i18n import report_texts, risk_name, texts
from prdigest.models import Report, WindowOut
from prdigest.render.html import render_html
from prdigest.render.lark import (
    BODY_LIMIT,
    lark_messages,
    lark_request_body_bytes,
    render_lark_card,
    render_lark_thread,
)
from prdigest.render.markdown import render_markdown
from prdigest.render.preview import lark_preview, preview_page, slack_preview, visible_text
from prdigest.render.slack import render_slack_message, render_slack_thread, slack_messages
from prdigest.render.views import key_prs, pr_urls

CAP = 1200
PHONE_PX = 1400
ARTIFACTS = os.environ.get("PRDIGEST_ARTIFACTS")


def _lark_text(card: dict) -> str:
    return visible_text(lark_preview(card))


def _slack_text(message: dict) -> str:
    return visible_text(slack_preview(message))


def _oversized(lang: str) -> Report:
    """Every text of the week far too long for a card."""
    report = demo_report(lang)
    for theme in report.themes:
        theme.title = theme.trend = LONG_TITLE
    for obs in report.risk_observations:
        obs.title = obs.evidence = LONG_TITLE
    report.warnings = [LONG_TITLE] * 5
    return report


@pytest.mark.parametrize("url", [None, REPORT_URL], ids=["no-url", "url"])
def test_the_card_holds_at_most_1200_visible_characters_whatever_the_week(
    week: Report, url: str | None
) -> None:
    assert len(_lark_text(render_lark_card(week, url))) <= CAP
    assert len(_slack_text(render_slack_message(week, url))) <= CAP


@pytest.mark.parametrize("lang", LANGS)
def test_long_texts_are_cut_to_keep_the_cap(lang: str) -> None:
    for report in (_oversized(lang), hostile_report(lang)):
        lark, slack = (
            _lark_text(render_lark_card(report, REPORT_URL)),
            _slack_text(render_slack_message(report)),
        )
        assert len(lark) <= CAP and len(slack) <= CAP
        assert "…" in lark and "…" in slack


@pytest.mark.parametrize("lang", LANGS)
def test_texts_citing_hundreds_of_prs_keep_every_message_within_limits(lang: str) -> None:
    report = week_report(scaled_prs(400), lang, history=False)
    every = " ".join(f"#{p.number}" for p in report.prs)
    report.summary = every
    for obs in report.risk_observations:
        obs.evidence = every
    for rec in report.recommendations:
        rec.text = every
    for card in lark_messages(report, REPORT_URL):
        check_lark_card(card)
        assert lark_request_body_bytes(card) <= BODY_LIMIT
    for message in slack_messages(report, REPORT_URL):
        check_slack_message(message)


def test_visible_text_leaves_out_link_targets_and_markup() -> None:
    card = {
        "header": {"title": {"content": "t"}},
        "body": {"elements": [{"tag": "markdown", "content": "**a** [#1](https://x.example/pull/1) &#35;2"}]},
    }
    assert _lark_text(card) == "t a #1 #2"
    message = {
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*a* <https://x/pull/1|#1> &lt;"}}]
    }
    assert _slack_text(message) == "a #1 <"


def test_the_judgement_comes_first_with_the_level_and_what_drives_it(demo: Report) -> None:
    t = report_texts(demo.lang, demo.window.since, demo.window.until)
    driver = level_driver(demo)
    assert demo.risk_level == "high" and driver is not None
    assert driver.label == "config_breaking"  # what breaks users, not the weightier security change
    reason = t["level_high"].split("{")[0]
    first = render_lark_card(demo)["body"]["elements"][0]["content"]
    assert reason in visible_text(first) and risk_name(driver.label, demo.lang) in visible_text(first)
    urls = pr_urls(demo)
    assert all(f"[#{n}]({urls[n]})" in first for n in driver.prs)
    section = render_slack_message(demo)["blocks"][1]["text"]["text"]
    assert section.startswith(f"🔴 *{t['risk_high']}* · ") and reason in section
    assert all(f"<{urls[n]}|#{n}>" in section for n in driver.prs)


def test_the_level_names_the_kind_that_set_it(demo: Report) -> None:
    assert level_driver(demo.model_copy(update={"level_cause": None})) == demo.risk_observations[0]
    assert level_driver(demo.model_copy(update={"risk_observations": []})) is None
    t = report_texts(demo.lang, demo.window.since, demo.window.until)
    calm = demo.model_copy(update={"risk_level": "low", "risk_observations": []})
    assert t["level_low_none"] in _lark_text(render_lark_card(calm))


def test_the_level_and_its_cause_are_one_sentence_in_card_thread_markdown_and_page(demo: Report) -> None:
    # One judgement, decided in the report: the four renderings say it in the same words.
    t = report_texts(demo.lang, demo.window.since, demo.window.until)
    said = level_sentence(demo, t)
    assert demo.level_cause == "config_breaking" and risk_name("config_breaking", demo.lang) in said
    card = _lark_text(render_lark_card(demo))
    thread = " ".join(_lark_text(m) for m in render_lark_thread(demo))
    markdown = markdown_shown(render_markdown(demo)).replace("\\", "")
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(demo)))
    for name, text in (("card", card), ("thread", thread), ("markdown", markdown), ("page", page)):
        assert re.sub(r"\s+", "", said) in re.sub(r"\s+", "", text), name  # Chinese text is spaced apart
    # Another cause (a week whose observations came back in another order) is said alike everywhere.
    other = demo.model_copy(update={"level_cause": demo.risk_observations[-1].label})
    again = level_sentence(other, t)
    assert again != said and again in _lark_text(render_lark_card(other))


def test_a_generated_week_says_its_cause_alike_in_card_and_markdown(week: Report) -> None:
    # Weeks where options break users and many tests went too: the card once named the one, the Markdown
    # the other.
    t = report_texts(week.lang, week.window.since, week.window.until)
    card = re.sub(r"\s+", "", _lark_text(render_lark_card(week)))
    if not week.stats.merged_prs:  # a week without PRs says so instead
        assert re.sub(r"\s+", "", t["none"]) in card
        return
    said = re.sub(r"\s+", "", level_sentence(week, t))
    assert said in card and said in re.sub(
        r"\s+", "", markdown_shown(render_markdown(week)).replace("\\", "")
    )


def test_many_options_or_tests_gone_at_once_are_the_reason(week: Report) -> None:
    counts = {o.label: len(o.prs) for o in week.risk_observations}
    many = {label for label, n in MANY.items() if counts.get(label, 0) >= n}
    if many:  # the larger weeks: high by count, unless something breaks users outright
        driver = level_driver(week)
        assert week.risk_level == "high" and driver is not None and driver.label == week.level_cause
        assert driver.label in many | {"config_breaking", "perf_regression"}


def test_at_most_five_buttons(week: Report) -> None:
    for url in (None, REPORT_URL):
        card = render_lark_card(week, url)
        lark = [s for s in strings_of(card) if s in ("open_url", "callback")]
        message = render_slack_message(week, url)
        slack = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert 1 <= len(lark) <= 5 and 1 <= len(slack) <= 5


def test_the_title_names_the_week_once(demo: Report) -> None:
    title = f"{demo.repo} · 2026-W37"
    for text in (_lark_text(render_lark_card(demo, REPORT_URL)), _slack_text(render_slack_message(demo))):
        assert text.count(demo.repo) == 1 and title in text
        assert str(demo.window.since) not in text and "09-07" not in text
    fortnight = demo.model_copy(
        update={"window": WindowOut(since=date(2026, 9, 1), until=date(2026, 9, 14), tz="UTC")}
    )
    text = _lark_text(render_lark_card(fortnight))
    assert text.count("2026-09-01") == 1 and text.count("2026-09-14") == 1 and "W37" not in text


def test_the_thread_holds_every_key_pr_and_every_risk(week: Report) -> None:
    urls = pr_urls(week)
    lark_thread = render_lark_thread(week, REPORT_URL)
    lark = "\n".join(s for card in lark_thread for s in strings_of(card))
    slack = "\n".join(s for m in render_slack_thread(week, REPORT_URL) for s in slack_texts(m))
    for p in key_prs(week):
        assert f"[#{p.number}]({urls[p.number]})" in lark and f"<{urls[p.number]}|#{p.number}>" in slack
    shown = "\n".join(_lark_text(card) for card in lark_thread)
    for o in week.risk_observations:
        assert o.title in shown and o.title in slack


def test_a_top_n_subscription_limits_the_threads_key_prs(demo: Report) -> None:
    three = demo.model_copy(update={"card_prs": 3})
    [first, *_] = render_lark_thread(three)
    [table] = [e for e in first["body"]["elements"] if e["tag"] == "table"]
    assert len(table["rows"]) == 3
    more = texts(demo.lang)["more_in_full"].format(n=demo.stats.key_prs - 3)
    assert more in _lark_text(first)


def test_messages_are_the_card_then_its_thread(demo: Report) -> None:
    assert lark_messages(demo, REPORT_URL) == [
        render_lark_card(demo, REPORT_URL),
        *render_lark_thread(demo, REPORT_URL),
    ]
    assert slack_messages(demo) == [render_slack_message(demo), *render_slack_thread(demo)]
    assert len(render_slack_thread(demo)) == 3  # key PRs, risks, summary and advice


@pytest.mark.parametrize("lang", LANGS)
def test_the_thread_is_inert(lang: str) -> None:
    report = hostile_report(lang)
    for card in lark_messages(report, REPORT_URL):
        assert_lark_inert(card)
        for row in (r for e in card["body"]["elements"] if e["tag"] == "table" for r in e["rows"]):
            assert not re.search(r"<|\]\((?!https://github\.com/acme-ml/trainer/pull/\d+\))", row["summary"])
    for message in slack_messages(report, REPORT_URL):
        assert_slack_inert(message)


@pytest.mark.e2e  # headless Chromium
@pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium fonts-noto-cjk)"
)
def test_the_card_fits_a_phone_screen_in_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = Path(ARTIFACTS) if ARTIFACTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    pages = {}
    for lang in LANGS:
        report = demo_report(lang)
        pages[f"lark_card_{lang}"] = preview_page(*map(lark_preview, lark_messages(report, REPORT_URL)[:2]))
        pages[f"slack_message_{lang}"] = preview_page(
            *map(slack_preview, slack_messages(report, REPORT_URL)[:2])
        )
    with chromium(tmp_path / "profile") as devtools:
        for name, page in pages.items():
            path = tmp_path / f"{name}.html"
            path.write_text(page, encoding="utf-8")
            session = open_page(devtools, path.as_uri(), PHONE)
            height = evaluate(devtools, session, "document.querySelector('.lark, .slack').offsetHeight")
            assert isinstance(height, int) and 300 < height <= PHONE_PX, (name, height)
            assert evaluate(devtools, session, "document.documentElement.scrollWidth <= window.innerWidth")
            screenshot(devtools, session, out / f"{name}_phone.png")
    with capsys.disabled():
        print(f"\nscreenshots: {out}/lark_card_*_phone.png {out}/slack_message_*_phone.png")


@pytest.mark.parametrize("lang", LANGS)
def test_the_thread_names_what_the_llm_cost_by_purpose(lang: str) -> None:
    from prdigest.models import LLMCost, LLMUsage

    by = {"analysis": LLMCost(calls=36), "follow-up": LLMCost(calls=4), "narrative": LLMCost(calls=1)}
    usage = LLMUsage(
        model="m-1", calls=41, input_tokens=87712, output_tokens=5100, run_calls=4, by_purpose=by
    )
    report = demo_report(lang).model_copy(update={"llm_usage": usage})
    lark = html.unescape(json.dumps(render_lark_thread(report, REPORT_URL), ensure_ascii=False))
    for text in (lark, str(render_slack_thread(report))):
        assert "41" in text and "87712" in text and "follow-up 4" in text and "narrative 1" in text
    assert "follow-up 4" not in str(render_slack_thread(demo_report(lang)))  # no LLM, no cost line
