"""The report and the chat answers as Slack messages, built from slack_sdk's block models so that
Slack's own validators run (`.to_dict()`).

The weekly report is a digest message (render/digest.py) and thread replies, each packed to at most
`MAX_BLOCKS` blocks and fewer than `MAX_CHARS` characters of text. A chat answer is built at each
detail level, richest first, until it fits; every section text is kept under `SECTION_CHARS`, and
what is left out is counted in an "N more in the full report" line.
Untrusted text goes through `slack_text` (mrkdwn, verbatim) or `plain`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from prdigest.i18n import report_texts, texts
from prdigest.models import Report, ReportPR
from prdigest.render.digest import (
    Item,
    Markup,
    digest_title,
    digest_warnings,
    key_pr_line,
    lines_of,
    numbered,
    pack,
    thread_attention,
    thread_details,
    thread_key_prs,
    thread_risks,
)
from prdigest.render.sanitize import plain, slack_text
from prdigest.render.team import card_body, team_title
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

Message = dict[str, Any]

MAX_BLOCKS = 50
MAX_CHARS = 12_000
SECTION_CHARS = 3_000
FIELD_CHARS = 2_000
_HEADER_CHARS = 150
_FIELDS = 10
# Slack has no card colour; a coloured mark carries the week's risk level.
_LEVEL_MARK = {"low": "🟢", "medium": "🟠", "high": "🔴"}


# "#N" as slack_text writes it, not inside a word, a link or an entity; Chinese text may touch it
# on either side ("和#4137").
_REF = re.compile(r"(?<![0-9A-Za-z_&|/#])#(\d+)(?![0-9A-Za-z_])")


def _as_link(n: int, url: str) -> str:
    return f"<{url}|#{n}>"


def render_slack_message(report: Report, report_url: str | None = None) -> Message:
    """The weekly report as a digest of one phone screen (its thread: `render_slack_thread`):
    `client.chat_postMessage(channel=..., **message)`. Every piece is cut, so it fits any week."""
    title = team_title(report, report_texts(report.lang, report.window.since, report.window.until))
    return _message(title if report.parts else digest_title(report), _report_blocks(report, report_url))


def render_slack_view(view: View) -> Message:
    """A chat answer: risks, one PR explained, a PR list or help."""
    build = _VIEW_BLOCKS[type(view)]
    return _fit(_VIEW_FALLBACK[type(view)](view), lambda detail: build(view, detail))


def slack_message_chars(message: Message) -> int:
    """Characters of text in the message: the fallback text and every text in its blocks."""
    return len(message["text"]) + _text_chars(message["blocks"])


def _text_chars(node: Any) -> int:
    if isinstance(node, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else _text_chars(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(_text_chars(v) for v in node)
    return 0


def _fit(fallback: str, build: Callable[[Detail], list[Block | None]]) -> Message:
    for detail in LEVELS[:-1]:
        message = _message(fallback, build(detail))
        if len(message["blocks"]) <= MAX_BLOCKS and slack_message_chars(message) < MAX_CHARS:
            return message
    # The leanest level is bounded by construction; the tests hold it to the limits.
    return _message(fallback, build(LEVELS[-1]))


def _message(fallback: str, blocks: list[Block | None]) -> Message:
    return {
        "text": slack_text(fallback, _HEADER_CHARS),  # notifications read it as mrkdwn
        "blocks": [b.to_dict() for b in blocks if b],  # to_dict() runs Slack's validators
        # Our own PR links are enough; no previews of them.
        "unfurl_links": False,
        "unfurl_media": False,
    }


# --- the weekly report: a digest, then its thread -----------------------------------------

MARKUP = Markup(
    text=slack_text,
    bold=lambda text: f"*{text}*",
    note=lambda text: text,  # Slack has no grey: the line break sets the evidence apart
    link=_as_link,
    ref=_REF,
)


def _report_blocks(report: Report, report_url: str | None) -> list[Block | None]:
    t = report_texts(report.lang, report.window.since, report.window.until)
    body = card_body(report, t, MARKUP, report_url, slack_text)
    title, first, attention, figures = body.title, body.first, body.attention, body.figures
    sections, buttons = body.sections, body.buttons
    level = f"{_LEVEL_MARK[report.risk_level]} *{slack_text(t[f'risk_{report.risk_level}'])}*"
    blocks: list[Block | None] = [_header(title), _section(f"{level} · {first}")]
    warnings = digest_warnings(report, MARKUP)
    if warnings:  # e.g. a partial sync: the reader must see it before the figures
        blocks.append(_section("\n".join(warnings)))
    if report.stats.merged_prs:
        blocks.append(_fields(figures))
    for heading, shown in sections:
        if shown:
            blocks.append(_section("\n".join([f"*{slack_text(heading)}*", *shown])))
    if attention:  # open work: what to do now, just above the buttons
        blocks.append(_section("\n".join(attention)))
    blocks.append(_actions(buttons))
    return blocks


def render_slack_thread(report: Report, report_url: str | None = None) -> list[Message]:
    """The thread replies under the weekly message (post each with the message's ``thread_ts``): every
    key PR, every risk, then the summary, themes and recommendations, then the open PRs needing
    attention; each within Slack's limits. A team's thread has each repository's, headed by its name."""
    if report.parts:
        return [message for part in report.parts for message in _thread(part, f"{part.repo} · ")]
    return _thread(report, "")


def _thread(report: Report, head: str) -> list[Message]:
    t = report_texts(report.lang, report.window.since, report.window.until)
    lines = lines_of(report, MARKUP)
    key, left = thread_key_prs(report)
    more = ["_" + slack_text(t["more_in_full"].format(n=left)) + "_"] if left else []
    out = _text_messages(head + t["key_prs"], numbered([key_pr_line(p, lines) for p in key]) + more)
    out += _item_messages(head + t["card_risks"], thread_risks(report, t, lines))
    if report.stats.merged_prs:
        out += _text_messages(head + t["c_details"], thread_details(report, t, lines))
    return out + _item_messages(head + t["att_heading"], thread_attention(report, t, lines))


def slack_messages(report: Report, report_url: str | None = None) -> list[Message]:
    """What a channel is sent for the week: the message, then its thread replies."""
    return [render_slack_message(report, report_url), *render_slack_thread(report, report_url)]


def _within_limits(message: Message) -> bool:
    return len(message["blocks"]) <= MAX_BLOCKS and slack_message_chars(message) < MAX_CHARS


def _text_messages(heading: str, lines: list[str]) -> list[Message]:
    """Lines under a heading, in sections of at most SECTION_CHARS, in as many messages as that takes."""

    def build(chunk: Sequence[str], last: bool) -> Message:
        sections = pack(chunk, lambda part, _: _section("\n".join(part)), _section_fits)
        return _message(heading, [_header(heading), *sections])

    return pack(lines, build, _within_limits)


def _item_messages(heading: str, items: list[Item]) -> list[Message]:
    """Lines under a heading, each with its buttons below it, in as many messages as that takes."""

    def build(chunk: Sequence[Item], last: bool) -> Message:
        blocks = [b for text, buttons in chunk for b in (_section(text), _actions(buttons))]
        return _message(heading, [_header(heading), *blocks])

    return pack(items, build, _within_limits)


def _section_fits(section: SectionBlock) -> bool:
    return section.text is not None and len(section.text.text) <= SECTION_CHARS


def _risk_line(name: str, prs: list[int], evidence: str, detail: Detail) -> str:
    return f"*{slack_text(name, detail.chars)}* {cite(prs)}\n      {slack_text(evidence, detail.chars)}"


# --- chat answers --------------------------------------------------------------


def _risks_blocks(view: RisksView, detail: Detail) -> list[Block | None]:
    t = texts(view.lang)
    lines = [_risk_line(r.title, r.prs, r.evidence, detail) for r in view.risks[: detail.items]]
    return [
        _header(risks_title(view, t)),
        _context(window_text(t, view.ref)),
        _list(t["card_risks"], lines, len(view.risks), t)
        if lines
        else _section(slack_text(t["no_risk_obs"])),
        _actions(risks_buttons(view, t, detail)),
    ]


def _explain_blocks(view: PRExplainView, detail: Detail) -> list[Block | None]:
    t = texts(view.lang)
    pr, a = view.pr, view.analysis
    blocks: list[Block | None] = [
        _header(f"#{pr.number} {pr.title}"),
        _context(t["pr_by"].format(author=pr.author, merged=f"{pr.merged_at:%Y-%m-%d}")),
        _fields(explain_figures(view, t)),
        _section(slack_text(a.summary or pr.title, detail.chars * 2)),
    ]
    if a.explanation and detail.summary:
        blocks.append(_section(slack_text(a.explanation, detail.summary)))
    for name, lines in explain_sections(view, t):
        shown = [slack_text(line, detail.chars) for line in lines[: detail.items]]
        blocks.append(_list(name, shown, len(lines), t))
    if a.related:
        blocks.append(_section(f"*{slack_text(t['x_related'])}* {cite(a.related, detail.items * 4)}"))
    blocks.append(_actions(explain_buttons(view, t)))
    return blocks


def _list_blocks(view: PRListView, detail: Detail) -> list[Block | None]:
    t = texts(view.lang)
    subtitle = window_text(t, view.ref) if view.ref else t["n_prs"].format(n=len(view.items))
    lines = [
        f"{_pr_link(p)} {slack_text(p.title, detail.chars)} · {slack_text(p.author, 40)} · "
        f"{score(p.importance)}"
        for p in view.items[: detail.items * 2]
    ]
    body = _list(view.title, lines, len(view.items), t) if lines else _section(slack_text(t["no_prs"]))
    return [_header(view.title), _context(subtitle), body, _actions(list_buttons(view, t, detail))]


def _help_blocks(view: HelpView, detail: Detail) -> list[Block | None]:
    t = texts(view.lang)
    name = view.title or t["card_help"]
    lines = [
        f"*{slack_text(h.usage, detail.chars)}* {slack_text(h.about, detail.chars * 2)}"
        for h in view.lines[: detail.items * 4]
    ]
    return [_header(name), _context(t["card_help_sub"]), _list(name, lines, len(view.lines), t)]


_VIEW_BLOCKS: dict[type, Callable[[Any, Detail], list[Block | None]]] = {
    RisksView: _risks_blocks,
    PRExplainView: _explain_blocks,
    PRListView: _list_blocks,
    HelpView: _help_blocks,
}
_VIEW_FALLBACK: dict[type, Callable[[Any], str]] = {
    RisksView: lambda v: risks_title(v, texts(v.lang)),
    PRExplainView: lambda v: f"#{v.pr.number} {v.pr.title}",
    PRListView: lambda v: v.title,
    HelpView: lambda v: v.title or texts(v.lang)["card_help"],
}


# --- blocks ----------------------------------------------------------------------


def _mrkdwn(text: str) -> MarkdownTextObject:
    # verbatim: Slack neither links bare URLs nor parses mentions in it.
    return MarkdownTextObject(text=text, verbatim=True)


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=plain(text, _HEADER_CHARS), emoji=False))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[_mrkdwn(slack_text(text, SECTION_CHARS))])


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=_mrkdwn(text))


