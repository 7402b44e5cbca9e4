"""The report and the chat answers as Lark/Feishu cards, JSON schema 2.0 (see shared/notes/lark-card-2.0.md).

Only components and properties that note lists. A card is built at each detail level,
richest first, until its request body fits `BODY_LIMIT`; what is left out is counted
in an "N more in the full report" line. Untrusted text goes through `lark_md` or `plain`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from prdigest.i18n import report_texts, texts
from prdigest.i18n.report import tag_name
from prdigest.models import Report, ReportPR
from prdigest.render.markdown import title
from prdigest.render.sanitize import lark_md, plain
from prdigest.render.views import (
    LEVELS,
    Button,
    Detail,
    HelpView,
    PRExplainView,
    PRListView,
    ReportRef,
    RisksView,
    View,
    card_rows,
    cite,
    engine_note,
    explain_buttons,
    explain_figures,
    explain_sections,
    key_prs,
    link_refs,
    linker,
    list_buttons,
    pr_url,
    pr_urls,
    report_buttons,
    report_figures,
    risks_buttons,
    risks_title,
    score,
    window_text,
)

Card = dict[str, Any]

BODY_LIMIT = 28_000
# As long as real ids (chat ids are "oc_" + 32 hex, uuids at most 50), so the measured body is the sent one.
_RECEIVE_ID = "oc_" + "0" * 32
_UUID = "0" * 50
_TEMPLATE = {"low": "green", "medium": "orange", "high": "red"}
_CHART_BARS = 8


# "#N" as lark_md writes it.
_REF = re.compile(r"&#35;(\d+)\b")


def _as_link(n: int, url: str) -> str:
    return f"[#{n}]({url})"


def _link(urls: dict[int, str]) -> Callable[[int], str]:
    return linker(urls, _as_link)


def _refs(text: str, urls: dict[int, str]) -> str:
    return link_refs(text, _REF, urls, _as_link)


def lark_request_body_bytes(card: Card) -> int:
    """Bytes of the im.v1 create-message body: `content` is `json.dumps(card)`, and lark-oapi's
    JSON.marshal dumps the body with ensure_ascii=False, so a Chinese character costs 7 bytes."""
    body = {"receive_id": _RECEIVE_ID, "msg_type": "interactive", "content": json.dumps(card), "uuid": _UUID}
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def render_lark_card(report: Report, report_url: str | None = None) -> Card:
    """The weekly report card; `report_url` (the public page) adds an open-url button."""
    return _fit(lambda detail: _report_card(report, report_url, detail))


def render_lark_view(view: View) -> Card:
    """A chat answer's card: risks, one PR explained, a PR list or help."""
    build = _VIEW_CARDS[type(view)]
    return _fit(lambda detail: build(view, detail))


def _fit(build: Callable[[Detail], Card]) -> Card:
    for detail in LEVELS[:-1]:
        card = build(detail)
        if lark_request_body_bytes(card) <= BODY_LIMIT:
            return card
    # The leanest level is bounded by construction; the tests hold it to BODY_LIMIT.
    return build(LEVELS[-1])


# --- the weekly report --------------------------------------------------------


def _report_card(report: Report, report_url: str | None, detail: Detail) -> Card:
    t = report_texts(report.lang, report.window.since, report.window.until)
    level = report.risk_level
    head = _header(title(report), window_text(t, ReportRef.of(report)), _TEMPLATE[level])
    head["text_tag_list"] = [
        {
            "tag": "text_tag",
            "text": {"tag": "plain_text", "content": t[f"risk_{level}"]},
            "color": _TEMPLATE[level],
        }
    ]
    elements: list[Card | None] = [_figures(report_figures(report, t))]
    if report.warnings:  # e.g. a partial sync: the reader must see it before the figures' story
        warnings = [f"⚠ {lark_md(w, detail.chars * 2)}" for w in report.warnings[: detail.items]]
        elements.append(_md("<font color='orange'>" + "\n".join(warnings) + "</font>"))
    if not report.stats.merged_prs:
        elements.append(_md(lark_md(t["none"])))
    elif report.summary and detail.summary:
        elements.append(_md(_refs(lark_md(report.summary, detail.summary), pr_urls(report))))
    elements += _report_sections(report, t, detail)
    elements.append(_buttons(report_buttons(report, report_url, t, detail)))
    elements.append(_footnote(engine_note(report, t)))
    return _card(title(report), head, elements)


