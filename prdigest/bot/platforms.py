"""The chat adapters the settings configure, each with its deliverer; HTTP-mode ones mount on the web app.

The SDKs are imported here only for the platforms that are configured: lark-oapi alone costs seconds
and ~176 MB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prdigest.bot.adapters import AdapterDeliverer, ChatAdapter, ReportUrl

if TYPE_CHECKING:
    from prdigest.bot.app import BotCore
    from prdigest.bot.web import WebApp
    from prdigest.config import Settings


def page_urls(settings: Settings, core: BotCore | None) -> ReportUrl | None:
    """The page address of a report answered in a chat, when report pages are public."""
    if not settings.public_url or core is None:
        return None
    from prdigest.bot.pages import page_link

    store = core.services.store
    return lambda report, chat_id, viewer: page_link(
        settings, store, report.id, chat_id, "asker" if viewer == "asker" else "chat"
    )


def chat_adapters(
    settings: Settings, core: BotCore | None, web: WebApp | None
) -> list[tuple[str, ChatAdapter, AdapterDeliverer]]:
    """(platform, adapter, deliverer) for each configured platform; HTTP-mode adapters mount on ``web``."""
    found: list[tuple[str, ChatAdapter, AdapterDeliverer]] = []
    urls = page_urls(settings, core)
    if settings.lark.enabled:
        from prdigest.bot.lark.adapter import EVENTS_PATH, LarkBot

        lark = LarkBot(settings, core, report_url_for=urls)
        if web is not None and settings.lark.mode == "http":
            web.mount(EVENTS_PATH, lark.wsgi_app())
        found.append(("lark", lark, AdapterDeliverer(lark)))
    if settings.slack.enabled:
        from prdigest.bot.slack.adapter import EVENTS_PATH as SLACK_EVENTS
        from prdigest.bot.slack.adapter import SlackBot

        slack = SlackBot(settings, core, report_url_for=urls)
        if web is not None and settings.slack.mode == "http":
            web.mount(SLACK_EVENTS, slack.wsgi_app())
        found.append(("slack", slack, AdapterDeliverer(slack)))
    return found
