"""The chat answers' cards (risks, one PR explained, a PR list, help) on both platforms, within limits."""

from __future__ import annotations

import json

import pytest
from test_render_support import (
    LANGS,
    LONG_TITLE,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    demo_report,
    demo_source,
    lark_elements,
    scaled_prs,
    slack_texts,
    week_report,
)

from prdigest.analysis import rules
from prdigest.config import load_settings
from prdigest.i18n import risk_name
from prdigest.models import Report
from prdigest.render.lark import BODY_LIMIT, lark_request_body_bytes, render_lark_card, render_lark_view
from prdigest.render.slack import render_slack_message, render_slack_view
from prdigest.render.views import (
    ActionValue,
    HelpLine,
    HelpView,
    PRExplainView,
    PRHead,
    PRListView,
    ReportRef,
    RisksView,
    View,
)

EXPLAINED = 4129  # risks with evidence, an unresolved thread and a related PR
HELP = [
    "report last week",
    "report 2026-09-01..2026-09-14",
    "show risks",
    "explain #3128",
    "who worked on NVFP4?",
]


@pytest.fixture(scope="module", params=LANGS)
def report(request: pytest.FixtureRequest) -> Report:
    return demo_report(request.param)


def _explain_view(report: Report, number: int = EXPLAINED) -> PRExplainView:
    """As the chat layer builds it: the PullRequest from the cache and its analysis."""
    source = demo_source()
    pr = next(p for p in source.prs if p.number == number)
    analysis = rules.analyse(pr, load_settings(env={}).repo(source.repo).taxonomy, report.lang)
    return PRExplainView(lang=report.lang, ref=ReportRef.of(report), pr=PRHead.of(pr), analysis=analysis)


def _views(report: Report) -> list[View]:
    ref = ReportRef.of(report)
    return [
        RisksView(lang=report.lang, ref=ref, risks=report.risk_observations, report_url=REPORT_URL),
        RisksView(lang=report.lang, ref=ref, risks=[]),
        _explain_view(report),
        PRListView(lang=report.lang, title="NVFP4", items=report.prs[:5], ref=ref),
        PRListView(lang=report.lang, title="nothing", items=[]),
        HelpView(lang=report.lang, lines=[HelpLine(usage=u, about="-") for u in HELP]),
    ]


@pytest.fixture(scope="module")
def oversized(report: Report) -> list[View]:
    """Every list far too long and every text far too long for one card."""
    big = week_report(scaled_prs(2000), report.lang, history=False)
    ref = ReportRef.of(big)
    risks = [
        o.model_copy(update={"title": LONG_TITLE, "evidence": LONG_TITLE}) for o in big.risk_observations
    ]
    explain = _explain_view(report)
    analysis = explain.analysis.model_copy(
        update={
            "summary": LONG_TITLE,
            "explanation": LONG_TITLE,
            "reasons": [LONG_TITLE] * 50,
            "risks": [r.model_copy(update={"evidence": LONG_TITLE}) for r in explain.analysis.risks] * 20,
            "watch": [LONG_TITLE] * 50,
            "unresolved": [LONG_TITLE] * 50,
            "related": list(range(1, 500)),
        }
    )
    items = [p.model_copy(update={"title": LONG_TITLE, "author": LONG_TITLE}) for p in big.prs]
    return [
        RisksView(lang=report.lang, ref=ref, risks=risks * 20, report_url=REPORT_URL),
        explain.model_copy(
            update={"analysis": analysis, "pr": explain.pr.model_copy(update={"title": LONG_TITLE})}
        ),
        PRListView(lang=report.lang, title=LONG_TITLE, items=items, ref=ref, report_url=REPORT_URL),
        HelpView(
            lang=report.lang, title=LONG_TITLE, lines=[HelpLine(usage=LONG_TITLE, about=LONG_TITLE)] * 500
        ),
    ]


def _lark_callbacks(card: dict) -> list[ActionValue]:
    buttons = [e for e in lark_elements(card) if e["tag"] == "button"]
    return [
        ActionValue.model_validate(b["behaviors"][0]["value"])
        for b in buttons
        if "value" in b["behaviors"][0]
    ]


