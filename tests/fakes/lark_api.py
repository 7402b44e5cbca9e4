"""A local Lark/Feishu open platform for the real lark-oapi SDK: REST, HTTP events and the long connection.

REST (``domain=fake.url``): the tenant token, the bot's identity, a user's open_id by email
(contact batch_get_id, from ``users``), sending, replying to and patching messages, uploading files,
reading a message (its ``thread_id`` once replies opened a thread on it), listing a chat's messages
or a thread's replies (``GET /open-apis/im/v1/messages``,
newest or oldest first, 50 a page at most, from ``start_time``). It checks what Lark checks: the
app's credentials, the Bearer token, ``content`` as a JSON string, card JSON 2.0's top-level
keys, the 30 KB limit on card and post bodies (code 230025), and ``uuid`` de-duplication (one
message per uuid within an hour of the fake's clock; ``advance`` moves the clock on). Faults:
``fail_next`` (a Lark error code), ``http_error`` (an HTTP status, e.g. 500, or 429 with
``Retry-After``, nothing done; after ``after`` calls that go through) and ``slow`` (the call
carried out, answered late).
Every message that goes out is kept in ``messages`` (chat, msg_type, parsed content, uuid,
the message it replies to), every upload in ``files``.

Events, as Lark sends them:

- HTTP: ``post_event(url, payload)`` signs (X-Lark-Signature = sha256(timestamp + nonce +
  encrypt_key + body)) and encrypts (AES-256-CBC, key sha256(encrypt_key), a random IV in
  front, base64) the v2 envelope, whose ``header.token`` is the verification token; each of
  these can be spoilt to test the checks.
- Long connection: ``POST /callback/ws/endpoint`` answers the URL of a local websocket
  server; ``push(payload)`` sends the envelope as a protobuf ``Frame`` of type "event" (card
  callbacks come the same way, as ``card.action.trigger`` events) and returns the client's
  reply frame (a card callback's toast is in its data). Pings get pongs; ``drop()`` closes
  the connections so the client reconnects.

    with FakeLark() as fake:
        settings = load_settings(env={"PRDIGEST_LARK_DOMAIN": fake.url, **fake.env()})

Each fake has its own app id: lark-oapi caches tenant tokens process-wide by app id.
"""

from __future__ import annotations

import asyncio
import base64
import email.parser
import hashlib
import json
import os
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from Crypto.Cipher import AES
from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

CARD_LIMIT = 30 * 1024  # bytes of a card or post request body
UUID_WINDOW_S = 3600  # Lark honours a message uuid for an hour
CARD_KEYS = {"schema", "config", "card_link", "header", "body"}  # what a 2.0 card may hold at its top
MSG_TYPES = {
    "text",
    "post",
    "image",
    "file",
    "audio",
    "media",
    "sticker",
    "interactive",
    "share_chat",
    "share_user",
}
FILE_TYPES = {"opus", "mp4", "pdf", "doc", "xls", "ppt", "stream"}
SERVICE_ID = 7
CONTROL, DATA = 0, 1  # Frame.method


@dataclass
class Sent:
    """A message the app sent: a new one in a chat or a reply."""

    message_id: str
    chat_id: str
    msg_type: str
    content: dict[str, Any]
    uuid: str | None
    reply_to: str | None = None
    reply_in_thread: bool = False
    thread_id: str | None = None  # the thread it opened (a message replied to in thread) or is in
    updates: list[dict[str, Any]] = field(default_factory=list)  # patched contents, in order
    created_at: float = 0.0  # on the fake's clock

    @property
    def text(self) -> str:
        """The content as one string, to look for PR numbers and words in a card or text."""
        return json.dumps(self.content, ensure_ascii=False)


@dataclass(frozen=True)
class Upload:
    file_key: str
    file_type: str
    file_name: str
    data: bytes


@dataclass(frozen=True)
class FrameReply:
    """The client's answer to a pushed frame: its HTTP-like code and the decoded data, if any."""

    code: int
    data: dict[str, Any] | None


