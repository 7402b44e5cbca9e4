"""The report and the chat answers as Lark/Feishu cards, card JSON 2.0: the structure at
https://open.feishu.cn/document/feishu-cards/card-json-v2-structure and its components' pages.

JSON 2.0 validates strictly (a property it does not know fails the whole message, code 230099), so only
components and properties those pages document are used. The weekly report is a digest card
(render/digest.py) and thread reply cards, each packed to fit `BODY_LIMIT`. A chat answer's card is built
at each detail level, richest first, until its request body fits; what is left out is counted in an "N more
in the full report" line. Untrusted text goes through `lark_md` or `plain`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from prdigest.i18n import report_texts, texts
from prdigest.models import Report, ReportPR
from prdigest.render.digest import (
    KEY_PR_CHARS,
    Item,
    Lines,
    Markup,
    digest_warnings,
    lines_of,
    pack,
    scores,
    thread_attention,
    thread_details,
    thread_key_prs,
    thread_risks,
)
from prdigest.render.sanitize import lark_md, plain
from prdigest.render.team import card_body
from prdigest.render.views import (
    LEVELS,
    Button,
    Detail,
    HelpView,
    PRExplainView,
    PRListView,
    RisksView,
    View,
    cite,
    explain_buttons,
    explain_figures,
    explain_sections,
    list_buttons,
    pr_url,
    risks_buttons,
    risks_title,
    score,
    window_text,
)

Card = dict[str, Any]

BODY_LIMIT = 28_000
MAX_COMPONENTS = 200  # Lark refuses a card of more (11310)
# As long as real ids (chat ids are "oc_" + 32 hex, uuids at most 50), so the measured body is the sent one.
_RECEIVE_ID = "oc_" + "0" * 32
_UUID = "0" * 50
_TEMPLATE = {"low": "green", "medium": "orange", "high": "red"}


# "#N" as lark_md writes it; Chinese text may follow it with no space ("#4129和#4137").
_REF = re.compile(r"&#35;(\d+)(?![0-9A-Za-z_])")


def _as_link(n: int, url: str) -> str:
    return f"[#{n}]({url})"


def lark_request_body_bytes(card: Card) -> int:
    """Bytes of the im.v1 create-message body: `content` is `json.dumps(card)`, and lark-oapi's
    JSON.marshal dumps the body with ensure_ascii=False, so a Chinese character costs 7 bytes."""
    body = {"receive_id": _RECEIVE_ID, "msg_type": "interactive", "content": json.dumps(card), "uuid": _UUID}
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8"))


def render_lark_card(report: Report, report_url: str | None = None) -> Card:
    """The weekly card, a digest of one phone screen (its thread: `render_lark_thread`); `report_url`
    (the public page) adds an open-url button. Every piece is cut, so it fits any week."""
    return _report_card(report, report_url)


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


# --- the weekly report: a digest, then its thread -----------------------------------------

MARKUP = Markup(
    text=lark_md,
    bold=lambda text: f"**{text}**",
    note=lambda text: f"<font color='grey'>{text}</font>",
    link=_as_link,
    ref=_REF,
)
_TABLE_ROWS = 10  # a table's largest page: every row shows, none behind a pager


def _report_card(report: Report, report_url: str | None) -> Card:
    t = report_texts(report.lang, report.window.since, report.window.until)
    body = card_body(report, t, MARKUP, report_url, lark_md)
    title, first, attention, figures = body.title, body.first, body.attention, body.figures
    sections, buttons = body.sections, body.buttons
    level = report.risk_level
    head = _header(title, "", _TEMPLATE[level])
    head["text_tag_list"] = [
        {
            "tag": "text_tag",
            "text": {"tag": "plain_text", "content": t[f"risk_{level}"]},
            "color": _TEMPLATE[level],
        }
    ]
    elements: list[Card | None] = [_md(first)]
    warnings = digest_warnings(report, MARKUP)
    if warnings:  # e.g. a partial sync: the reader must see it before the figures
        elements.append(_md("<font color='orange'>" + "\n".join(warnings) + "</font>"))
    if report.stats.merged_prs:
        elements.append(_figures(figures))
    for heading, shown in sections:
        if shown:
            elements.append(_md("\n".join([f"**{lark_md(heading)}**", *shown])))
    if attention:  # open work: what to do now, just above the buttons
        elements.append(_md("\n".join(attention)))
    elements.append(_buttons(buttons))
    return _card(title, head, elements)


def render_lark_thread(report: Report, report_url: str | None = None) -> list[Card]:
    """The thread replies under the weekly card: every key PR, every risk, then the summary, themes
    and recommendations, then the open PRs needing attention; each card within `BODY_LIMIT`, as many as
    that takes. A team's thread has each repository's, their headers named by the repository."""
    if report.parts:
        return [card for part in report.parts for card in _thread(part, f"{part.repo} · ")]
    return _thread(report, "")


def _thread(report: Report, head: str) -> list[Card]:
    t = report_texts(report.lang, report.window.since, report.window.until)
    lines = lines_of(report, MARKUP)
    key, left = thread_key_prs(report)
    cards = pack(key, lambda chunk, last: _key_card(chunk, lines, t, left if last else 0, head), _fits)
    cards += _item_cards(head + t["card_risks"], thread_risks(report, t, lines))
    if report.stats.merged_prs:
        cards += _text_cards(head + t["c_details"], thread_details(report, t, lines))
    return cards + _item_cards(head + t["att_heading"], thread_attention(report, t, lines))


def lark_messages(report: Report, report_url: str | None = None) -> list[Card]:
    """What a chat is sent for the week: the card, then its thread replies."""
    return [render_lark_card(report, report_url), *render_lark_thread(report, report_url)]


def _fits(card: Card) -> bool:
    return lark_request_body_bytes(card) <= BODY_LIMIT and _components(card) <= MAX_COMPONENTS


def _components(node: Any) -> int:
    """The card's components (every object with a tag), which Lark caps per card."""
    if isinstance(node, list):
        return sum(_components(n) for n in node)
    if isinstance(node, dict):
        return ("tag" in node) + sum(_components(v) for v in node.values())
    return 0


