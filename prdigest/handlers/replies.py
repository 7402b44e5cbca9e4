"""Replies: platform-free answers that the Lark, Slack and console adapters render."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from prdigest.models import Lang, PRAnalysis, PullRequest, Report, ReportPR, RiskObservation
from prdigest.subscription import Subscription


class HelpLine(BaseModel):
    usage: str
    about: str


class Reply(BaseModel):
    """What a handler answers. `text` is complete on its own (Markdown): consoles and notifications
    show it; the structured fields let the platform renderers draw cards."""

    kind: Literal["text", "help", "report", "risks", "explain", "prs", "subscriptions", "refusal", "error"]
    lang: Lang
    text: str
    title: str = ""
    repo: str | None = None
    report: Report | None = None
    risks: list[RiskObservation] = []
    prs: list[ReportPR] = []
    pr: PullRequest | None = None
    analysis: PRAnalysis | None = None
    help: list[HelpLine] = []
    subscriptions: list[Subscription] = []
    # PR numbers an answer cites (free questions), all of them in the cache.
    cited: list[int] = []
    # Who the answer's report page is for: the chat its subscriptions let see it, or only the asker
    # (an admin, a direct message): set by handlers.dispatch, kept with the page (bot/pages.py).
    page_viewer: Literal["chat", "asker"] = "chat"
