"""The Lark/Feishu adapter: events in (long connection or HTTP), messages and cards out.

Only the Lark modules use lark-oapi, and only its core, `im.v1` and the long connection
(`lark_sdk` imports them without the rest of the SDK), so nothing loads it unless a Lark
app is configured: the connections in `lark_connection`, a thin event dispatcher in
`lark_dispatch`, the event mapping in `lark_events`, the outbound client in `lark_client`.
Events become an `Inbound` for `BotCore`, which acknowledges at once and works after;
answers go back as replies in the message's thread. Every message carries a `uuid`, Lark's idempotency key.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from prdigest.bot.adapters import LookupDenied, ReportUrl
from prdigest.bot.app import WORKING, BotCore
from prdigest.bot.lark.client import HTTP_TIMEOUT_S, LarkError, LarkOutbound, keyed
from prdigest.bot.lark.connection import THREAD_TIMEOUT_S, LongConnection, events_app, ws_client
from prdigest.bot.lark.contact import NO_PERMISSION, PERMISSION, open_id_by_email
from prdigest.bot.lark.dispatch import EventDispatcher
from prdigest.bot.lark.events import action_inbound, message_inbound
from prdigest.bot.lark.messages import idempotency_key, message_text
from prdigest.bot.lark.sdk import P2CardActionTrigger, P2CardActionTriggerResponse, P2ImMessageReceiveV1
from prdigest.bot.payloads import lark_payload, report_file_due, report_file_name
from prdigest.bot.web import WSGIApp
from prdigest.config import Settings
from prdigest.errors import ConfigError
from prdigest.handlers import Reply
from prdigest.models import Report
from prdigest.render.lark import render_lark_thread
from prdigest.render.markdown import render_markdown
from prdigest.storage.cards import remember_card

__all__ = [
    "HTTP_TIMEOUT_S",
    "THREAD_TIMEOUT_S",
    "TOAST",
    "LarkBot",
    "LarkError",
    "ReportUrl",
    "message_text",
    "report_file_name",
]

log = logging.getLogger("prdigest.lark")

# Lark's codes for credentials it refuses: an app id or secret that is wrong, an app disabled or not
# installed, a tenant token that is invalid.
REFUSED_CODES = frozenset({10003, 10014, 99991663})
# A button's answer must be acknowledged within 3 s: the toast says the work has started.
TOAST = {
    "type": "info",
    "content": WORKING["en"],
    "i18n": {"zh_cn": WORKING["zh"], "en_us": WORKING["en"]},
}


class LarkBot:
    """One Lark app, a `ChatAdapter`. ``core`` None: a delivery-only client."""

    events_path = "/lark/events"  # where `prdigest serve` mounts wsgi_app() in mode "http"

    def __init__(self, settings: Settings, core: BotCore | None, *, report_url_for: ReportUrl | None = None):
        cfg = settings.lark
        if not (cfg.app_id and cfg.app_secret):
            raise ConfigError("Lark needs PRDIGEST_LARK_APP_ID and PRDIGEST_LARK_APP_SECRET")
        if cfg.mode == "http" and cfg.verification_token is None:
            raise ConfigError("Lark HTTP events need PRDIGEST_LARK_VERIFICATION_TOKEN")
        self.core = core
        self.mode = cfg.mode
        self._report_url_for = report_url_for or (lambda report, chat_id, viewer: None)
        app_id, secret, domain = cfg.app_id, cfg.app_secret.get_secret_value(), cfg.domain.rstrip("/")
        self.out = LarkOutbound(app_id, secret, domain)
        self.client = self.out.client
        self.events = EventDispatcher(
            _secret(cfg.encrypt_key), _secret(cfg.verification_token), self._on_message, self._on_card_action
        )
        self._long = LongConnection(lambda: ws_client(app_id, secret, self.events, domain))

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        """Check the credentials (by asking who the bot is), then open the long connection in mode "ws"."""
        self.bot_open_id()
        if self.mode == "ws":
            self._long.start()
            log.info("Lark: listening on the long connection")

    def stop(self) -> None:
        self._long.stop()

    def wsgi_app(self) -> WSGIApp:
        """Events and card callbacks posted by Lark (mode "http"); mount it at ``events_path``."""
        return events_app(self.events)

    def bot_open_id(self) -> str:
        return self.out.bot_open_id()

    # --- the outbound client (ChatAdapter) -------------------------------------------

    def post_reply(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        return self.out.post(chat_id, thread, payload, idempotency_key(key))

    def post_card(
        self, chat_id: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        return self.out.post_card(chat_id, thread, report, report_url, key)

    def update_card(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        self.out.update_card(message_id, report, report_url, key)

    def post_file(
        self, chat_id: str, thread: str | None, card_id: str, report: Report, markdown: str, key: str
    ) -> None:
        """The file as a message of its own, beside the card (in ``thread`` when given)."""
        self.out.post_file(chat_id, thread, report, markdown, key)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        """The report card posted with ``key`` in the chat's history (the uuid lasts an hour only)."""
        return self.out.find_delivery(chat_id, key)

    def thread_messages(self, report: Report, report_url: str | None) -> list[dict[str, Any]]:
        return render_lark_thread(report, report_url)

    def thread_replies(self, chat_id: str, card_id: str, key: str) -> dict[str, str]:
        """The card's thread as listed (the uuid alone dedupes for an hour only)."""
        return self.out.thread_replies(card_id, key)

    def post_thread_reply(self, chat_id: str, card_id: str, message: dict[str, Any], key: str) -> str:
        return self.out.reply(card_id, keyed(message, key), idempotency_key(key))

    def update_thread_reply(self, chat_id: str, message_id: str, message: dict[str, Any], key: str) -> None:
        self.out.patch(message_id, keyed(message, key)["content"], "update a thread reply")

    def mention(self, user: str) -> str:
        return f'<at user_id="{user}"></at>'

    def user_by_email(self, email: str) -> str | None:
        try:
            return open_id_by_email(self.out, email)
        except LarkError as exc:
            if exc.code in NO_PERMISSION:
                raise LookupDenied("Lark", PERMISSION) from None
            raise

    def text_payload(self, text: str) -> dict[str, Any]:
        return {"msg_type": "text", "content": {"text": text}}

    def refused(self, exc: BaseException) -> bool:
        return getattr(exc, "code", None) in REFUSED_CODES

    # --- events ---------------------------------------------------------------------

    def member_chats(self, user_id: str, chat_ids: Collection[str]) -> set[str] | None:
        """Each chat's member list read (Lark has no list of a user's chats for a bot); a chat whose list
        is refused is left out, and None when every one is (the app lacks im:chat.members:read)."""
        found: set[str] = set()
        refused = 0
        for chat_id in sorted(chat_ids):
            try:
                members = self.out.chat_member_ids(chat_id)
            except LarkError as exc:
                log.warning("Lark: could not read the members of %s: %s", chat_id, exc)
                refused += 1
                continue
            if user_id in members:
                found.add(chat_id)
        return None if chat_ids and refused == len(chat_ids) else found

    def _on_message(self, data: P2ImMessageReceiveV1) -> None:
        inbound = message_inbound(data, self.bot_open_id)
        if inbound is None or self.core is None:
            return
        message_id, key, chat_id = inbound.thread_id or "", inbound.event_id, inbound.chat_id
        root = inbound.card_id or message_id

        def notice(text: str) -> None:
            self.post_reply(chat_id, message_id, self.text_payload(text), f"{key}:notice")

        self.core.submit(inbound, lambda reply: self._answer(reply, message_id, key, chat_id, root), notice)

    def _on_card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        """A button: acknowledged with a toast at once; the answer follows in the card's thread."""
        inbound = action_inbound(data)
        if inbound is None or self.core is None:
            return P2CardActionTriggerResponse()
        event_id, chat_id, card_id = inbound.event_id, inbound.chat_id, inbound.message_id or ""
        # Another week is a new report: a new card in the chat; the other answers go in the card's thread.
        thread = None if (inbound.action or {}).get("action") == "another_week" else card_id
        self.core.submit(inbound, lambda reply: self._answer(reply, thread, event_id, chat_id, thread))
        return P2CardActionTriggerResponse({"toast": TOAST})

    def _answer(self, reply: Reply, thread: str | None, key: str, chat_id: str, root: str | None) -> None:
        """Post a Reply (in ``thread``, else in the chat); a report without a page also goes as a Markdown
        file. A card about a report is remembered, itself and as the latest of its thread (``root``),
        for the follow-ups there."""
        report_url = (
            self._report_url_for(reply.report, chat_id, reply.page_viewer)
            if reply.report is not None
            else None
        )
        message_id = self.post_reply(chat_id, thread, lark_payload(reply, report_url), f"{key}:answer")
        if reply.report is not None and self.core is not None:
            for card in {message_id, root or message_id}:
                remember_card(self.core.services.store, "lark", chat_id, card, reply.report)
        if reply.report is not None and report_file_due(reply, report_url):
            self.post_file(chat_id, thread, message_id, reply.report, render_markdown(reply.report), key)


def _secret(value: Any) -> str:
    return value.get_secret_value() if value is not None else ""
