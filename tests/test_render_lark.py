"""The Lark card: Lark's documented 2.0 schema and size limits for any week, and what a reader sees on it."""

from __future__ import annotations

import json

import pytest
from test_render_support import (
    REPORT_URL,
    check_lark_card,
    demo_report,
    lark_elements,
    week_report,
)

from prdigest.i18n import texts
from prdigest.i18n.report import tag_name
from prdigest.models import Report
from prdigest.render.lark import BODY_LIMIT, lark_request_body_bytes, render_lark_card
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


def test_the_header_names_repo_and_window_in_the_colour_of_the_risk(demo: Report) -> None:
    t = texts(demo.lang)
    for level, colour in (("low", "green"), ("medium", "orange"), ("high", "red")):
        card = render_lark_card(demo.model_copy(update={"risk_level": level}))
        header = card["header"]
        assert demo.repo in header["title"]["content"]
        assert str(demo.window.since) in header["subtitle"]["content"]
        assert header["template"] == colour
        assert header["text_tag_list"][0]["text"]["content"] == t[f"risk_{level}"]


def test_figures_sections_table_and_chart_lay_out_the_report(demo: Report) -> None:
    card = render_lark_card(demo)
    t = texts(demo.lang)
    elements = card["body"]["elements"]
    figures = elements[0]
    assert figures["tag"] == "column_set" and len(figures["columns"]) == 4
    assert f"**{demo.stats.merged_prs}**" in json.dumps(figures, ensure_ascii=False)
    text = _markdown(card)
    for key in ("s_themes", "s_risks", "s_key_prs"):
        assert t[key].replace(".", "") in text.replace(".", "")
    [table] = [e for e in elements if e["tag"] == "table"]
    key = key_prs(demo)
    shown = [int(row["pr"].split("]")[0].lstrip("[#")) for row in table["rows"]]
    assert shown == [p.number for p in key[: len(shown)]] and len(shown) < len(key)
    assert t["more_in_full"].format(n=len(key) - len(shown)) in text
    [chart] = [e for e in elements if e["tag"] == "chart"]
    values = chart["chart_spec"]["data"]["values"]
    tags = [(tag_name(tag, demo.lang), n) for tag, n in demo.stats.tags.items()]  # in the report's language
    assert [(v["tag"], v["prs"]) for v in values] == tags[: len(values)]


def test_buttons_carry_callback_values_and_the_page_link_only_with_a_url(demo: Report) -> None:
    key = key_prs(demo)
    without = _buttons(render_lark_card(demo))
    behaviors = [b["behaviors"][0] for b in without]
    assert all(b["type"] == "callback" for b in behaviors)
    values = [ActionValue.model_validate(b["value"]) for b in behaviors]
    assert [v.action for v in values] == ["risks", "key_prs", "explain", "explain", "explain", "another_week"]
    assert [v.number for v in values if v.action == "explain"] == [p.number for p in key[:3]]
    assert {(v.repo, v.since, v.until) for v in values} == {(demo.repo, demo.window.since, demo.window.until)}

    with_url = _buttons(render_lark_card(demo, REPORT_URL))
    assert with_url[0]["behaviors"] == [{"type": "open_url", "default_url": REPORT_URL}]
    assert with_url[1:] == without
    assert _buttons(render_lark_card(demo, "javascript:alert(1)")) == without


def test_an_empty_week_says_so_and_still_offers_another_week() -> None:
    report = week_report([], "en")
    card = render_lark_card(report)
    assert texts("en")["none"] in _markdown(card)
    assert not [e for e in card["body"]["elements"] if e["tag"] in ("table", "chart")]
    [button] = _buttons(card)
    assert button["behaviors"][0]["value"]["action"] == "another_week"


def test_an_oversized_week_steps_down_until_it_fits() -> None:
    report = demo_report("zh")
    long = "长" * 2000
    for theme in report.themes:
        theme.title, theme.trend = long, long
    for obs in report.risk_observations:
        obs.title, obs.evidence = long, long
    for p in report.prs:
        p.summary = long
    report.summary = long
    card = render_lark_card(report, REPORT_URL)
    check_lark_card(card)
    assert lark_request_body_bytes(card) <= BODY_LIMIT
    [table] = [e for e in card["body"]["elements"] if e["tag"] == "table"]
    assert len(table["rows"]) < 10  # a leaner level than the demo week's
    assert "另有" in _markdown(card)


def test_warnings_come_right_after_the_figures(demo: Report) -> None:
    warned = demo.model_copy(update={"warnings": ["sync stopped at 1,000 PRs: <!channel>"]})
    card = render_lark_card(warned)
    check_lark_card(card)
    warning = card["body"]["elements"][1]["content"]
    assert warning.startswith("<font color='orange'>⚠ sync stopped") and "<!channel>" not in warning