def _fields(figures: list[tuple[str, str]]) -> SectionBlock:
    # Labels and values are short figures; the cut only guards Slack's per-field limit.
    half = FIELD_CHARS // 2 - 4
    fields = [_mrkdwn(f"*{slack_text(label, half)}*\n{slack_text(value, half)}") for label, value in figures]
    return SectionBlock(fields=fields[:_FIELDS])


def _list(heading: str, lines: list[str], total: int, t: dict[str, str]) -> SectionBlock:
    """A heading and numbered lines (already escaped), cut to fit one section, plus a count of the rest."""
    text = f"*{slack_text(heading, 150)}*"
    shown = 0
    # Room for the "N more" line, whatever N.
    room = SECTION_CHARS - len(t["more_in_full"]) - 12
    for line in lines:
        candidate = f"{text}\n{shown + 1}. {line}"
        if len(candidate) > room:
            break
        text, shown = candidate, shown + 1
    if total > shown:
        text += "\n_" + slack_text(t["more_in_full"].format(n=total - shown)) + "_"
    return _section(text)


def _pr_link(pr: ReportPR) -> str:
    url = pr_url(pr)
    return f"<{url}|#{pr.number}>" if url else f"#{pr.number}"


def _actions(buttons: list[Button]) -> ActionsBlock | None:
    return ActionsBlock(elements=[_button(b) for b in buttons]) if buttons else None


def _button(button: Button) -> ButtonElement:
    style = "primary" if button.primary else None
    label = PlainTextObject(text=plain(button.label, 75), emoji=False)
    if button.url:
        return ButtonElement(text=label, url=button.url, action_id="prdigest_open_url", style=style)
    assert button.value is not None, "a button is a link or a callback"
    value = button.value
    action_id = f"prdigest_{value.action}" + (f"_{value.number}" if value.number is not None else "")
    payload = json.dumps(value.payload(), separators=(",", ":"))
    return ButtonElement(text=label, action_id=action_id, value=payload, style=style)
