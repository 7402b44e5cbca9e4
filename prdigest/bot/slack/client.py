"""The Slack adapter's outbound client: chat.postMessage, chat.update, files.upload, the history.

A weekly report carries its delivery key in the message metadata, so that after a crash
between posting and recording, ``find_delivery`` finds it in the channel's history
instead of posting it twice; each of its thread replies carries its own key, which
``thread_replies`` reads back from the thread (conversations.replies). Slack's errors
become ``SlackError`` with Slack's error code; tokens never reach a message or a log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web import SlackResponse
from slack_sdk.webhook import WebhookClient

from prdigest.bot import retries
from prdigest.bot.payloads import report_file_name
from prdigest.clock import machine_utc_now
from prdigest.errors import PrdigestError
from prdigest.models import Report
from prdigest.redact import redact
from prdigest.render.markdown import title
from prdigest.render.slack import render_slack_message

log = logging.getLogger("prdigest.slack")

REPORT_EVENT = "prdigest_report"  # the metadata event type of a weekly report
# find_delivery reads back this far: a crashed delivery is retried within hours, not weeks.
FIND_DAYS = 14
FIND_MESSAGES = 1000
HISTORY_PAGE = 200
MEMBER_PAGE = 200  # users.conversations' largest page is 1,000; Slack advises 200 at most
MEMBER_PAGES = 25  # a user in more than 5,000 channels: the rest are not looked at
TIMEOUT_S = 15
PROBE_TIMEOUT_S = 3  # a readiness probe's auth.test
# Calls that post: a 5xx or a lost answer may mean "posted"; they are not retried in the client
# (the weekly job looks for the post in the channel before it posts again).
POSTING = ("chat.postMessage",)


class SlackError(PrdigestError):
    """A Slack API call failed; ``code`` is Slack's error code (or the connection error's kind)."""

    def __init__(self, method: str, code: str):
        super().__init__(f"Slack {method} failed: {code}")
        self.method = method
        self.code = code


class _Redact(logging.Filter):
    """Bolt logs request bodies (e.g. on a bad signature) and those carry Slack's legacy
    verification token: redact it, and any xox*/xapp token, before a record is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def sdk_logger(name: str) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.filters:
        logger.addFilter(_Redact())  # Bolt copies a base logger's filters to its own loggers
    return logger