def _text_cards(heading: str, lines: list[str]) -> list[Card]:
    def build(chunk: Sequence[str], last: bool) -> Card:
        return _card(heading, _header(heading, "", "blue"), [_md("\n".join(chunk))])

    return pack(lines, build, _fits)


def _item_cards(heading: str, items: list[Item]) -> list[Card]:
    """Lines under a heading, each with its row of buttons, in as many cards as that takes."""

    def build(chunk: Sequence[Item], last: bool) -> Card:
        elements = [e for text, buttons in chunk for e in (_md(text), _buttons(buttons))]
        return _card(heading, _header(heading, "", "blue"), elements)

    return pack(items, build, _fits)


def _key_card(rows: Sequence[ReportPR], lines: Lines, t: dict[str, str], left: int, head: str) -> Card:
    """Key PRs in tables of ten; the thread's last key-PR card counts those only the page lists."""
    tables = [_key_table(rows[i : i + _TABLE_ROWS], lines, t) for i in range(0, len(rows), _TABLE_ROWS)]
    more = _footnote(t["more_in_full"].format(n=left)) if left else None
    return _card(head + t["key_prs"], _header(head + t["key_prs"], "", "blue"), [*tables, more])


def _key_table(rows: Sequence[ReportPR], lines: Lines, t: dict[str, str]) -> Card:
    return {
        "tag": "table",
        "page_size": len(rows),
        "freeze_first_column": True,
        "header_style": {"background_style": "grey", "bold": True, "text_size": "normal"},
        "columns": [
            {"name": "pr", "display_name": t["col_pr"], "data_type": "lark_md", "width": "auto"},
            {"name": "summary", "display_name": t["col_summary"], "data_type": "lark_md"},
            {"name": "scores", "display_name": t["col_scores"], "data_type": "text", "width": "auto"},
        ],
        "rows": [
            {
                "pr": lines.cite([p.number], 1),
                "summary": lines.prose(p.summary or p.title, KEY_PR_CHARS),
                "scores": scores(p),
            }
            for p in rows
        ],
    }


def _risk_line(name: str, prs: list[int], evidence: str, detail: Detail) -> str:
    evidence = lark_md(evidence, detail.chars)
    return f"**{lark_md(name, detail.chars)}** {cite(prs)}\n<font color='grey'>{evidence}</font>"


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
    header: Card = {"title": {"tag": "plain_text", "content": plain(text, 120)}, "template": template}
    if subtitle:
        header["subtitle"] = {"tag": "plain_text", "content": plain(subtitle, 80)}
    return header


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
    """Figures side by side: three in a row, else two per row, so they stay readable on a phone."""
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
    mode = "trisect" if len(columns) == 3 else "bisect"
    return {"tag": "column_set", "flex_mode": mode, "horizontal_spacing": "small", "columns": columns}


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
