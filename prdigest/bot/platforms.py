"""The chat adapters the settings configure, each with its deliverer; HTTP-mode ones mount on the web app.

`ADAPTERS` builds each platform's adapter by name (the settings' table of the same name configures it).
A builder imports its adapter, and so its SDK, only when its platform is configured: lark-oapi alone
costs seconds and ~176 MB.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from prdigest.bot.adapters import AdapterDeliverer, ChatAdapter, ReportUrl
from prdigest.bot.nudges import nudge_for

if TYPE_CHECKING:
    from prdigest.bot.app import BotCore
    from prdigest.bot.web import WebApp, WSGIApp
    from prdigest.config import Settings
    from prdigest.storage import Store

# (settings, the chat core or None for a delivery-only client, report page links): the adapter.
AdapterBuilder = Callable[["Settings", "BotCore | None", "ReportUrl | None"], ChatAdapter]


@runtime_checkable
class HttpEvents(Protocol):
    """An adapter that takes its platform's events over HTTP, as a WSGI app."""

    def wsgi_app(self) -> WSGIApp: ...


def _lark(settings: Settings, core: BotCore | None, urls: ReportUrl | None) -> ChatAdapter:
    from prdigest.bot.lark.adapter import LarkBot

    return LarkBot(settings, core, report_url_for=urls)


def _slack(settings: Settings, core: BotCore | None, urls: ReportUrl | None) -> ChatAdapter:
    from prdigest.bot.slack.adapter import SlackBot

    return SlackBot(settings, core, report_url_for=urls)


# The adapters by platform (the names subscription.PLATFORMS knows), in the order they are started.
ADAPTERS: dict[str, AdapterBuilder] = {"lark": _lark, "slack": _slack}


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
    settings: Settings, core: BotCore | None, web: WebApp | None, store: Store | None = None
) -> list[tuple[str, ChatAdapter, AdapterDeliverer]]:
    """(platform, adapter, deliverer) for each configured platform; HTTP-mode adapters mount on ``web``.
    With the cache (``store``), a deliverer mentions the reviewers of waiting PRs when the settings say so."""
    found: list[tuple[str, ChatAdapter, AdapterDeliverer]] = []
    urls = page_urls(settings, core)
    for name, build in ADAPTERS.items():
        table = getattr(settings, name, None)
        if table is None or not table.enabled:
            continue
        adapter = build(settings, core, urls)
        http = getattr(table, "mode", None) == "http"
        if web is not None and http and adapter.events_path is not None and isinstance(adapter, HttpEvents):
            web.mount_events(adapter.events_path, adapter.wsgi_app())
        nudge = nudge_for(settings, store, adapter, name) if store is not None else None
        found.append((name, adapter, AdapterDeliverer(adapter, nudge)))
    return found
