"""The Lark adapter's outbound client: messages, replies, card updates and files over im.v1.

Every message carries a `uuid`, Lark's idempotency key: a retried send within Lark's
window (an hour) returns the first message instead of posting a second one. Past that hour
(a takeover of a crashed delivery comes up to the grace period later), ``find_delivery``
looks for the report card in the chat's history by its delivery key, which the card shows
in its last line, and ``thread_replies`` its thread replies in the card's thread, each by
its own key in its last line. Calls are retried on connection failures, 429 and 5xx with
the shared policy (retries.py): Lark dedupes a repeated send by its uuid.
"""

from __future__ import annotations

import copy
import io
import json
import logging
import re
import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterator
from typing import Any, Protocol, TypeVar

from prdigest.bot import retries
from prdigest.bot.lark.messages import idempotency_key
from prdigest.bot.lark.sdk import (
    APPLICATION_JSON,
    CONTENT_TYPE,
    JSON,
    UTF_8,
    AccessTokenType,
    BaseRequest,
    BaseResponse,
    ChatMembers,
    Config,
    CreateFileRequest,
    CreateFileRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    File,
    HttpMethod,
    LogLevel,
    Message,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
    RequestOption,
    Transport,
    logger,
    verify,
)
from prdigest.bot.payloads import report_file_name
from prdigest.clock import machine_utc_now
from prdigest.errors import ConfigError, PrdigestError
from prdigest.models import Report
from prdigest.render.lark import render_lark_card

log = logging.getLogger("prdigest.lark")

HTTP_TIMEOUT_S = 15  # per API call (the SDK's default is 30 s)
PROBE_TIMEOUT_S = 3  # a readiness probe's call
# find_delivery reads back this far (the grace period of a weekly run is hours, not weeks).
FIND_DAYS = 14
FIND_MESSAGES = 1000
HISTORY_PAGE = 50  # Lark's maximum page size of im.v1 message list
MEMBER_PAGE = 100  # Lark's maximum page size of a chat's member list
MEMBER_PAGES = 50  # a chat of more than 5,000 members: the rest are not looked at
# Lark's codes for "too many requests" (the app's and the chat's rate limits).
RATE_LIMITED = (99991400, 230020)


class _Answer(Protocol):
    """What every lark-oapi response offers."""

    code: int | None
    msg: str | None

    def success(self) -> bool: ...

    def get_log_id(self) -> str | None: ...


A = TypeVar("A", bound=_Answer)


class LarkError(PrdigestError):
    """Lark refused a call (or could not be reached); `code` is Lark's error code when it answered."""

    def __init__(self, operation: str, code: int | None, msg: str):
        super().__init__(
            f"Lark could not {operation}: {msg}" + (f" (code {code})" if code is not None else "")
        )
        self.code = code
        self.msg = msg


def card_message(report: Report, report_url: str | None, key: str) -> dict[str, Any]:
    """The report card, with its delivery key in a grey last line, findable in the history."""
    return keyed(render_lark_card(report, report_url), key)


def keyed(card: dict[str, Any], key: str) -> dict[str, Any]:
    """A card as a message, ``key`` in a grey last line (the card itself is left as it is)."""
    note = {"tag": "markdown", "content": f"<font color='grey'>{key}</font>", "text_size": "notation"}
    body = card.get("body", {})
    return {
        "msg_type": "interactive",
        "content": {**card, "body": {**body, "elements": [*body.get("elements", []), note]}},
    }


def key_in(content: str | None, key: str) -> bool:
    """Whether a listed message's content carries the delivery ``key`` (as a whole, not a prefix)."""
    pattern = r"(?<![\w:-])" + re.escape(key) + r"(?![\w:-])"
    return bool(content) and re.search(pattern, str(content)) is not None


class ImV1:
    """The resources of the SDK's ``im.v1`` service that prdigest uses: messages, files, chat members."""

    def __init__(self, config: Any):
        self.message = Message(config)
        self.file = File(config)
        self.chat_members = ChatMembers(config)