class SlackOutbound:
    """Post, reply in threads, update, upload and read the history through one WebClient."""

    def __init__(self, token: str, api_url: str):
        self.client = WebClient(
            token=token,
            base_url=api_url if api_url.endswith("/") else api_url + "/",
            timeout=TIMEOUT_S,
            logger=sdk_logger("prdigest.slack.sdk"),
            retry_handlers=retry_handlers(),
        )

    def auth_test(self) -> None:
        self.api("auth.test", self.client.auth_test)

    def probe(self) -> None:
        """Whether Slack answers and accepts the token now: auth.test once, without retries and with a
        short timeout; a SlackError when not."""
        quick = WebClient(
            token=self.client.token, base_url=self.client.base_url, timeout=PROBE_TIMEOUT_S,
            logger=self.client.logger, retry_handlers=[],
        )  # fmt: skip
        self.api("auth.test", quick.auth_test)

    def post(self, channel: str, thread: str | None, payload: dict[str, Any], **extra: Any) -> str:
        response = self.api(
            "chat.postMessage",
            self.client.chat_postMessage,
            channel=channel,
            thread_ts=thread,
            **payload,
            **extra,
        )
        return str(response["ts"])

    def post_card(
        self, channel: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        """The report's message, tagged with its delivery key in the metadata, posted once; its ts."""
        payload = render_slack_message(report, report_url)
        if thread is not None:
            return self.post(channel, thread, payload, metadata=_metadata(key))
        return self.post_once(channel, None, payload, key, lambda: self.find_delivery(channel, key))

    def post_thread_reply(self, channel: str, card_ts: str, message: dict[str, Any], key: str) -> str:
        """A reply in the card's thread, tagged with its own key in the metadata, posted once; its ts."""
        return self.post_once(
            channel, card_ts, message, key, lambda: self.thread_replies(channel, card_ts, key).get(key)
        )

    def post_once(
        self,
        channel: str,
        thread: str | None,
        payload: dict[str, Any],
        key: str,
        find: Callable[[], str | None],
    ) -> str:
        """A message tagged with ``key``, posted once within the run: after a post that may have gone out
        (a 5xx, a timeout, a lost answer) the message is looked for by its key (``find``) once the shared
        policy's backoff has passed, and posted again only when it is not there; the last failure is
        raised (the weekly job's own retry comes back later, and looks first too)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return self.post(channel, thread, payload, metadata=_metadata(key))
            except SlackError as exc:
                wait = retries.wait_s(attempt, None) if maybe_posted(exc.code) else None
                if wait is None:
                    raise
                log.warning("Slack: a post of %s failed (%s); looking for it in %.1f s", key, exc.code, wait)
                retries.sleep(wait)
                found = find()
                if found is not None:
                    return found

    def update_card(self, channel: str, ts: str, report: Report, report_url: str | None) -> None:
        """A forced re-run: the posted report, redrawn in place."""
        self.update(channel, ts, render_slack_message(report, report_url))

    def update(self, channel: str, ts: str, message: dict[str, Any]) -> None:
        """A posted message redrawn in place (its metadata stays)."""
        text, blocks = message["text"], message["blocks"]
        self.api("chat.update", self.client.chat_update, channel=channel, ts=ts, text=text, blocks=blocks)

    def thread_replies(
        self, channel: str, card_ts: str, key: str, *, limit: int = FIND_MESSAGES
    ) -> dict[str, str]:
        """The replies in the thread of ``card_ts`` tagged with a key of the delivery ``key``: their key
        -> ts (the thread's first ``limit`` messages)."""
        found: dict[str, str] = {}
        replies = self.client.conversations_replies
        pages = self._pages("conversations.replies", replies, channel, limit, ts=card_ts)
        for message in (m for page in pages for m in page):
            reply_key = _delivery_key(message)
            if (
                reply_key
                and message.get("ts") != card_ts
                and (reply_key == key or reply_key.startswith(f"{key}:"))
            ):
                found[reply_key] = str(message["ts"])
        return found

    def post_file(self, channel: str, thread: str, report: Report, markdown: str) -> None:
        """The full report as a Markdown file in the card's thread."""
        # The card is out already: a failed upload is logged, not raised, so it is not posted twice.
        try:
            self.api(
                "files.upload",
                self.client.files_upload_v2,
                channel=channel,
                thread_ts=thread,
                content=markdown,
                filename=report_file_name(report),
                title=title(report),
            )
        except SlackError as exc:
            log.error("Slack: the report for %s is posted but its file is not: %s", channel, exc)

    def find_delivery(
        self, channel: str, key: str, *, days: int = FIND_DAYS, limit: int = FIND_MESSAGES
    ) -> str | None:
        """The ts of the report posted with ``key`` among the channel's last ``limit`` messages
        of the last ``days`` days; None when there is none."""
        oldest = f"{machine_utc_now().timestamp() - days * 86400:.6f}"
        history = self.client.conversations_history
        for page in self._pages("conversations.history", history, channel, limit, oldest=oldest):
            found = next((str(m["ts"]) for m in page if _delivery_key(m) == key), None)
            if found is not None:
                return found
        return None

    def member_channels(self, user: str) -> set[str]:
        """The public and private channels ``user`` is in (users.conversations: channels:read and
        groups:read; private ones only where the bot is too), a page at a time."""
        found: set[str] = set()
        cursor = None
        for _ in range(MEMBER_PAGES):
            page = self.api(
                "users.conversations", self.client.users_conversations, user=user, cursor=cursor,
                types="public_channel,private_channel", exclude_archived=True, limit=MEMBER_PAGE,
            )  # fmt: skip
            found.update(str(c["id"]) for c in page.get("channels") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
        return found

    def user_by_email(self, email: str) -> str | None:
        """users.lookupByEmail (users:read.email): the id of the workspace's user with this email; None
        when Slack knows none (``users_not_found``) or the account is deactivated. A SlackError else
        (``missing_scope`` without the scope)."""
        try:
            answer = self.api("users.lookupByEmail", self.client.users_lookupByEmail, email=email)
        except SlackError as exc:
            if exc.code == "users_not_found":
                return None
            raise
        user = answer.get("user") or {}
        return None if user.get("deleted") or not user.get("id") else str(user["id"])

    def _pages(
        self, method: str, call: Callable[..., SlackResponse], channel: str, limit: int, **query: Any
    ) -> Iterator[list[dict[str, Any]]]:
        """The messages ``method`` lists in ``channel`` (with their metadata), a page at a time, up to
        ``limit`` in all."""
        cursor, seen = None, 0
        while seen < limit:
            page = self.api(
                method, call, channel=channel, include_all_metadata=True,
                limit=min(HISTORY_PAGE, limit - seen), cursor=cursor, **query,
            )  # fmt: skip
            messages = page.get("messages") or []
            yield messages
            seen += len(messages)
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor or not messages:
                return

    def respond_url(self, url: str, payload: dict[str, Any]) -> None:
        """A slash command's or a button's response_url: where the bot may answer without being a member."""
        webhook = WebhookClient(url, timeout=TIMEOUT_S, logger=sdk_logger("prdigest.slack.sdk"))
        try:
            response = webhook.send(
                text=payload["text"], blocks=payload.get("blocks"), response_type="in_channel"
            )
        except (SlackClientError, OSError) as exc:
            raise SlackError("response_url", code(exc)) from None
        if response.status_code != 200:
            raise SlackError("response_url", f"http_{response.status_code}")

    @staticmethod
    def api(method: str, call: Callable[..., SlackResponse], **kwargs: Any) -> SlackResponse:
        try:
            return call(**kwargs)
        except (SlackClientError, OSError) as exc:
            raise SlackError(method, code(exc)) from None


class _RateLimited(RateLimitErrorRetryHandler):
    """429: waits Retry-After when it is within the cap (retries.MAX_WAIT_S), else fails at once."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        return retries.wait_s(state.current_attempt + 1, _retry_after(response)) is not None

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        attempt = state.current_attempt + 1
        retries.sleep(retries.wait_s(attempt, _retry_after(response) if response else None) or 0)
        state.next_attempt_requested = True
        state.increment_current_attempt()


class _ServerError(ServerErrorRetryHandler):
    """500/503 on reads and updates, with the shared backoff; never on a call that posts."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if request.url.rstrip("/").rsplit("/", 1)[-1] in POSTING:
            return False
        return super()._can_retry(state=state, request=request, response=response, error=error)


def _retry_after(response: HttpResponse) -> float | None:
    return retries.retry_after_s(response.headers)


class _Backoff(RetryIntervalCalculator):
    """slack_sdk's interval calculator, as the shared policy's backoff."""

    def calculate_sleep_duration(self, current_attempt: int) -> float:
        return retries.backoff_s(current_attempt + 1)


def retry_handlers() -> list[Any]:
    """Connection failures before the request went out (URLError), 429 within the cap, 5xx on calls
    that do not post; each at most ``retries.ATTEMPTS - 1`` times."""
    count = retries.ATTEMPTS - 1
    backoff = _Backoff()
    return [
        ConnectionErrorRetryHandler(count, backoff, error_types=[URLError]),
        _RateLimited(count, backoff),
        _ServerError(count, backoff),
    ]


def _metadata(key: str) -> dict[str, Any]:
    return {"event_type": REPORT_EVENT, "event_payload": {"key": key}}


def _delivery_key(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != REPORT_EVENT:
        return None
    key = (metadata.get("event_payload") or {}).get("key")
    return key if isinstance(key, str) else None


# What a failed post answers when it may have gone out all the same: a server error, a lost answer.
_MAYBE_POSTED = (
    "internal_error", "fatal_error", "service_unavailable", "request_timeout",
    "TimeoutError", "URLError", "RemoteDisconnected", "IncompleteRead", "ConnectionResetError",
)  # fmt: skip


def maybe_posted(code: str) -> bool:
    """Whether a failed chat.postMessage may have posted (so look before posting again), rather than
    been refused (a missing channel, a bad token: posting again cannot help)."""
    return code.startswith("http_5") or code in _MAYBE_POSTED


def code(exc: BaseException) -> str:
    """Slack's error code, else the kind of failure: never the exception's text, which may quote a request."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or f"http_{exc.response.status_code}")
    return type(exc).__name__
