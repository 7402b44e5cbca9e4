"""The Lark/Feishu adapter: events in (long connection or HTTP), messages and cards out.

The only module that imports lark-oapi (about 2.5 s and 176 MB), so nothing imports it
unless a Lark app is configured. Events become an `Inbound` for `BotCore`, which
acknowledges at once and works after; answers go back as replies in the message's thread.
Every message carries a `uuid`, Lark's idempotency key: a retried send within Lark's
window (an hour) returns the first message instead of posting a second one.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from http import HTTPStatus
from typing import Any, Protocol, TypeVar

import lark_oapi as lark
import lark_oapi.ws.client as lark_ws
from lark_oapi.api.im.v1 import (
    CreateFileRequest,
    CreateFileRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    P2ImMessageReceiveV1,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)

from prdigest.bot.app import WORKING, BotCore, Inbound
from prdigest.bot.lark_messages import (
    idempotency_key,
    lark_headers,
    message_text,
    open_id,
    resolve_mentions,
)
from prdigest.bot.payloads import lark_payload, report_file_name
from prdigest.bot.web import WSGIApp, read_body, respond
from prdigest.config import Settings
from prdigest.errors import ConfigError, PrdigestError
from prdigest.handlers import Reply
from prdigest.models import Report
from prdigest.render.lark import render_lark_card
from prdigest.render.markdown import render_markdown
from prdigest.storage.cards import remember_card

log = logging.getLogger("prdigest.lark")

EVENTS_PATH = "/lark/events"  # where `prdigest serve` mounts wsgi_app() in mode "http"
HTTP_TIMEOUT_S = 15  # per API call (the SDK's default is 30 s)
THREAD_TIMEOUT_S = 5.0  # how long start() and stop() wait for the long connection's thread
# A button's answer must be acknowledged within 3 s: the toast says the work has started.
TOAST = {
    "type": "info",
    "content": WORKING["en"],
    "i18n": {"zh_cn": WORKING["zh"], "en_us": WORKING["en"]},
}

ReportUrl = Callable[[Report], str | None]
Post = Callable[[dict[str, Any], str], str]  # (payload, uuid) -> message id


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


class LarkBot:
    def __init__(self, settings: Settings, core: BotCore, *, report_url_for: ReportUrl | None = None):
        cfg = settings.lark
        if not (cfg.app_id and cfg.app_secret):
            raise ConfigError("Lark needs PRDIGEST_LARK_APP_ID and PRDIGEST_LARK_APP_SECRET")
        if cfg.mode == "http" and cfg.verification_token is None:
            raise ConfigError("Lark HTTP events need PRDIGEST_LARK_VERIFICATION_TOKEN")
        self.core = core
        self.mode = cfg.mode
        self._report_url_for = report_url_for or (lambda report: None)
        secret, domain = cfg.app_secret.get_secret_value(), cfg.domain.rstrip("/")
        try:
            self.client = (
                lark.Client.builder()
                .app_id(cfg.app_id)
                .app_secret(secret)
                .domain(domain)
                .timeout(HTTP_TIMEOUT_S)
                .log_level(lark.LogLevel.WARNING)
                .build()
            )
        except ValueError as exc:  # the SDK's check of the domain
            raise ConfigError(f"PRDIGEST_LARK_DOMAIN: {exc}") from None
        self.events = (
            lark.EventDispatcherHandler.builder(_secret(cfg.encrypt_key), _secret(cfg.verification_token))
            .register_p2_im_message_receive_v1(self._on_message)
            .register_p2_card_action_trigger(self._on_card_action)
            .build()
        )
        self._long = _LongConnection(
            lambda: lark.ws.Client(
                cfg.app_id,
                secret,
                event_handler=self.events,
                domain=domain,
                log_level=lark.LogLevel.WARNING,  # at INFO the SDK logs the connection URL and its ticket
            )
        )
        self._bot_id: str | None = None
        self._bot_id_lock = threading.Lock()

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
        """Events and card callbacks posted by Lark (mode "http"); mount it at EVENTS_PATH."""

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if environ.get("REQUEST_METHOD") != "POST":
                return respond(start_response, "405 Method Not Allowed", b"", "text/plain")
            request = lark.RawRequest()
            request.uri = environ.get("PATH_INFO", "")
            request.headers = lark_headers(environ)
            request.body = read_body(environ)
            # Checks the token, the signature and decrypts; the answer to url_verification too.
            answer = self.events.do(request)
            status = f"{answer.status_code} {HTTPStatus(answer.status_code).phrase}"
            content_type = answer.headers.get("Content-Type", "application/json; charset=utf-8")
            return respond(start_response, status, answer.content or b"", content_type)

        return app

    def bot_open_id(self) -> str:
        """The bot's own open_id, to tell a mention of the bot from one of a colleague; asked once."""
        with self._bot_id_lock:
            if self._bot_id is None:
                request = (
                    lark.BaseRequest.builder()
                    .http_method(lark.HttpMethod.GET)
                    .uri("/open-apis/bot/v3/info")
                    .token_types({lark.AccessTokenType.TENANT})
                    .build()
                )
                answer = self._call("read the bot's identity", lambda: self.client.request(request))
                self._bot_id = json.loads(answer.raw.content)["bot"]["open_id"]
            return self._bot_id

    # --- the weekly delivery --------------------------------------------------------

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        """Post the report card (and the report as a file when it has no page); the card's message id.

        `key` is the message's uuid, so a repeat within Lark's window posts nothing new."""
        card = {"msg_type": "interactive", "content": render_lark_card(report, report_url)}
        message_id = self._create(chat_id, card, idempotency_key(key))
        if report_url is None:
            file_key = self._upload(report_file_name(report), markdown)
            file = {"msg_type": "file", "content": {"file_key": file_key}}
            self._create(chat_id, file, idempotency_key(f"{key}:file"))
        return message_id

    def update_report(self, message_id: str, report: Report, report_url: str | None) -> None:
        """Replace a posted report card (a forced re-run); Lark allows it for 14 days."""
        content = json.dumps(render_lark_card(report, report_url))
        body = PatchMessageRequestBody.builder().content(content).build()
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        self._call("update the report card", lambda: self.client.im.v1.message.patch(request))

    # --- events ---------------------------------------------------------------------

    def _on_message(self, data: P2ImMessageReceiveV1) -> None:
        inbound = self._inbound(data)
        if inbound is None:
            return
        message_id, key = inbound.thread_id or "", inbound.event_id
        self.core.submit(
            inbound,
            lambda reply: self._answer(
                reply, partial(self._reply, message_id), key, inbound.chat_id, inbound.card_id or message_id
            ),
            lambda text: self._reply(message_id, _text(text), idempotency_key(f"{key}:notice")),
        )

    def _inbound(self, data: P2ImMessageReceiveV1) -> Inbound | None:
        """A direct message, or a group message that mentions the bot; None for anything else."""
        event = data.event
        message, sender = event.message, event.sender
        if sender is None or sender.sender_type != "user" or sender.sender_id is None:
            return None  # never answer a bot, this one included
        text = message_text(message.message_type or "", message.content or "")
        if text is None:
            return None
        mentions = message.mentions or []
        if message.chat_type != "p2p" and not any(open_id(m) == self.bot_open_id() for m in mentions):
            return None
        return Inbound(
            platform="lark",
            event_id=data.header.event_id,
            chat_id=message.chat_id,
            user_id=sender.sender_id.open_id or "",
            text=resolve_mentions(text, mentions, self.bot_open_id()),
            thread_id=message.message_id,
            card_id=message.root_id or None,  # a message in a thread: the thread's first message
        )

    def _on_card_action(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        """A button: acknowledged with a toast at once; the answer follows in the card's thread."""
        event = data.event
        value = event.action.value if event.action else None
        context = event.context
        if not isinstance(value, dict) or context is None or not context.open_message_id:
            return P2CardActionTriggerResponse()
        event_id = data.header.event_id if data.header and data.header.event_id else event.token
        card_id, chat_id = context.open_message_id, context.open_chat_id or ""
        inbound = Inbound(
            platform="lark",
            event_id=event_id,
            chat_id=chat_id,
            user_id=event.operator.open_id if event.operator else "",
            action=value,
            thread_id=card_id,
            message_id=card_id,
        )
        # Another week is a new report: a new card in the chat; the other answers go in the card's thread.
        another_week = value.get("action") == "another_week"
        post: Post = partial(self._create, chat_id) if another_week else partial(self._reply, card_id)
        root = None if another_week else card_id
        self.core.submit(inbound, lambda reply: self._answer(reply, post, event_id, chat_id, root))
        return P2CardActionTriggerResponse({"toast": TOAST})

    def _answer(self, reply: Reply, post: Post, key: str, chat_id: str, root: str | None) -> None:
        """Post a Reply; a report without a page also goes as a Markdown file. A card about a report is
        remembered, itself and as the latest of its thread (``root``), for the follow-ups there."""
        report_url = self._report_url_for(reply.report) if reply.report is not None else None
        message_id = post(lark_payload(reply, report_url), idempotency_key(f"{key}:answer"))
        if reply.report is not None and self.core is not None:
            for card in {message_id, root or message_id}:
                remember_card(self.core.services.store, "lark", chat_id, card, reply.report)
        if reply.kind == "report" and reply.report is not None and report_url is None:
            file_key = self._upload(report_file_name(reply.report), render_markdown(reply.report))
            post({"msg_type": "file", "content": {"file_key": file_key}}, idempotency_key(f"{key}:file"))

    # --- sending --------------------------------------------------------------------

    def _create(self, chat_id: str, payload: dict[str, Any], uuid: str) -> str:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(chat_id)
            .msg_type(payload["msg_type"])
            .content(json.dumps(payload["content"]))
            .uuid(uuid)
            .build()
        )
        request = CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body).build()
        return self._call("send a message", lambda: self.client.im.v1.message.create(request)).data.message_id

    def _reply(self, message_id: str, payload: dict[str, Any], uuid: str) -> str:
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type(payload["msg_type"])
            .content(json.dumps(payload["content"]))
            .reply_in_thread(True)
            .uuid(uuid)
            .build()
        )
        request = ReplyMessageRequest.builder().message_id(message_id).request_body(body).build()
        return self._call("reply", lambda: self.client.im.v1.message.reply(request)).data.message_id

    def _upload(self, file_name: str, markdown: str) -> str:
        body = (
            CreateFileRequestBody.builder()
            .file_type("stream")
            .file_name(file_name)
            .file(io.BytesIO(markdown.encode("utf-8")))
            .build()
        )
        request = CreateFileRequest.builder().request_body(body).build()
        return self._call(
            "upload the report file", lambda: self.client.im.v1.file.create(request)
        ).data.file_key

    def _call(self, operation: str, call: Callable[[], A]) -> A:
        """One SDK call; a refusal or a failure to connect becomes a LarkError (Lark's code and message)."""
        try:
            answer = call()
        except Exception as exc:  # requests' errors, and the SDK's when the token cannot be had
            raise LarkError(operation, getattr(exc, "code", None), str(exc)) from None
        if not answer.success():
            log.warning(
                "Lark refused to %s: %s %s (log id %s)",
                operation,
                answer.code,
                answer.msg,
                answer.get_log_id(),
            )
            raise LarkError(operation, answer.code, answer.msg or "")
        return answer


