"""The chat-adapter contract, and the adapters the settings configure.

Every platform adapter (`LarkBot`, `SlackBot`) is a `ChatAdapter`: the service starts and
stops it, the weekly delivery posts and updates its report card through it (as an
`AdapterDeliverer`), and the chat answers post the same card plus the Markdown file.
The SDKs are imported here only for the platforms that are configured: lark-oapi alone
costs seconds and ~176 MB.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from prdigest.models import Report

if TYPE_CHECKING:
    from prdigest.bot.app import BotCore
    from prdigest.bot.web import WebApp
    from prdigest.config import Settings

ReportUrl = Callable[[Report, str], str | None]  # (report, chat id): a page's link for that chat


class ChatAdapter(Protocol):
    """One chat platform: its connection, and its outbound client (post, reply, update, upload, find)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def post_reply(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        """Post a message (in ``thread`` when given), the platform's payload; its message id. ``key`` is
        the platform's idempotency key where it has one (Lark's uuid; Slack has none)."""
        ...

    def post_card(
        self, chat_id: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        """Post a report card, tagged with ``key`` (the platform's idempotency); its message id."""
        ...

    def update_card(self, chat_id: str, message_id: str, report: Report, report_url: str | None) -> None:
        """Redraw a posted report card in place."""
        ...

    def post_file(
        self, chat_id: str, thread: str | None, card_id: str, report: Report, markdown: str, key: str
    ) -> None:
        """Post the report as a Markdown file next to its card ``card_id``."""
        ...

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        """The message posted with ``key``, when the platform can tell; else None."""
        ...


def post_report(
    adapter: ChatAdapter,
    chat_id: str,
    thread: str | None,
    report: Report,
    report_url: str | None,
    markdown: str,
    key: str,
) -> str:
    """Card plus Markdown file: the report card, and the full report as a file when it has no page."""
    card_id = adapter.post_card(chat_id, thread, report, report_url, key)
    if report_url is None:
        adapter.post_file(chat_id, thread, card_id, report, markdown, key)
    return card_id


class AdapterDeliverer:
    """A chat adapter as the weekly job's Deliverer."""

    def __init__(self, adapter: ChatAdapter):
        self.adapter = adapter

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        return post_report(self.adapter, chat_id, None, report, report_url, markdown, key)

    def update_report(self, chat_id: str, message_id: str, report: Report, report_url: str | None) -> None:
        self.adapter.update_card(chat_id, message_id, report, report_url)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return self.adapter.find_delivery(chat_id, key)


def page_urls(settings: Settings, core: BotCore | None) -> ReportUrl | None:
    """The page address of a report answered in a chat, when report pages are public."""
    if not settings.public_url or core is None:
        return None
    from prdigest.bot.pages import page_link

    store = core.services.store
    return lambda report, chat_id: page_link(settings, store, report.id, chat_id)


def chat_adapters(
    settings: Settings, core: BotCore | None, web: WebApp | None
) -> list[tuple[str, ChatAdapter, AdapterDeliverer]]:
    """(platform, adapter, deliverer) for each configured platform; HTTP-mode adapters mount on ``web``."""
    found: list[tuple[str, ChatAdapter, AdapterDeliverer]] = []
    urls = page_urls(settings, core)
    if settings.lark.enabled:
        from prdigest.bot.lark import EVENTS_PATH, LarkBot

        lark = LarkBot(settings, core, report_url_for=urls)
        if web is not None and settings.lark.mode == "http":
            web.mount(EVENTS_PATH, lark.wsgi_app())
        found.append(("lark", lark, AdapterDeliverer(lark)))
    if settings.slack.enabled:
        from prdigest.bot.slack import EVENTS_PATH as SLACK_EVENTS
        from prdigest.bot.slack import SlackBot

        slack = SlackBot(settings, core, report_url_for=urls)
        if web is not None and settings.slack.mode == "http":
            web.mount(SLACK_EVENTS, slack.wsgi_app())
        found.append(("slack", slack, AdapterDeliverer(slack)))
    return found
