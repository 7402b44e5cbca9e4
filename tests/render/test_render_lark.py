"""The Lark card and its thread: Lark's documented 2.0 schema and size limits for any week, and what a reader
sees on them."""

from __future__ import annotations

import json
import re

import pytest
from test_render_support import (
    REPORT_URL,
    check_lark_card,
    demo_report,
    lark_elements,
    week_report,
)

from prdigest.i18n import texts
from prdigest.models import Report
from prdigest.render.lark import (
    BODY_LIMIT,
    lark_messages,
    lark_request_body_bytes,
    render_lark_card,
    render_lark_thread,
)
from prdigest.render.views import ActionValue, key_prs


def _buttons(card: dict) -> list[dict]:
    return [e for e in lark_elements(card) if e["tag"] == "button"]


def _markdown(card: dict) -> str:
    return "\n".join(e["content"] for e in lark_elements(card) if e["tag"] == "markdown")


@pytest.mark.parametrize("url", [None, REPORT_URL], ids=["no-url", "url"])
def test_the_card_keeps_to_lark_schema_and_size_whatever_the_week(week: Report, url: str | None) -> None:
    card = render_lark_card(week, url)
    check_lark_card(card)
    assert lark_request_body_bytes(card) <= BODY_LIMIT
    assert json.loads(json.dumps(card)) == card


def test_the_body_is_measured_as_lark_oapi_sends_it(demo: Report) -> None:
    from lark_oapi.api.im.v1 import CreateMessageRequestBody
    from lark_oapi.core.json import JSON

    card = render_lark_card(demo, REPORT_URL)
    body = (
        CreateMessageRequestBody.builder()
        .receive_id("oc_" + "a" * 32)
        .msg_type("interactive")
        .content(json.dumps(card))
        .uuid("u" * 50)
        .build()
    )
    assert len(JSON.marshal(body).encode("utf-8")) == lark_request_body_bytes(card)


def test_every_thread_card_keeps_to_lark_schema_and_size_whatever_the_week(week: Report) -> None:
    for card in render_lark_thread(week, REPORT_URL):
        check_lark_card(card)
        assert lark_request_body_bytes(card) <= BODY_LIMIT


def test_the_header_names_the_week_once_in_the_colour_of_the_risk(demo: Report) -> None:
    t = texts(demo.lang)
    for level, colour in (("low", "green"), ("medium", "orange"), ("high", "red")):
        card = render_lark_card(demo.model_copy(update={"risk_level": level}))
        header = card["header"]
        assert header["title"]["content"] == f"{demo.repo} · 2026-W37"
        assert "subtitle" not in header  # the dates are in the title, once
        assert header["template"] == colour
        assert header["text_tag_list"][0]["text"]["content"] == t[f"risk_{level}"]


def test_the_card_is_a_digest_and_the_thread_has_the_tables(demo: Report) -> None:
    card = render_lark_card(demo)
    t = texts(demo.lang)
    elements = card["body"]["elements"]
    figures = elements[1]
    assert (
        figures["tag"] == "column_set" and figures["flex_mode"] == "trisect" and len(figures["columns"]) == 3
    )
    assert f"**{demo.stats.merged_prs}**" in json.dumps(figures, ensure_ascii=False)
    text = _markdown(card)
    assert f"**{t['c_stories']}**" in text and f"**{t['c_top_risks']}**" in text
    assert not re.search(r"\*\*\d\.", text)  # no "2. Key changes" numbering
    assert not [e for e in elements if e["tag"] in ("table", "chart")]
    [first, *_] = render_lark_thread(demo)
    tables = [e for e in first["body"]["elements"] if e["tag"] == "table"]
    shown = [int(row["pr"].split("]")[0].lstrip("[#")) for table in tables for row in table["rows"]]
    assert shown == [p.number for p in key_prs(demo)]  # the demo week's 17 key PRs in tables of ten
    assert [len(table["rows"]) for table in tables] == [10, 7]
    assert all(table["page_size"] == len(table["rows"]) for table in tables)  # none behind a pager


def test_buttons_carry_callback_values_and_the_page_link_only_with_a_url(demo: Report) -> None:
    without = _buttons(render_lark_card(demo))
    behaviors = [b["behaviors"][0] for b in without]
    assert all(b["type"] == "callback" for b in behaviors)
    values = [ActionValue.model_validate(b["value"]) for b in behaviors]
    assert [v.action for v in values] == ["risks", "key_prs", "another_week"]
    assert {(v.repo, v.since, v.until) for v in values} == {(demo.repo, demo.window.since, demo.window.until)}

    with_url = _buttons(render_lark_card(demo, REPORT_URL))
    assert with_url[0]["behaviors"] == [{"type": "open_url", "default_url": REPORT_URL}]
    assert with_url[1:] == without and len(with_url) == 4
    assert _buttons(render_lark_card(demo, "javascript:alert(1)")) == without


def test_an_empty_week_says_so_and_still_offers_another_week() -> None:
    report = week_report([], "en")
    card = render_lark_card(report)
    assert texts("en")["none"] in _markdown(card)
    assert not [e for e in card["body"]["elements"] if e["tag"] in ("table", "chart")]
    [button] = _buttons(card)
    assert button["behaviors"][0]["value"]["action"] == "another_week"
    assert render_lark_thread(report) == []


def test_an_oversized_week_is_cut_and_its_thread_split_to_fit() -> None:
    report = demo_report("zh")
    long = "长" * 2000
    for theme in report.themes:
        theme.title, theme.trend = long, long
    for obs in report.risk_observations:
        obs.title, obs.evidence = long, long
    for p in report.prs:
        p.summary = long
    report.summary = long
    messages = lark_messages(report, REPORT_URL)
    for card in messages:
        check_lark_card(card)
        assert lark_request_body_bytes(card) <= BODY_LIMIT
    assert len(messages) > 4  # the risks and the details each took more than one card
    assert "长…" in _markdown(messages[0])


def test_warnings_come_right_after_the_judgement(demo: Report) -> None:
    warned = demo.model_copy(update={"warnings": ["sync stopped at 1,000 PRs: <!channel>"]})
    card = render_lark_card(warned)
    check_lark_card(card)
    warning = card["body"]["elements"][1]["content"]
    assert warning.startswith("<font color='orange'>⚠ sync stopped") and "<!channel>" not in warning
