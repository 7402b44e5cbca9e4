"""A Reply as each platform's payload: a Lark message (card or text) and a Slack message.

The renderers lay out the structured part of a reply; replies that are text only
(confirmations, refusals, errors) go as plain text, made inert line by line.
"""

from __future__ import annotations

import re
from typing import Any

from prdigest.handlers.replies import Reply
from prdigest.models import Report, is_iso_week, iso_week_label
from prdigest.render.lark import render_lark_card, render_lark_view
from prdigest.render.sanitize import plain, slack_literal
from prdigest.render.views import (
    HelpLine,
    HelpView,
    PRExplainView,
    PRHead,
    PRListView,
    ReportRef,
    RisksView,
    View,
)


def view_of(reply: Reply) -> View | None:
    """The card view of a reply, when it has one."""
    if reply.kind == "risks" and reply.report is not None and reply.risks:
        return RisksView(
            lang=reply.lang, ref=ReportRef.of(reply.report), risks=reply.risks, title=reply.title
        )
    if reply.kind == "explain" and reply.pr is not None and reply.analysis is not None:
        return PRExplainView(lang=reply.lang, pr=PRHead.of(reply.pr), analysis=reply.analysis)
    if reply.kind == "prs" and reply.prs:
        return PRListView(lang=reply.lang, title=reply.title, items=reply.prs)
    if reply.kind == "help":
        lines = [HelpLine(usage=h.usage, about=h.about) for h in reply.help]
        return HelpView(lang=reply.lang, lines=lines, title=reply.title)
    return None


def lark_payload(reply: Reply, report_url: str | None = None) -> dict[str, Any]:
    """`msg_type` and `content` of an im.v1 message (the content as a dict; the adapter JSON-encodes it)."""
    if reply.kind == "report" and reply.report is not None:
        return {"msg_type": "interactive", "content": render_lark_card(reply.report, report_url)}
    view = view_of(reply)
    if view is not None:
        return {"msg_type": "interactive", "content": render_lark_view(view)}
    return {
        "msg_type": "text",
        "content": {"text": "\n".join(plain(line) for line in _unmarked(reply.text))},
    }


def slack_payload(reply: Reply, report_url: str | None = None) -> dict[str, Any]:
    """The arguments of chat.postMessage besides the channel: text, and blocks when there is a card."""
    from prdigest.render.slack import render_slack_message, render_slack_view

    if reply.kind == "report" and reply.report is not None:
        return render_slack_message(reply.report, report_url)
    view = view_of(reply)
    if view is not None:
        return render_slack_view(view)
    return {"text": "\n".join(slack_literal(line) for line in _unmarked(reply.text)), "mrkdwn": False}


def _unmarked(text: str) -> list[str]:
    """A text reply's lines without its Markdown (bold markers, backslash escapes): shown as plain text."""
    return [re.sub(r"\\(.)", r"\1", line).replace("**", "") for line in text.splitlines()]


def report_file_name(report: Report) -> str:
    """The report as a Markdown file, on either platform: e.g. acme-ml-trainer-2026-W37.md; a window
    that is not one ISO week is named by its dates."""
    since, until = report.window.since, report.window.until
    label = iso_week_label(since) if is_iso_week(since, until) else f"{since}_{until}"
    return f"{report.repo.replace('/', '-')}-{label}.md"


def report_file_due(reply: Reply, report_url: str | None) -> bool:
    """A report answered in chat follows as a Markdown file when it has no page to link to."""
    return reply.kind == "report" and reply.report is not None and report_url is None