class FakeLark:
    def __init__(
        self,
        *,
        app_secret: str = "fake-app-secret-1234",
        verification_token: str = "fake-verification-token",
        encrypt_key: str = "fake-encrypt-key",
        bot_open_id: str = "ou_fakebot000001",
        bot_name: str = "prdigest",
    ):
        self.app_id = f"cli_{secrets.token_hex(8)}"
        self.app_secret = app_secret
        self.verification_token = verification_token
        self.encrypt_key = encrypt_key
        self.bot_open_id = bot_open_id
        self.bot_name = bot_name
        self.messages: list[Sent] = []
        self.files: list[Upload] = []
        self._token = f"t-{secrets.token_hex(12)}"
        self._by_uuid: dict[str, Sent] = {}
        self._chat_of: dict[str, str] = {}  # message id -> chat, for messages users sent in events
        self._faults: list[tuple[str, int, str]] = []
        self._http_errors: list[tuple[str, int, dict[str, str]]] = []
        self._delays: list[tuple[str, float]] = []
        self._offset = 0.0  # the fake's clock: time.time() + offset
        self._ids = 0
        self._cond = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self.ws = _LongConnectionServer()
        # chat id -> its members' open ids (the chats the bot is in); member_scope: whether the app
        # was granted im:chat.members:read.
        self.members: dict[str, list[str]] = {}
        self.member_scope = True
        # The tenant's users by email (contact batch_get_id; any id the test likes, however malformed),
        # whether the app was granted contact:user.id:readonly, and the emails of each request (refused too).
        self.users: dict[str, str] = {}
        self.contact_scope = True
        self.lookups: list[list[str]] = []

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """The app's settings as prdigest's environment variables."""
        return {
            "PRDIGEST_LARK_APP_ID": self.app_id,
            "PRDIGEST_LARK_APP_SECRET": self.app_secret,
            "PRDIGEST_LARK_VERIFICATION_TOKEN": self.verification_token,
            "PRDIGEST_LARK_ENCRYPT_KEY": self.encrypt_key,
            "PRDIGEST_LARK_DOMAIN": self.url,
        }

    def start(self) -> FakeLark:
        self.ws.start()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), name="fake-lark", daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self.ws.close()

    def __enter__(self) -> FakeLark:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- for tests ------------------------------------------------------------------

    def fail_next(self, path_part: str, code: int, msg: str) -> None:
        """The next im request whose path contains ``path_part`` is refused with Lark's ``code``."""
        with self._cond:
            self._faults.append((path_part, code, msg))

    def http_error(
        self, path_part: str, status: int, retry_after: int | None = None, times: int = 1, after: int = 0
    ) -> None:
        """``times`` calls whose path holds ``path_part``, once ``after`` more have gone through, answer
        HTTP ``status`` (429: Lark's rate-limit code 99991400, with ``Retry-After`` when given) and do
        nothing."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        with self._cond:
            self._http_errors.extend([(path_part, 0, {})] * after + [(path_part, status, headers)] * times)

    def slow(self, path_part: str, seconds: float) -> None:
        """The next call whose path holds ``path_part`` is carried out, then answered ``seconds`` late."""
        with self._cond:
            self._delays.append((path_part, seconds))

    def delay_of(self, path: str) -> float:
        with self._cond:
            for delay in self._delays:
                if delay[0] in path:
                    self._delays.remove(delay)
                    return delay[1]
        return 0.0

    def now(self) -> float:
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock on (the uuid window, the messages' create_time); the past stays put."""
        with self._cond:
            self._offset += seconds

    def wait_messages(self, count: int, timeout: float = 20) -> list[Sent]:
        """At least ``count`` messages sent, or AssertionError after ``timeout`` seconds."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.messages) >= count, timeout):
                raise AssertionError(f"{len(self.messages)} messages sent, expected {count}")
            return list(self.messages)

    def wait_for(self, match: Callable[[Sent], bool], timeout: float = 20) -> Sent:
        """The first message sent that ``match``es, waiting up to ``timeout`` seconds for it."""

        def first() -> Sent | None:
            return next((m for m in self.messages if match(m)), None)

        with self._cond:
            found = self._cond.wait_for(first, timeout)
            if found is None:
                raise AssertionError(f"no such message among {len(self.messages)}")
            return found

    def in_chat(self, chat_id: str) -> list[Sent]:
        with self._cond:
            return [m for m in self.messages if m.chat_id == chat_id]

    # --- events -----------------------------------------------------------------------

    def message_event(
        self,
        text: str = "",
        *,
        chat_id: str = "oc_group",
        chat_type: str = "group",
        user: str = "ou_user",
        mention: str | None = "bot",
        post: list[list[dict[str, Any]]] | None = None,
        sender_type: str = "user",
        event_id: str | None = None,
        root_id: str = "",
    ) -> dict[str, Any]:
        """An im.message.receive_v1 envelope: a text message, or a post when ``post`` (paragraphs) is given.

        ``mention``: "bot" mentions the bot first, an open_id mentions that user, None nobody.
        ``root_id``: the first message of the thread the message is sent in."""
        message_id = self._new_id("om")
        with self._cond:
            self._chat_of[message_id] = chat_id
        mentions = []
        if mention is not None:
            open_id, name = (self.bot_open_id, self.bot_name) if mention == "bot" else (mention, "Alice")
            user_id = "" if mention == "bot" else "u_alice"
            ids = {"open_id": open_id, "union_id": "on_1", "user_id": user_id}
            mentions = [{"key": "@_user_1", "id": ids, "name": name, "tenant_key": "tenant-1"}]
        if post is None:
            message_type = "text"
            content: dict[str, Any] = {"text": ("@_user_1 " if mentions else "") + text}
        else:
            message_type = "post"
            at = [{"tag": "at", "user_id": "@_user_1", "user_name": mentions[0]["name"]}] if mentions else []
            content = {"title": "", "content": [at + post[0], *post[1:]]}
        now = str(int(time.time() * 1000))
        message = {
            "message_id": message_id,
            "root_id": root_id,
            "parent_id": root_id,
            "create_time": now,
            "update_time": now,
            "chat_id": chat_id,
            "chat_type": chat_type,
            "message_type": message_type,
            "content": json.dumps(content, ensure_ascii=False),
            "mentions": mentions,
        }
        sender = {
            "sender_id": {"open_id": user, "union_id": "on_u", "user_id": "u_1"},
            "sender_type": sender_type,
            "tenant_key": "tenant-1",
        }
        return self._envelope("im.message.receive_v1", {"sender": sender, "message": message}, event_id)

    def card_action_event(
        self,
        value: dict[str, Any],
        *,
        message_id: str,
        chat_id: str = "oc_group",
        user: str = "ou_user",
        event_id: str | None = None,
    ) -> dict[str, Any]:
        """A card.action.trigger envelope: a click on a callback button of the card ``message_id``."""
        event = {
            "operator": {"tenant_key": "tenant-1", "user_id": "u_1", "open_id": user, "union_id": "on_u"},
            "token": f"c-{secrets.token_hex(16)}",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": message_id, "open_chat_id": chat_id},
        }
        return self._envelope("card.action.trigger", event, event_id)

    def url_verification(self, challenge: str) -> dict[str, Any]:
        return {"challenge": challenge, "token": self.verification_token, "type": "url_verification"}

    def http_request(
        self,
        payload: dict[str, Any],
        *,
        token: str | None = None,
        encrypt_with: str | None = None,
        signature: str | None = None,
    ) -> tuple[dict[str, str], bytes]:
        """Headers and body of an event as Lark posts it; ``token``, ``encrypt_with`` (another key)
        and ``signature`` spoil one check each."""
        payload = json.loads(json.dumps(payload))
        if token is not None:
            payload.get("header", payload)["token"] = token  # v2 events carry it in the header
        plain = json.dumps(payload, ensure_ascii=False).encode()
        body = json.dumps({"encrypt": encrypt(encrypt_with or self.encrypt_key, plain)}).encode()
        timestamp, nonce = str(int(time.time())), secrets.token_hex(8)
        digest = hashlib.sha256((timestamp + nonce + self.encrypt_key).encode() + body).hexdigest()
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "X-Lark-Request-Timestamp": timestamp,
            "X-Lark-Request-Nonce": nonce,
            "X-Lark-Signature": signature or digest,
        }
        return headers, body

    def post_event(self, url: str, payload: dict[str, Any], **spoil: str) -> tuple[int, dict[str, Any]]:
        """POST an event to the app's request URL; its status and JSON answer."""
        headers, body = self.http_request(payload, **spoil)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, json.loads(answer.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def push(self, payload: dict[str, Any], timeout: float = 10) -> FrameReply:
        """Send an event over the long connection; the client's reply frame."""
        return self.ws.push(payload, timeout)

    def _envelope(self, event_type: str, event: dict[str, Any], event_id: str | None) -> dict[str, Any]:
        header = {
            "event_id": event_id or secrets.token_hex(16),
            "token": self.verification_token,
            "create_time": str(int(time.time() * 1000)),
            "event_type": event_type,
            "tenant_key": "tenant-1",
            "app_id": self.app_id,
        }
        return {"schema": "2.0", "header": header, "event": event}

    # --- the REST API ---------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """One REST call: its status, JSON body and extra headers (after any scripted delay)."""
        path = urlsplit(target).path
        if path.startswith(("/open-apis/im/", "/open-apis/contact/")):
            error = self._http_error(path)
            if error is not None:
                return error
        status, body = self._route(method, target, headers, raw)
        time.sleep(self.delay_of(path))
        return status, body, {}

    def _route(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, Any]]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        if (method, path) == ("POST", "/open-apis/auth/v3/tenant_access_token/internal"):
            return self._tenant_token(_json(raw))
        if (method, path) == ("POST", "/callback/ws/endpoint"):
            return self._ws_endpoint(_json(raw))
        if headers.get("authorization") != f"Bearer {self._token}":
            return 400, _error(
                99991663, "Invalid access token for authorization. Please make a request with token attached."
            )
        if (method, path) == ("GET", "/open-apis/bot/v3/info"):
            bot = {
                "activate_status": 2,
                "app_name": self.bot_name,
                "open_id": self.bot_open_id,
                "ip_white_list": [],
            }
            return 200, {"code": 0, "msg": "ok", "bot": bot}
        if (method, path) == ("POST", "/open-apis/contact/v3/users/batch_get_id"):
            return self._batch_get_id(path, query, headers.get("content-type", ""), raw)
        fault = self._fault(path)
        if fault is not None:
            return 400, fault
        if (method, path) == ("POST", "/open-apis/im/v1/files"):
            return self._upload(headers.get("content-type", ""), raw)
        members = re.fullmatch(r"/open-apis/im/v1/chats/([^/]+)/members", path)
        if method == "GET" and members is not None:
            return self._members(members.group(1), query)
        if not path.startswith("/open-apis/im/v1/messages"):
            return 404, _error(404, f"no route {path}")
        segments = path.removeprefix("/open-apis/im/v1/messages").strip("/").split("/")
        if method == "GET" and segments == [""]:
            return self._list(query)
        if method == "GET" and len(segments) == 1:
            return self._get(segments[0])
        if method == "POST" and segments == [""]:
            if query.get("receive_id_type") != ["chat_id"]:
                return 400, _error(230001, "receive_id_type must be chat_id here")
            return self._send(raw, reply_to=None)
        if method == "POST" and len(segments) == 2 and segments[1] == "reply":
            return self._send(raw, reply_to=segments[0])
        if method == "PATCH" and len(segments) == 1:
            return self._patch(segments[0], raw)
        return 404, _error(404, f"no route {method} {path}")

    def _members(self, chat_id: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        """GET im/v1/chats/:chat_id/members: a page of the chat's users, as Lark lists them."""
        if not self.member_scope:
            return 400, _error(
                99991672,
                "Access denied. One of the following scopes is required: "
                "[im:chat:readonly, im:chat.members:read].",
            )
        if chat_id not in self.members:
            return 400, _error(232011, "Operator can NOT be out of the chat.")
        if query.get("member_id_type", ["open_id"]) != ["open_id"]:
            return 400, _error(99992402, "field validation failed: this fake lists open ids only")
        size = int(query.get("page_size", ["20"])[0])
        if not 1 <= size <= 100:
            return 400, _error(99992402, "field validation failed: page_size must be 1..100")
        start = int(query.get("page_token", ["0"])[0] or 0)
        ids = self.members[chat_id]
        page = ids[start : start + size]
        more = start + size < len(ids)
        items = [{"member_id_type": "open_id", "member_id": i, "name": i, "tenant_key": "fake"} for i in page]
        data = {
            "items": items,
            "page_token": str(start + size) if more else "",
            "has_more": more,
            "member_total": len(ids),
        }
        return 200, {"code": 0, "msg": "success", "data": data}

    def _batch_get_id(
        self, path: str, query: dict[str, list[str]], content_type: str, raw: bytes
    ) -> tuple[int, dict[str, Any]]:
        """contact v3 users batch_get_id: each email (at most 50) back in ``user_list``, with its
        user's id when the tenant has one and without it when not, as Lark answers; 99991672 without
        the contact permission."""
        emails = _json(raw).get("emails") or []
        with self._cond:
            self.lookups.append([str(e) for e in emails] if isinstance(emails, list) else [])
        fault = self._fault(path)
        if fault is not None:
            return 400, fault
        if not self.contact_scope:
            return 400, _error(
                99991672,
                "Access denied. One of the following scopes is required: [contact:user.id:readonly].",
            )
        if query.get("user_id_type", ["open_id"]) != ["open_id"]:
            return 400, _error(99992402, "field validation failed: this fake gives open ids only")
        if not content_type.startswith("application/json"):
            return 400, _error(99992402, "the body must be application/json")
        if not isinstance(emails, list) or len(emails) > 50:
            return 400, _error(99992402, "field validation failed: emails is a list of at most 50")
        known = {e.casefold(): u for e, u in self.users.items()}
        status = {"is_frozen": False, "is_resigned": False, "is_activated": True, "is_exited": False}
        found = [
            {"user_id": known[str(e).casefold()], "email": e, "status": status}
            if str(e).casefold() in known
            else {"email": e}
            for e in emails
        ]
        return 200, {"code": 0, "msg": "success", "data": {"user_list": found}}

    def _tenant_token(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if (body.get("app_id"), body.get("app_secret")) != (self.app_id, self.app_secret):
            return 400, _error(10014, "app secret invalid")
        return 200, {"code": 0, "msg": "ok", "tenant_access_token": self._token, "expire": 7200}

    def _ws_endpoint(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if (body.get("AppID"), body.get("AppSecret")) != (self.app_id, self.app_secret):
            return 200, _error(10014, "app secret invalid")
        url = f"ws://127.0.0.1:{self.ws.port}/ws/v2?device_id={secrets.token_hex(4)}&service_id={SERVICE_ID}"
        # Reconnect at once (no random delay) and every second: drop() tests need no long waits.
        config = {"ReconnectCount": -1, "ReconnectInterval": 1, "ReconnectNonce": 0, "PingInterval": 120}
        return 200, {"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}}

    def _send(self, raw: bytes, reply_to: str | None) -> tuple[int, dict[str, Any]]:
        body = _json(raw)
        with self._cond:
            if reply_to is not None and reply_to not in self._chat_of:
                return 400, _error(230001, f"invalid message_id: {reply_to}")
            uuid = body.get("uuid") or None
            first = self._by_uuid.get(uuid) if uuid else None
            if first is not None and self.now() - first.created_at < UUID_WINDOW_S:
                return 200, _message_data(first)  # Lark: one message per uuid within an hour
        problem = _check_content(body.get("msg_type"), body.get("content"), len(raw), self._file_keys())
        if problem is not None:
            return 400, problem
        with self._cond:
            chat_id = self._chat_of[reply_to] if reply_to else body.get("receive_id", "")
            in_thread = bool(body.get("reply_in_thread"))
            sent = Sent(
                message_id=self._new_id("om"),
                chat_id=chat_id,
                msg_type=body["msg_type"],
                content=json.loads(body["content"]),
                uuid=uuid,
                reply_to=reply_to,
                reply_in_thread=in_thread,
                thread_id=self._thread_of(reply_to) if reply_to and in_thread else None,
                created_at=self.now(),
            )
            self._chat_of[sent.message_id] = chat_id
            if uuid:
                self._by_uuid[uuid] = sent
            self.messages.append(sent)
            self._cond.notify_all()
        return 200, _message_data(sent)

    def _thread_of(self, message_id: str) -> str:
        """The thread a reply in thread to ``message_id`` goes in: the one it is in or opened, else new."""
        parent = next((m for m in self.messages if m.message_id == message_id), None)
        if parent is None:  # a user's message, known from an event: its thread is its own
            return "omt_" + message_id
        if parent.thread_id is None:
            parent.thread_id = self._new_id("omt")
        return parent.thread_id

    def _get(self, message_id: str) -> tuple[int, dict[str, Any]]:
        """im.v1 message get: the message, as one item (a merged-forward would list more)."""
        with self._cond:
            sent = next((m for m in self.messages if m.message_id == message_id), None)
        if sent is None:
            return 400, _error(230001, f"invalid message_id: {message_id}")
        return 200, {"code": 0, "msg": "success", "data": {"items": [_message_data(sent)["data"]]}}

    def _list(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        """im.v1 message list of a chat (its messages, not replies inside threads) or of a thread (its
        replies), from start_time to end_time (seconds), ByCreateTimeAsc (Lark's default) or
        ByCreateTimeDesc, page_size <= 50."""
        arg = {name: values[-1] for name, values in query.items()}
        kind, container = arg.get("container_id_type"), arg.get("container_id")
        if kind not in ("chat", "thread") or not container:
            return 400, _error(230001, "container_id_type must be chat or thread, with a container_id")
        size = int(arg.get("page_size") or 20)
        if not 1 <= size <= 50:
            return 400, _error(230001, "page_size must be between 1 and 50")
        start = float(arg.get("start_time") or 0)
        end = float(arg.get("end_time") or float("inf"))
        with self._cond:
            found = [
                m
                for m in self.messages
                if start <= m.created_at <= end
                and (
                    (m.reply_in_thread and m.thread_id == container)
                    if kind == "thread"
                    else (m.chat_id == container and not m.reply_in_thread)
                )
            ]
        if arg.get("sort_type") == "ByCreateTimeDesc":
            found.reverse()
        first = int(arg.get("page_token") or 0)
        page = found[first : first + size]
        more = first + size < len(found)
        data = {
            "has_more": more,
            "page_token": str(first + size) if more else "",
            "items": [_message_data(m)["data"] for m in page],
        }
        return 200, {"code": 0, "msg": "success", "data": data}

    def _patch(self, message_id: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        body = _json(raw)
        with self._cond:
            sent = next((m for m in self.messages if m.message_id == message_id), None)
        if sent is None or sent.msg_type != "interactive":
            return 400, _error(230001, f"message {message_id} is not a card this app sent")
        problem = _check_content("interactive", body.get("content"), len(raw), set())
        if problem is not None:
            return 400, problem
        with self._cond:
            sent.updates.append(json.loads(body["content"]))
            self._cond.notify_all()
        return 200, {"code": 0, "msg": "success", "data": {}}

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        form = _multipart(content_type, raw)
        if form.get("file_type", b"").decode() not in FILE_TYPES or not form.get("file_name"):
            return 400, _error(234001, "Invalid request param.")
        if not form.get("file"):
            return 400, _error(234010, "File's size can't be 0.")
        upload = Upload(
            self._new_id("file_v3"), form["file_type"].decode(), form["file_name"].decode(), form["file"]
        )
        with self._cond:
            self.files.append(upload)
        return 200, {"code": 0, "msg": "success", "data": {"file_key": upload.file_key}}

    def _fault(self, path: str) -> dict[str, Any] | None:
        with self._cond:
            for fault in self._faults:
                if fault[0] in path:
                    self._faults.remove(fault)
                    return _error(fault[1], fault[2])
        return None

    def _http_error(self, path: str) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        with self._cond:
            for error in self._http_errors:
                if error[0] in path:
                    self._http_errors.remove(error)
                    if error[1] == 0:  # a call let through before the scripted errors
                        return None
                    if error[1] == 429:
                        return 429, _error(99991400, "request trigger frequency limit"), error[2]
                    return error[1], _error(error[1], "internal error"), error[2]
        return None

    def _file_keys(self) -> set[str]:
        with self._cond:
            return {f.file_key for f in self.files}

    def _new_id(self, prefix: str) -> str:
        with self._cond:
            self._ids += 1
            return f"{prefix}_{self._ids:08d}{secrets.token_hex(12)}"


def _check_content(msg_type: Any, content: Any, size: int, file_keys: set[str]) -> dict[str, Any] | None:
    """Lark's checks of a message's content; an error body, or None when it is fine."""
    if msg_type not in MSG_TYPES:
        return _error(230001, f"invalid msg_type: {msg_type!r}")
    if not isinstance(content, str):
        return _error(230001, "invalid content: it must be a JSON string")
    try:
        parsed = json.loads(content)
    except ValueError:
        return _error(230001, "invalid content: not JSON")
    if msg_type in ("interactive", "post") and size > CARD_LIMIT:
        return _error(230025, "The message exceeds the size limit of 30 KB.")
    if msg_type == "interactive":
        return _check_card(parsed)
    if msg_type == "text" and not isinstance(parsed.get("text"), str):
        return _error(230001, "invalid content: a text message needs text")
    if msg_type == "file" and parsed.get("file_key") not in file_keys:
        return _error(230001, "invalid content: unknown file_key")
    return None


def _check_card(card: dict[str, Any]) -> dict[str, Any] | None:
    if card.get("schema") != "2.0":
        return None  # a 1.0 card: Lark ignores what it does not know
    unknown = set(card) - CARD_KEYS
    if unknown:
        return _error(
            230099, f"ErrCode: 200621; ErrMsg: parse card json err, unknown property: {sorted(unknown)}"
        )
    if '"tag": "action"' in json.dumps(card):
        return _error(230099, "ErrCode: 200861; cards of schema V2 no longer support this capability")
    return None


def _message_data(sent: Sent) -> dict[str, Any]:
    data = {
        "message_id": sent.message_id,
        "msg_type": sent.msg_type,
        "chat_id": sent.chat_id,
        "parent_id": sent.reply_to or "",
        **({"thread_id": sent.thread_id} if sent.thread_id else {}),
        "create_time": str(int(sent.created_at * 1000)),
        "deleted": False,
        "updated": False,
        "sender": {"id": "cli_fake", "id_type": "app_id", "sender_type": "app", "tenant_key": "tenant-1"},
        "body": {"content": json.dumps(sent.content, ensure_ascii=False)},
    }
    return {"code": 0, "msg": "success", "data": data}


def _error(code: int, msg: str) -> dict[str, Any]:
    return {"code": code, "msg": msg}


def _json(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body, by name."""
    message = email.parser.BytesParser().parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
    )
    if not message.is_multipart():
        return {}
    fields = {}
    for part in message.get_payload():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields[str(name)] = part.get_payload(decode=True) or b""
    return fields


def encrypt(key: str, plain: bytes) -> str:
    """Lark's event encryption: AES-256-CBC with key sha256(key), PKCS7, the IV in front, base64."""
    iv = os.urandom(16)
    pad = 16 - len(plain) % 16
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    return base64.b64encode(iv + cipher.encrypt(plain + bytes([pad]) * pad)).decode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, body, extra = self.server.fake.handle(self.command, self.path, headers, raw)  # type: ignore[attr-defined]
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        for name, value in extra.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-Tt-Logid", secrets.token_hex(8))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


# --- the long connection --------------------------------------------------------------


class _LongConnectionServer:
    """A websockets server on its own loop and daemon thread, speaking lark's protobuf frames."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.accepted = 0  # connections ever accepted
        self._open: list[ServerConnection] = []
        self._replies: dict[str, FrameReply] = {}
        self._cond = threading.Condition()
        self._server: Any = None
        self._seq = 0

    def start(self) -> None:
        ready = threading.Event()

        async def listen() -> None:
            self._server = await serve(self._connection, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(listen())
            ready.set()
            self.loop.run_forever()
            self.loop.close()

        threading.Thread(target=run, name="fake-lark-ws", daemon=True).start()
        if not ready.wait(5):
            raise RuntimeError("the fake long-connection server did not start")

    def close(self) -> None:
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)

    async def _shutdown(self) -> None:
        self._server.close()
        await self._server.wait_closed()

    def wait_connected(self, accepted: int = 1, timeout: float = 20) -> None:
        """Until ``accepted`` connections were made in all and one is open."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.accepted >= accepted and self._open, timeout):
                raise AssertionError(f"{self.accepted} long connections, expected {accepted}")

    def wait_closed(self, timeout: float = 10) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: not self._open, timeout):
                raise AssertionError("the client kept its long connection open")

    def drop(self) -> None:
        """Close every connection from the server's side, as a restart of Lark's gateway would."""
        with self._cond:
            conns = list(self._open)
        for conn in conns:
            asyncio.run_coroutine_threadsafe(conn.close(1001, "going away"), self.loop).result(5)

    def push(self, payload: dict[str, Any], timeout: float) -> FrameReply:
        with self._cond:
            if not self._open:
                raise AssertionError("no client is connected")
            conn = self._open[-1]  # Lark sends each event to one connection
            self._seq += 1
            message_id = f"msg-{self._seq}-{secrets.token_hex(4)}"
        frame = _frame(
            DATA,
            {
                "type": "event",
                "message_id": message_id,
                "sum": "1",
                "seq": "0",
                "trace_id": secrets.token_hex(8),
            },
        )
        frame.payload = json.dumps(payload, ensure_ascii=False).encode()
        asyncio.run_coroutine_threadsafe(conn.send(frame.SerializeToString()), self.loop).result(5)
        with self._cond:
            if not self._cond.wait_for(lambda: message_id in self._replies, timeout):
                raise AssertionError(f"no reply to frame {message_id}")
            return self._replies.pop(message_id)

    async def _connection(self, conn: ServerConnection) -> None:
        query = parse_qs(urlsplit(conn.request.path).query)
        if query.get("service_id") != [str(SERVICE_ID)] or not query.get("device_id"):
            await conn.close(1008, "bad connection url")
            return
        with self._cond:
            self.accepted += 1
            self._open.append(conn)
            self._cond.notify_all()
        try:
            async for raw in conn:
                await self._receive(conn, raw)
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                self._open.remove(conn)
                self._cond.notify_all()

    async def _receive(self, conn: ServerConnection, raw: Any) -> None:
        frame = Frame()
        frame.ParseFromString(raw)
        headers = {h.key: h.value for h in frame.headers}
        if frame.method == CONTROL and headers.get("type") == "ping":
            pong = _frame(CONTROL, {"type": "pong"}, service=frame.service)
            await conn.send(pong.SerializeToString())
        elif frame.method == DATA and "message_id" in headers:
            answer = json.loads(frame.payload)
            data = json.loads(base64.b64decode(answer["data"])) if answer.get("data") else None
            with self._cond:
                self._replies[headers["message_id"]] = FrameReply(answer["code"], data)
                self._cond.notify_all()


def _frame(method: int, headers: dict[str, str], service: int = SERVICE_ID) -> Frame:
    frame = Frame()
    frame.SeqID, frame.LogID, frame.service, frame.method = 0, 0, service, method
    for key, value in headers.items():
        header = frame.headers.add()
        header.key, header.value = key, value
    return frame