def _report_sections(report: Report, t: dict[str, str], detail: Detail) -> list[Card]:
    out = []
    urls = pr_urls(report)
    link = _link(urls)

    themes = [
        f"**{lark_md(th.title, detail.chars)}** {cite(th.representative or th.prs, 3, link)} "
        f"<font color='grey'>{_refs(lark_md(th.trend, detail.chars), urls)}</font>"
        for th in report.themes[: detail.items]
    ]
    if themes:
        out.append(_list(t["s_themes"], themes, len(report.themes), t))
    risks = [
        _risk_line(o.title, o.prs, o.evidence, detail, urls) for o in report.risk_observations[: detail.items]
    ]
    if risks:
        out.append(_list(t["s_risks"], risks, len(report.risk_observations), t))
    key = key_prs(report)
    if key:
        out += _key_pr_table(key, t, detail, card_rows(report, detail))
    if report.stats.tags:
        out.append(_tag_chart(report, t))
    return out


def _risk_line(
    name: str, prs: list[int], evidence: str, detail: Detail, urls: dict[int, str] | None = None
) -> str:
    evidence = _refs(lark_md(evidence, detail.chars), urls or {})
    cited = cite(prs, link=_link(urls or {}))
    return f"**{lark_md(name, detail.chars)}** {cited}\n<font color='grey'>{evidence}</font>"


def _key_pr_table(key: list[ReportPR], t: dict[str, str], detail: Detail, rows: int) -> list[Card]:
    table = {
        "tag": "table",
        "page_size": 5,
        "freeze_first_column": True,
        "header_style": {"background_style": "grey", "bold": True, "text_size": "normal"},
        "columns": [
            {"name": "pr", "display_name": t["col_pr"], "data_type": "lark_md", "width": "auto"},
            {"name": "summary", "display_name": t["col_summary"], "data_type": "text"},
            {"name": "scores", "display_name": t["col_scores"], "data_type": "text", "width": "auto"},
        ],
        "rows": [
            {
                "pr": _pr_link(p),
                "summary": plain(p.summary or p.title, detail.chars),
                "scores": f"{score(p.importance)} / {score(p.insight)}",
            }
            for p in key[:rows]
        ],
    }
    out = [_md(f"**{lark_md(t['s_key_prs'])}**"), table]
    if len(key) > rows:
        out.append(_footnote(t["more_in_full"].format(n=len(key) - rows)))
    return out


def _tag_chart(report: Report, t: dict[str, str]) -> Card:
    tags = list(report.stats.tags.items())[:_CHART_BARS]
    spec = {
        "type": "bar",
        "direction": "horizontal",
        "title": {"text": t["tags"]},
        "data": {"values": [{"tag": plain(tag_name(tag, report.lang), 24), "prs": n} for tag, n in tags]},
        "xField": "prs",
        "yField": "tag",
    }
    return {"tag": "chart", "aspect_ratio": "4:3", "color_theme": "brand", "chart_spec": spec}


# --- chat answers --------------------------------------------------------------


def _risks_card(view: RisksView, detail: Detail) -> Card:
    t = texts(view.lang)
    name = risks_title(view, t)
    head = _header(name, window_text(t, view.ref), "orange" if view.risks else "green")
    lines = [_risk_line(r.title, r.prs, r.evidence, detail) for r in view.risks[: detail.items]]
    body = _list(t["card_risks"], lines, len(view.risks), t) if lines else _md(lark_md(t["no_risk_obs"]))
    return _card(name, head, [body, _buttons(risks_buttons(view, t, detail))])


def _explain_card(view: PRExplainView, detail: Detail) -> Card:
    t = texts(view.lang)
    pr, a = view.pr, view.analysis
    subtitle = t["pr_by"].format(author=pr.author, merged=f"{pr.merged_at:%Y-%m-%d}")
    elements: list[Card | None] = [
        _figures(explain_figures(view, t)),
        _md(lark_md(a.summary or pr.title, detail.chars * 2)),
    ]
    if a.explanation and detail.summary:
        elements.append(_md(lark_md(a.explanation, detail.summary)))
    for name, lines in explain_sections(view, t):
        shown = [lark_md(line, detail.chars) for line in lines[: detail.items]]
        elements.append(_list(name, shown, len(lines), t))
    if a.related:
        elements.append(_md(f"**{lark_md(t['x_related'])}** {cite(a.related, detail.items * 4)}"))
    elements.append(_buttons(explain_buttons(view, t)))
    return _card(f"#{pr.number}", _header(f"#{pr.number} {pr.title}", subtitle, "blue"), elements)