class Im:
    def __init__(self, config: Any):
        self.v1 = ImV1(config)


class LarkApi:
    """What prdigest uses of the SDK's `lark_oapi.Client`: ``im.v1``'s messages and files, and the
    generic ``request``. The SDK's Client lives in the module that imports every service, so this
    builds the same Config and resources, and ``request`` is `Client.request` (token, transport,
    parse)."""

    def __init__(self, app_id: str, secret: str, domain: str):
        check_domain(domain)
        self.config = Config()
        self.config.app_id = app_id
        self.config.app_secret = secret
        self.config.domain = domain
        self.config.timeout = HTTP_TIMEOUT_S
        self.config.log_level = LogLevel.WARNING
        logger.setLevel(int(LogLevel.WARNING.value))  # what ClientBuilder.build() does with log_level
        self.im = Im(self.config)

    def request(self, request: Any) -> Any:
        option = RequestOption()
        verify(self.config, request, option)  # the tenant token, cached by the SDK's TokenManager
        raw = Transport.execute(self.config, request, option)
        content_type = raw.headers.get(CONTENT_TYPE)
        if content_type is not None and content_type.startswith(APPLICATION_JSON):
            answer = JSON.unmarshal(str(raw.content, UTF_8), BaseResponse)
        else:
            answer = BaseResponse()
            answer.code = 0 if 200 <= raw.status_code < 300 else None
        answer.raw = raw
        return answer


def check_domain(domain: str) -> None:
    """The SDK's check of a domain (`lark_oapi.client._validate_domain`): an https origin, with plain
    http allowed on the loopback only, so that the app secret and tokens go nowhere else."""
    parts = urllib.parse.urlsplit(domain)
    if parts.scheme == "http" and (parts.hostname or "").lower() not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"domain must use https scheme (got {domain!r})")
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"domain must use https scheme (got {domain!r})")
    if not parts.netloc or "@" in parts.netloc:
        raise ValueError(f"domain must be a host without credentials (got {domain!r})")
    if parts.path or parts.query or parts.fragment:
        raise ValueError(f"domain must be an origin (scheme + host[:port]) without path (got {domain!r})")


