"""The chat-adapter contract (the adapters the settings configure are built in bot/platforms.py).

Every platform adapter (`LarkBot`, `SlackBot`) is a `ChatAdapter`: the service starts and
stops it, the weekly delivery posts and updates its report card and the card's thread
through it (as an `AdapterDeliverer`), and the chat answers post their replies through it.
What differs by platform beyond that (its mention syntax, a plain text message's payload, the
errors that mean it refused our credentials, where it posts its events) the adapter says too,
so that no generic module asks which platform it talks to.
Each thread reply carries a key of its own (``<delivery key>:thread:<i>``), so that a run
that takes over a half-posted delivery posts only the replies the thread lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol

from prdigest.errors import PrdigestError
from prdigest.models import Report

# (report, chat id, who the page is for: "chat" or "asker"): a page's link for that chat.
ReportUrl = Callable[[Report, str, str], str | None]


class LookupDenied(PrdigestError):
    """The platform refuses to find its users by email: the app lacks the permission (``needs``)."""

    def __init__(self, platform: str, needs: str):
        super().__init__(f"{platform} does not let the app find users by email: it needs {needs}")
        self.platform = platform
        self.needs = needs


class ChatAdapter(Protocol):
    """One chat platform: its connection, and its outbound client (post, reply, update, upload, find)."""

    @property
    def events_path(self) -> str | None:
        """Where the platform posts its events when it uses the web app (its HTTP mode); None: never."""
        ...

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

    def update_card(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        """Redraw a posted report card in place, keeping its ``key``."""
        ...

    def post_file(
        self, chat_id: str, thread: str | None, card_id: str, report: Report, markdown: str, key: str
    ) -> None:
        """Post the report as a Markdown file next to its card ``card_id``."""
        ...

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        """The message posted with ``key``, when the platform can tell; else None."""
        ...

    def thread_messages(self, report: Report, report_url: str | None) -> list[dict[str, Any]]:
        """The replies under the weekly card, as the platform's payloads, in their order."""
        ...

    def thread_replies(self, chat_id: str, card_id: str, key: str) -> dict[str, str]:
        """The replies of the delivery ``key`` found in the thread of card ``card_id``: reply key -> id."""
        ...

    def post_thread_reply(self, chat_id: str, card_id: str, message: dict[str, Any], key: str) -> str:
        """Post ``message`` in the thread of card ``card_id`` (never at the top level), tagged with
        ``key``; its message id."""
        ...

    def update_thread_reply(self, chat_id: str, message_id: str, message: dict[str, Any], key: str) -> None:
        """Redraw a posted thread reply in place, keeping its ``key``."""
        ...

    def member_chats(self, user_id: str, chat_ids: Collection[str]) -> set[str] | None:
        """The chats among ``chat_ids`` that ``user_id`` is in; None when the platform does not say
        (the app lacks the permission)."""
        ...

    def mention(self, user: str) -> str:
        """``user`` (the platform's user id) mentioned in a message, in the platform's syntax."""
        ...

    def user_by_email(self, email: str) -> str | None:
        """The platform's id of its user with this email; None when it knows no such user. Raises
        `LookupDenied` when the app lacks the permission to ask, the platform's error on any other
        failure."""
        ...

    def text_payload(self, text: str) -> dict[str, Any]:
        """A plain text message as the platform's payload (for `post_reply`)."""
        ...

    def refused(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the platform refusing our credentials: retrying soon cannot help."""
        ...


def thread_key(key: str, index: int) -> str:
    """The key of a delivery's ``index``-th thread reply."""
    return f"{key}:thread:{index}"


def post_thread(
    adapter: ChatAdapter,
    chat_id: str,
    card_id: str,
    report: Report,
    report_url: str | None,
    key: str,
    *,
    look: bool,
    redraw: bool = False,
) -> None:
    """The report's thread under card ``card_id``, each reply tagged with its own key. With ``look``
    (the card was posted by an earlier run, or is redrawn) only the replies the thread lacks are
    posted; with ``redraw`` too, those it holds are redrawn in place."""
    found = adapter.thread_replies(chat_id, card_id, key) if look else {}
    for index, message in enumerate(adapter.thread_messages(report, report_url)):
        reply_key = thread_key(key, index)
        if reply_key not in found:
            adapter.post_thread_reply(chat_id, card_id, message, reply_key)
        elif redraw:
            adapter.update_thread_reply(chat_id, found[reply_key], message, reply_key)


class AdapterDeliverer:
    """A chat adapter as the weekly job's Deliverer: the card, the report as a Markdown file when it has
    no page, then the card's thread. A thread reply that fails after the card went out fails the
    delivery, which the next run completes from the card it finds. ``nudge`` adds the chat's mentions
    to a report before it is rendered (bot/nudges.py)."""

    def __init__(self, adapter: ChatAdapter, nudge: Callable[[Report], Report] | None = None):
        self.adapter = adapter
        self.nudge = nudge or (lambda report: report)

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        report = self.nudge(report)
        card_id = self.adapter.post_card(chat_id, None, report, report_url, key)
        if report_url is None:
            self.adapter.post_file(chat_id, None, card_id, report, markdown, key)
        post_thread(self.adapter, chat_id, card_id, report, report_url, key, look=False)
        return card_id

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        post_thread(self.adapter, chat_id, message_id, self.nudge(report), report_url, key, look=True)

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        report = self.nudge(report)
        self.adapter.update_card(chat_id, message_id, report, report_url, key)
        post_thread(self.adapter, chat_id, message_id, report, report_url, key, look=True, redraw=True)

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return self.adapter.find_delivery(chat_id, key)