# --- the long connection ----------------------------------------------------------


class _LongConnection:
    """`lark.ws.Client` in a daemon thread on its own event loop.

    lark-oapi 1.7.5 runs the client on a module-level loop (`lark_oapi.ws.client.loop`)
    and has no stop: the thread points that global at its own loop (so one long
    connection runs per process), and stop() cancels the loop's tasks from outside,
    then closes the websocket and the loop.
    """

    def __init__(self, make_client: Callable[[], Any]):
        self._make_client = make_client
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping = threading.Event()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="prdigest-lark-ws", daemon=True)
        self._thread.start()
        self._ready.wait(THREAD_TIMEOUT_S)

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._stopping.set()
        deadline = time.monotonic() + THREAD_TIMEOUT_S
        # Again until the thread ends: a cancel can land between two of the SDK's run_until_complete calls.
        while self._thread.is_alive() and time.monotonic() < deadline:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._cancel_all)
            self._thread.join(0.1)
        if self._thread.is_alive():
            log.warning("Lark: the long connection did not stop within %s s", THREAD_TIMEOUT_S)
        self._thread = None

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        lark_ws.loop = loop
        self._loop = loop
        self._client = self._make_client()  # after set_event_loop: its cache schedules a task on the loop
        self._ready.set()
        try:
            self._client.start()
        except asyncio.CancelledError:
            pass  # stop()
        except Exception as exc:  # e.g. refused credentials: the SDK gives up without retrying
            if not self._stopping.is_set():
                log.error("Lark: the long connection ended: %s", exc)
        finally:
            self._close(loop)

    def _cancel_all(self) -> None:
        self._client._auto_reconnect = False  # a closed socket must not start a reconnect
        for task in asyncio.all_tasks():
            task.cancel()

    def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            conn = getattr(self._client, "_conn", None)
            if conn is not None:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(asyncio.wait_for(conn.close(), THREAD_TIMEOUT_S))
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=1))
        finally:
            loop.close()


def _text(text: str) -> dict[str, Any]:
    return {"msg_type": "text", "content": {"text": text}}


def _secret(value: Any) -> str:
    return value.get_secret_value() if value is not None else ""