class LarkOutbound:
    """Send, reply, update and upload, each one SDK call; refusals become a LarkError."""

    def __init__(self, app_id: str, secret: str, domain: str):
        try:
            self.client = LarkApi(app_id, secret, domain)
        except ValueError as exc:
            raise ConfigError(f"PRDIGEST_LARK_DOMAIN: {exc}") from None
        self._bot_id: str | None = None
        self._bot_id_lock = threading.Lock()

    def bot_open_id(self) -> str:
        """The bot's own open_id, to tell a mention of the bot from one of a colleague; asked once."""
        with self._bot_id_lock:
            if self._bot_id is None:
                request = _bot_info()
                answer = self.call("read the bot's identity", lambda: self.client.request(request))
                self._bot_id = str(json.loads(answer.raw.content)["bot"]["open_id"])
            return self._bot_id

    def probe(self) -> None:
        """Whether Lark answers and accepts the app now: the bot's identity (and the tenant token, when
        the SDK's cache has none) asked once, without retries and with a short timeout; a LarkError
        when not."""
        quick = copy.copy(self.client)
        quick.config = copy.copy(self.client.config)
        quick.config.timeout = PROBE_TIMEOUT_S
        try:
            answer = quick.request(_bot_info())
        except Exception as exc:  # requests' errors, and the SDK's when the token cannot be had
            raise LarkError("reach Lark", getattr(exc, "code", None), type(exc).__name__) from None
        if not answer.success():
            raise LarkError("read the bot's identity", answer.code, answer.msg or "")

    def post(self, chat_id: str, thread: str | None, payload: dict[str, Any], uuid: str) -> str:
        """A reply in the thread of message ``thread``, else a new message in the chat."""
        return self.reply(thread, payload, uuid) if thread else self.create(chat_id, payload, uuid)

    def post_card(
        self, chat_id: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        return self.post(chat_id, thread, card_message(report, report_url, key), idempotency_key(key))

    def find_delivery(
        self, chat_id: str, key: str, *, days: int = FIND_DAYS, limit: int = FIND_MESSAGES
    ) -> str | None:
        """The id of the report card posted with ``key`` among the chat's last ``limit`` messages of
        the last ``days`` days (im.v1 message list, newest first); None when there is none."""
        start = str(int(machine_utc_now().timestamp() - days * 86400))
        for item in self._listed("chat", chat_id, limit, start=start):
            content = item.body.content if item.body else None
            if item.msg_type == "interactive" and not item.deleted and key_in(content, key):
                return str(item.message_id)
        return None

    def thread_replies(self, card_id: str, key: str, *, limit: int = FIND_MESSAGES) -> dict[str, str]:
        """The replies in the thread of card ``card_id`` that show a key of the delivery ``key`` in their
        last line: their key -> message id (the thread's first ``limit`` messages; none before the
        thread exists)."""
        from lark_oapi.api.im.v1.model.get_message_request import GetMessageRequest  # after lark_sdk

        request = GetMessageRequest.builder().message_id(card_id).build()
        data = self.call("read the report card", lambda: self.client.im.v1.message.get(request)).data
        thread = next((m.thread_id for m in (data.items if data else None) or [] if m.thread_id), None)
        if thread is None:
            return {}
        reply = re.compile(r"(?<![\w:-])(" + re.escape(key) + r":thread:\d+)(?![\w:-])")
        found: dict[str, str] = {}
        for item in self._listed("thread", thread, limit):
            match = reply.search(str(item.body.content if item.body else ""))
            if match and not item.deleted and item.message_id != card_id:
                found.setdefault(match.group(1), str(item.message_id))
        return found

    def _listed(
        self, container: str, container_id: str, limit: int, *, start: str | None = None
    ) -> Iterator[Any]:
        """im.v1 message list of a chat (from ``start``, newest first) or of a thread (oldest first: Lark
        takes no time range there), up to ``limit`` messages, a page at a time."""
        from lark_oapi.api.im.v1.model.list_message_request import ListMessageRequest  # after lark_sdk

        token, seen = "", 0
        while seen < limit:
            builder = (
                ListMessageRequest.builder()
                .container_id_type(container)
                .container_id(container_id)
                .page_size(min(HISTORY_PAGE, limit - seen))
            )
            if start is not None:
                builder = builder.start_time(start).sort_type("ByCreateTimeDesc")
            if token:
                builder = builder.page_token(token)
            data = self._list(builder.build()).data
            items = (data.items if data else None) or []
            yield from items
            seen += len(items)
            token = (data.page_token if data and data.has_more else None) or ""
            if not token or not items:
                return

    def post_file(self, chat_id: str, thread: str | None, report: Report, markdown: str, key: str) -> None:
        file_key = self.upload(report_file_name(report), markdown)
        file = {"msg_type": "file", "content": {"file_key": file_key}}
        self.post(chat_id, thread, file, idempotency_key(f"{key}:file"))

    def update_card(self, message_id: str, report: Report, report_url: str | None, key: str) -> None:
        """Replace a posted report card (a forced re-run), its key line kept; Lark allows it for 14 days."""
        self.patch(message_id, card_message(report, report_url, key)["content"], "update the report card")

    def patch(self, message_id: str, card: dict[str, Any], operation: str) -> None:
        """Replace the card of a posted message in place."""
        body = PatchMessageRequestBody.builder().content(json.dumps(card)).build()
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        self.call(operation, lambda: self.client.im.v1.message.patch(request))

    def create(self, chat_id: str, payload: dict[str, Any], uuid: str) -> str:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat_id)
            .msg_type(payload["msg_type"])
            .content(json.dumps(payload["content"]))
            .uuid(uuid)
            .build()
        )
        request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
        answer = self.call("send a message", lambda: self.client.im.v1.message.create(request))
        return str(answer.data.message_id)

    def reply(self, message_id: str, payload: dict[str, Any], uuid: str) -> str:
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type(payload["msg_type"])
            .content(json.dumps(payload["content"]))
            .reply_in_thread(True)
            .uuid(uuid)
            .build()
        )
        request = ReplyMessageRequest.builder().message_id(message_id).request_body(body).build()
        return str(self.call("reply", lambda: self.client.im.v1.message.reply(request)).data.message_id)

    def upload(self, file_name: str, markdown: str) -> str:
        body = (
            CreateFileRequestBody.builder()
            .file_type("stream")
            .file_name(file_name)
            .file(io.BytesIO(markdown.encode("utf-8")))
            .build()
        )
        request = CreateFileRequest.builder().request_body(body).build()
        answer = self.call("upload the report file", lambda: self.client.im.v1.file.create(request))
        return str(answer.data.file_key)

    def chat_member_ids(self, chat_id: str) -> set[str]:
        """The open ids of a chat's members (im.v1 chat members: im:chat:readonly or
        im:chat.members:read), a page at a time."""
        from lark_oapi.api.im.v1.model.get_chat_members_request import GetChatMembersRequest  # after lark_sdk

        found: set[str] = set()
        token = ""
        for _ in range(MEMBER_PAGES):
            builder = GetChatMembersRequest.builder().chat_id(chat_id).member_id_type("open_id")
            builder = builder.page_size(MEMBER_PAGE)
            if token:
                builder = builder.page_token(token)
            data = self._members(builder.build()).data
            found.update(str(m.member_id) for m in (data.items if data else None) or [] if m.member_id)
            token = (data.page_token if data and data.has_more else None) or ""
            if not token:
                break
        return found

    def _members(self, request: Any) -> Any:
        return self.call("read the chat's members", lambda: self.client.im.v1.chat_members.get(request))

    def _list(self, request: Any) -> Any:
        return self.call("read the chat's history", lambda: self.client.im.v1.message.list(request))

    @staticmethod
    def call(operation: str, call: Callable[[], A], *, expected: Collection[int] = ()) -> A:
        """One SDK call, retried on a failure to connect, a 429 or a 5xx (retries.py); a refusal or
        the last failure becomes a LarkError (Lark's code and message), logged unless its code is
        ``expected`` (the caller says it)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                answer = call()
            except Exception as exc:  # requests' errors, and the SDK's when the token cannot be had
                wait = retries.wait_s(attempt, None)
                if wait is None:
                    raise LarkError(operation, getattr(exc, "code", None), str(exc)) from None
                kind = type(exc).__name__
                log.warning("Lark: could not %s (%s); retrying in %.1f s", operation, kind, wait)
                retries.sleep(wait)
                continue
            if answer.success() or not _transient(answer):
                break
            wait = retries.wait_s(attempt, _retry_after(answer))
            if wait is None:
                break
            log.warning("Lark: could not %s (code %s); retrying in %.1f s", operation, answer.code, wait)
            retries.sleep(wait)
        if not answer.success() and answer.code not in expected:
            log.warning(
                "Lark refused to %s: %s %s (log id %s)",
                operation,
                answer.code,
                answer.msg,
                answer.get_log_id(),
            )
        if not answer.success():
            raise LarkError(operation, answer.code, answer.msg or "")
        return answer


def _bot_info() -> Any:
    return (
        BaseRequest.builder()
        .http_method(HttpMethod.GET)
        .uri("/open-apis/bot/v3/info")
        .token_types({AccessTokenType.TENANT})
        .build()
    )


def _status(answer: Any) -> int:
    raw = getattr(answer, "raw", None)
    return int(getattr(raw, "status_code", None) or 0)


def _transient(answer: Any) -> bool:
    """A refusal worth retrying: too many requests, or the server's own failure."""
    status = _status(answer)
    return status == 429 or status >= 500 or answer.code in RATE_LIMITED


def _retry_after(answer: Any) -> float | None:
    raw = getattr(answer, "raw", None)
    headers = getattr(raw, "headers", None)
    return retries.retry_after_s(headers) if isinstance(headers, dict) else None
