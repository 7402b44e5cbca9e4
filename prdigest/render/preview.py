"""A Lark card (JSON 2.0) or a Slack Block Kit message as a simple HTML mock of how the phone clients show
it: one column 390 px wide, the clients' fonts, sizes and paddings, so that its height can be measured
in a browser and its visible text counted (`visible_text`: link targets and markup left out).

Only what prdigest sends is drawn: a header, markdown, column sets, tables, buttons; Slack's header,
section (text, fields), context, divider and actions blocks. Every text is escaped here again, so a
payload cannot put markup of its own into the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

Payload = dict[str, Any]

WIDTH = 390
_INVISIBLE = re.compile("[\u200b\u2060]")
_LARK_COLOURS = {
    "red": "#f54a45",
    "orange": "#ff8800",
    "green": "#34c724",
    "blue": "#3370ff",
    "grey": "#8f959e",
}
_CSS = """
* { box-sizing: border-box; }
body { margin: 0; background: #f2f3f5; width: %dpx;
  font-family: -apple-system, "PingFang SC", "Noto Sans CJK SC", "Helvetica Neue", Arial, sans-serif; }
a { color: #245bdb; text-decoration: none; }
.lark { margin: 8px; background: #fff; border-radius: 8px; overflow: hidden; font-size: 14px;
  line-height: 22px; color: #1f2329; }
.lark .head { padding: 12px; color: #fff; }
.lark .head .title { font-size: 16px; line-height: 24px; font-weight: 600; }
.lark .tag { display: inline-block; font-size: 12px; line-height: 18px; padding: 0 4px;
  border-radius: 4px; background: rgba(255,255,255,.25); margin-top: 4px; }
.lark .body { padding: 12px; display: flex; flex-direction: column; gap: 12px; }
.lark .md { overflow-wrap: break-word; }
.lark .notation { font-size: 12px; line-height: 18px; }
.lark .cols { display: flex; flex-wrap: wrap; gap: 8px; }
.lark .col { flex: 1 1 0; min-width: 0; border-radius: 6px; }
.lark .cols.flow .col { flex: 0 0 auto; }
.lark .cols.bisect .col { flex: 1 1 calc(50%% - 8px); }
.lark .grey { background: #f5f6f7; padding: 8px; }
.lark .button { display: inline-block; height: 32px; line-height: 30px; padding: 0 12px;
  border: 1px solid #d0d3d6; border-radius: 6px; font-size: 14px; background: #fff; }
.lark .button.primary { background: #3370ff; border-color: #3370ff; color: #fff; }
.lark table { border-collapse: collapse; width: 100%%; font-size: 14px; line-height: 22px; }
.lark th, .lark td { border-bottom: 1px solid #dee0e3; padding: 8px; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
.lark th { background: #f5f6f7; font-weight: 600; }
.slack { margin: 0; background: #fff; padding: 8px 16px 12px 68px; position: relative; font-size: 15px;
  line-height: 22px; color: #1d1c1d; }
.slack .avatar { position: absolute; left: 16px; top: 10px; width: 40px; height: 40px; border-radius: 8px;
  background: #4a154b; }
.slack .who { font-weight: 700; }
.slack .who::before { content: "prdigest"; } /* the app's name, not the message's text */
.slack .block { margin-top: 8px; overflow-wrap: break-word; }
.slack .header { font-size: 18px; line-height: 26px; font-weight: 700; }
.slack .fields { display: grid; grid-template-columns: 1fr 1fr; gap: 8px 16px; }
.slack .context { font-size: 13px; line-height: 18px; color: #616061; }
.slack hr { border: 0; border-top: 1px solid #e8e8e8; }
.slack .actions { display: flex; flex-wrap: wrap; gap: 8px; }
.slack .button { height: 32px; line-height: 30px; padding: 0 12px; border: 1px solid #ccc; border-radius: 4px;
  font-size: 15px; font-weight: 700; }
.slack .button.primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.slack code { font-size: 12px; background: #f6f6f6; border: 1px solid #ddd; border-radius: 3px;
  padding: 0 2px; }
"""


def preview_page(*bodies: str) -> str:
    """A page of previews, one under another (see `lark_preview` and `slack_preview`)."""
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS % WIDTH}</style></head><body>{''.join(bodies)}</body></html>"
    )


def visible_text(body: str) -> str:
    """The text a reader sees in a preview: entities decoded, invisible joiners left out, spaces collapsed."""
    parser = _Text()
    parser.feed(body)
    return re.sub(r"\s+", " ", _INVISIBLE.sub("", "".join(parser.parts))).strip()


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parts.append(" " if tag in ("br", "div", "td", "th", "span") else "")


# --- Lark ----------------------------------------------------------------------------------------

_LARK_MARKUP = re.compile(r"\[([^\[\]]*)\]\(([^()\s]*)\)|\*\*(.+?)\*\*|<font color='(\w+)'>|</font>|\n")


def lark_preview(card: Payload) -> str:
    """A Lark card as the phone client lays it out."""
    head = card.get("header", {})
    colour = _LARK_COLOURS.get(head.get("template", "blue"), "#3370ff")
    tags = "".join(
        f'<span class="tag">{_esc(t["text"]["content"])}</span>' for t in head.get("text_tag_list", [])
    )
    title = f'<div class="title">{_esc(head.get("title", {}).get("content", ""))}</div>'
    subtitle = head.get("subtitle", {}).get("content", "")
    sub = f"<div>{_esc(subtitle)}</div>" if subtitle else ""
    elements = "".join(_lark_element(e) for e in card["body"]["elements"])
    return (
        f'<div class="lark"><div class="head" style="background:{colour}">{title}{sub}{tags}</div>'
        f'<div class="body">{elements}</div></div>'
    )


def lark_md_html(content: str) -> str:
    """Lark markdown as prdigest writes it (links, bold, grey font, numeric entities) in HTML."""

    def one(m: re.Match[str]) -> str:
        if m[1] is not None:
            return f'<a href="{_esc(m[2])}">{_entities(m[1])}</a>'
        if m[3] is not None:
            return f"<b>{lark_md_html(m[3])}</b>"
        if m[4] is not None:
            return f'<span style="color:{_esc(_LARK_COLOURS.get(m[4], m[4]))}">'
        return "</span>" if m[0] == "</font>" else "<br>"

    return _sub(_LARK_MARKUP, content, one, _entities)


def _lark_element(e: Payload) -> str:
    render = _LARK.get(e.get("tag", ""))
    return render(e) if render else ""


def _lark_markdown(e: Payload) -> str:
    size = " notation" if e.get("text_size") == "notation" else ""
    align = f' style="text-align:{_esc(e["text_align"])}"' if "text_align" in e else ""
    return f'<div class="md{size}"{align}>{lark_md_html(e["content"])}</div>'


def _lark_columns(e: Payload) -> str:
    mode = _esc(e.get("flex_mode", "none"))
    columns = "".join(
        f'<div class="col{" grey" if c.get("background_style") == "grey-50" else ""}">'
        + "".join(_lark_element(x) for x in c.get("elements", []))
        + "</div>"
        for c in e["columns"]
    )
    return f'<div class="cols {mode}">{columns}</div>'


def _lark_table(e: Payload) -> str:
    columns = e["columns"]
    head = "".join(f"<th>{_esc(c.get('display_name', c['name']))}</th>" for c in columns)

    def cell(c: Payload, value: object) -> str:
        text = str(value)
        return lark_md_html(text) if c.get("data_type") in ("lark_md", "markdown") else _esc(text)

    rows = "".join(
        "<tr>" + "".join(f"<td>{cell(c, row.get(c['name'], ''))}</td>" for c in columns) + "</tr>"
        for row in e["rows"][: e.get("page_size", 5)]
    )
    return f"<table><tr>{head}</tr>{rows}</table>"


def _lark_button(e: Payload) -> str:
    kind = " primary" if e.get("type") == "primary" else ""
    return f'<span class="button{kind}">{_esc(e["text"]["content"])}</span>'


_LARK: dict[str, Callable[[Payload], str]] = {
    "markdown": _lark_markdown,
    "column_set": _lark_columns,
    "table": _lark_table,
    "button": _lark_button,
}


# --- Slack ---------------------------------------------------------------------------------------

_MRKDWN = re.compile(
    r"<([^<|>\s]+)\|([^<>]*)>|(?<![\w*])\*([^*\n]+)\*(?![\w*])|(?<![\w_])_([^_\n]+)_(?![\w_])|`([^`\n]+)`|\n"
)


def slack_preview(message: Payload) -> str:
    """A Slack message as the phone app lays it out: the app's avatar and name, then its blocks."""
    blocks = "".join(_slack_block(b) for b in message["blocks"])
    return f'<div class="slack"><div class="avatar"></div><div class="who"></div>{blocks}</div>'


def mrkdwn_html(text: str) -> str:
    """Slack mrkdwn as prdigest writes it (links, bold, italic, code, &lt;/&gt;/&amp;) in HTML."""

    def one(m: re.Match[str]) -> str:
        if m[1] is not None:
            return f'<a href="{_esc(m[1])}">{_entities(m[2])}</a>'
        if m[3] is not None:
            return f"<b>{_entities(m[3])}</b>"
        if m[4] is not None:
            return f"<i>{_entities(m[4])}</i>"
        if m[5] is not None:
            return f"<code>{_entities(m[5])}</code>"
        return "<br>"

    return _sub(_MRKDWN, text, one, _entities)


def _slack_text(obj: Payload) -> str:
    return mrkdwn_html(obj["text"]) if obj.get("type") == "mrkdwn" else _esc(obj["text"])


def _slack_block(b: Payload) -> str:
    kind = b["type"]
    if kind == "header":
        inner = _esc(b["text"]["text"])
    elif kind == "section":
        inner = _slack_text(b["text"]) if "text" in b else ""
        if "fields" in b:
            inner += (
                '<div class="fields">'
                + "".join(f"<div>{_slack_text(f)}</div>" for f in b["fields"])
                + "</div>"
            )
    elif kind == "context":
        inner = " ".join(_slack_text(e) for e in b["elements"] if "text" in e)
    elif kind == "actions":
        inner = "".join(_slack_button(e) for e in b["elements"])
    elif kind == "divider":
        inner = "<hr>"
    else:
        inner = ""
    return f'<div class="block {kind}">{inner}</div>'


def _slack_button(e: Payload) -> str:
    kind = " primary" if e.get("style") == "primary" else ""
    return f'<span class="button{kind}">{_esc(e["text"]["text"])}</span>'


# --- text ----------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _entities(text: str) -> str:
    """Text that may hold the platform's entities (&#35;, &lt;): decoded, then escaped for the page."""
    return _esc(html.unescape(text))


def _sub(
    pattern: re.Pattern[str], text: str, one: Callable[[re.Match[str]], str], rest: Callable[[str], str]
) -> str:
    out, last = [], 0
    for m in pattern.finditer(text):
        out += [rest(text[last : m.start()]), one(m)]
        last = m.end()
    return "".join([*out, rest(text[last:])])
