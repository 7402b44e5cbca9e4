"""The chat adapters the settings configure, each with its deliverer for the weekly job.

The SDKs are imported here only for the platforms that are configured: lark-oapi alone
costs seconds and ~176 MB.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prdigest.bot.app import BotCore
from prdigest.bot.web import WebApp
from prdigest.config import Settings
from prdigest.models import Report
from prdigest.storage.deliveries import page_token


class _LarkDeliverer:
    """The Lark bot as a Deliverer: Lark dedupes on the delivery key (uuid), so there is nothing to find."""

    def __init__(self, bot: Any):
        self.bot = bot

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        return self.bot.deliver(chat_id, report, key, report_url, markdown)

    def update_report(self, chat_id: str, message_id: str, report: Report, report_url: str | None) -> None:
        self.bot.update_report(message_id, report, report_url)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return None


def page_urls(settings: Settings, core: BotCore | None) -> Callable[[Report], str | None] | None:
    """The page address of a report answered in chat, when report pages are public."""
    if not settings.public_url or core is None:
        return None
    base, store = settings.public_url.rstrip("/"), core.services.store

    def url_for(report: Report) -> str | None:
        return f"{base}/reports/{page_token(store, report.id)}" if report.id is not None else None

    return url_for


def chat_adapters(settings: Settings, core: BotCore | None, web: WebApp | None) -> list[tuple[str, Any, Any]]:
    """(platform, adapter, deliverer) for each configured platform; HTTP-mode adapters mount on ``web``."""
    found: list[tuple[str, Any, Any]] = []
    urls = page_urls(settings, core)
    if settings.lark.enabled:
        from prdigest.bot.lark import EVENTS_PATH, LarkBot

        lark = LarkBot(settings, core, report_url_for=urls)
        if web is not None and settings.lark.mode == "http":
            web.mount(EVENTS_PATH, lark.wsgi_app())
        found.append(("lark", lark, _LarkDeliverer(lark)))
    if settings.slack.enabled:
        from prdigest.bot.slack import EVENTS_PATH as SLACK_EVENTS
        from prdigest.bot.slack import SlackBot

        slack = SlackBot(settings, core, report_url_for=urls)
        if web is not None and settings.slack.mode == "http":
            web.mount(SLACK_EVENTS, slack.wsgi_app())
        found.append(("slack", slack, slack))
    return found