def _list_card(view: PRListView, detail: Detail) -> Card:
    t = texts(view.lang)
    subtitle = window_text(t, view.ref) if view.ref else t["n_prs"].format(n=len(view.items))
    lines = [
        f"{_pr_link(p)} {lark_md(p.title, detail.chars)} "
        f"<font color='grey'>{lark_md(p.author, 40)} · {score(p.importance)}</font>"
        for p in view.items[: detail.items * 2]
    ]
    body = _list(view.title, lines, len(view.items), t) if lines else _md(lark_md(t["no_prs"]))
    head = _header(view.title, subtitle, "blue")
    return _card(view.title, head, [body, _buttons(list_buttons(view, t, detail))])


def _help_card(view: HelpView, detail: Detail) -> Card:
    t = texts(view.lang)
    name = view.title or t["card_help"]
    lines = [
        f"**{lark_md(h.usage, detail.chars)}** {lark_md(h.about, detail.chars * 2)}"
        for h in view.lines[: detail.items * 4]
    ]
    head = _header(name, t["card_help_sub"], "blue")
    return _card(name, head, [_list(name, lines, len(view.lines), t)])


_VIEW_CARDS: dict[type, Callable[[Any, Detail], Card]] = {
    RisksView: _risks_card,
    PRExplainView: _explain_card,
    PRListView: _list_card,
    HelpView: _help_card,
}


# --- components ----------------------------------------------------------------


def _card(summary: str, header: Card, elements: Sequence[Card | None]) -> Card:
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "width_mode": "fill", "summary": {"content": plain(summary, 120)}},
        "header": header,
        "body": {"vertical_spacing": "medium", "elements": [e for e in elements if e]},
    }


def _header(text: str, subtitle: str, template: str) -> Card:
    return {
        "title": {"tag": "plain_text", "content": plain(text, 120)},
        "subtitle": {"tag": "plain_text", "content": plain(subtitle, 80)},
        "template": template,
    }


def _md(content: str, size: str | None = None, align: str | None = None) -> Card:
    element: Card = {"tag": "markdown", "content": content}
    if size:
        element["text_size"] = size
    if align:
        element["text_align"] = align
    return element


def _footnote(text: str) -> Card:
    return _md(f"<font color='grey'>{lark_md(text)}</font>", "notation")


def _list(heading: str, lines: list[str], total: int, t: dict[str, str]) -> Card:
    """A heading and numbered lines (already escaped), plus a count of what did not fit."""
    out = [f"**{lark_md(heading, 120)}**", *(f"{i}. {line}" for i, line in enumerate(lines, start=1))]
    if total > len(lines):
        out.append(f"<font color='grey'>{lark_md(t['more_in_full'].format(n=total - len(lines)))}</font>")
    return _md("\n".join(out))


def _figures(figures: list[tuple[str, str]]) -> Card:
    """Figures side by side, two per row so they stay readable on a phone."""
    columns = [
        {
            "tag": "column",
            "background_style": "grey-50",
            "padding": "8px",
            "elements": [
                _md(f"<font color='grey'>{lark_md(label)}</font>\n**{lark_md(value)}**", align="center")
            ],
        }
        for label, value in figures
    ]
    return {"tag": "column_set", "flex_mode": "bisect", "horizontal_spacing": "small", "columns": columns}


def _pr_link(pr: ReportPR) -> str:
    url = pr_url(pr)
    return f"[#{pr.number}]({url})" if url else f"#{pr.number}"


def _buttons(buttons: list[Button]) -> Card | None:
    """A row of buttons that wraps on a narrow screen (2.0 has no `action` container)."""
    if not buttons:
        return None
    columns = [{"tag": "column", "elements": [_button(b)]} for b in buttons]
    return {"tag": "column_set", "flex_mode": "flow", "horizontal_spacing": "small", "columns": columns}


def _button(button: Button) -> Card:
    if button.url:
        behavior: Card = {"type": "open_url", "default_url": button.url}
    else:
        assert button.value is not None, "a button is a link or a callback"
        behavior = {"type": "callback", "value": button.value.payload()}
    return {
        "tag": "button",
        "type": "primary" if button.primary else "default",
        "text": {"tag": "plain_text", "content": plain(button.label, 100)},
        "behaviors": [behavior],
    }