def _slack_callbacks(message: dict) -> list[ActionValue]:
    buttons = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    return [ActionValue.model_validate(json.loads(b["value"])) for b in buttons if "value" in b]


def test_every_chat_card_keeps_to_both_platforms_limits(report: Report, oversized: list[View]) -> None:
    for view in _views(report) + oversized:
        card = render_lark_view(view)
        check_lark_card(card)
        assert lark_request_body_bytes(card) <= BODY_LIMIT, type(view).__name__
        message = render_slack_view(view)
        check_slack_message(message)
        assert _lark_callbacks(card) == _slack_callbacks(message)  # same buttons on both platforms


def test_the_long_lists_say_how_many_more(report: Report, oversized: list[View]) -> None:
    for view in oversized:
        more = "另有" if report.lang == "zh" else "more in the full report"
        assert more in json.dumps(render_lark_view(view), ensure_ascii=False)
        assert more in "\n".join(slack_texts(render_slack_view(view)))


def test_one_pr_explained(report: Report) -> None:
    view = _explain_view(report)
    card = render_lark_view(view)
    assert card["header"]["title"]["content"].startswith(f"#{EXPLAINED} ")
    text = json.dumps(card, ensure_ascii=False)
    risk = risk_name(view.analysis.risks[0].label, report.lang)
    assert risk in text and "#4103" in text  # its first risk and its related PR
    open_pr = next(e for e in lark_elements(card) if e["tag"] == "button")
    assert open_pr["behaviors"] == [{"type": "open_url", "default_url": view.pr.url}]
    assert [v.action for v in _lark_callbacks(card)] == ["risks", "key_prs"]
    message = render_slack_view(view)
    assert message["blocks"][0]["text"]["text"].startswith(f"#{EXPLAINED} ")
    assert risk in "\n".join(slack_texts(message))


def test_risks_offer_to_explain_their_first_prs(report: Report) -> None:
    view = _views(report)[0]
    card = render_lark_view(view)
    numbers = [v.number for v in _lark_callbacks(card)]
    assert numbers == list(dict.fromkeys(r.prs[0] for r in report.risk_observations[:5]))[:3]
    buttons = [e for e in lark_elements(card) if e["tag"] == "button"]
    assert buttons[0]["behaviors"][0]["default_url"] == REPORT_URL


def test_a_pr_list_without_a_week_has_no_explain_buttons(report: Report) -> None:
    with_ref, empty = _views(report)[3], _views(report)[4]
    assert [v.number for v in _lark_callbacks(render_lark_view(with_ref))] == [
        p.number for p in report.prs[:3]
    ]
    assert _lark_callbacks(render_lark_view(empty)) == []
    assert _slack_callbacks(render_slack_view(empty)) == []


def test_help_lists_the_commands(report: Report) -> None:
    view = _views(report)[-1]
    text = "\n".join(slack_texts(render_slack_view(view)))
    assert all(line in text for line in HELP[:3])
    card = json.dumps(render_lark_view(view), ensure_ascii=False)
    assert "show risks" in card


def test_lark_and_slack_report_buttons_match(report: Report) -> None:
    card = render_lark_card(report, REPORT_URL)
    assert _lark_callbacks(card) == _slack_callbacks(render_slack_message(report, REPORT_URL))


def test_a_pr_head_reads_the_same_from_a_report_pr_and_a_pull_request(report: Report) -> None:
    pull = next(p for p in demo_source().prs if p.number == EXPLAINED)
    item = next(p for p in report.prs if p.number == EXPLAINED)
    assert PRHead.of(pull) == PRHead.of(item)
    without_ref = _explain_view(report).model_copy(update={"ref": None})
    buttons = [e for e in lark_elements(render_lark_view(without_ref)) if e["tag"] == "button"]
    assert [b["behaviors"][0]["type"] for b in buttons] == ["open_url"]  # no week to ask about
