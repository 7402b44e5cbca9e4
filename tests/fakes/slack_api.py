"""A local Slack that the real slack_sdk / slack_bolt talk to: the Web API, file uploads, response URLs
and a Socket Mode websocket, all on 127.0.0.1.

    with FakeSlack() as slack:
        client = WebClient(token=slack.bot_token, base_url=slack.url)

Web API methods live under ``/api/`` (POST, or GET with the arguments in the query); each checks
the Bearer token (``invalid_auth`` otherwise; ``apps.connections.open`` wants the app-level token)
and can be scripted to fail (``fail``), to answer 429 with a Retry-After (``ratelimit``), to answer
an HTTP 5xx without doing anything (``server_error``, after ``after`` calls that go through), or to
do the call and answer only after a delay (``slow``: Slack accepted, the client timed out). Posted
messages are recorded with their channel, thread, blocks and metadata, and read back newest
first by ``conversations.history`` (top-level messages) and ``conversations.replies`` (a thread).
``users.lookupByEmail`` finds the ``users`` given by email (``users:read.email`` in ``scopes``).
``apps.connections.open`` hands out the address of a local websocket that says hello, then carries
the envelopes the test sends (``send_event``, ``send_command``, ``send_action``) and collects the
client's acks.

The second half builds correctly signed HTTP requests, as Slack sends them in HTTP mode.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.protocol import State
from websockets.sync.server import Server, ServerConnection, serve

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
SIGNING_SECRET = "fake-signing-secret"
TEAM = "T0FAKE"
BOT_USER = "U0PRDIGEST"
BOT_ID = "B0PRDIGEST"
MAX_BLOCKS = 50

Json = dict[str, Any]


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    blocks: list[Json]
    thread_ts: str | None = None
    metadata: Json | None = None
    edits: int = 0  # how many times chat.update changed it

    def as_history(self, with_metadata: bool) -> Json:
        out: Json = {"type": "message", "ts": self.ts, "text": self.text, "bot_id": BOT_ID, "user": BOT_USER}
        if self.blocks:
            out["blocks"] = self.blocks
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if with_metadata and self.metadata:
            out["metadata"] = self.metadata
        return out

    @property
    def all_text(self) -> str:
        """The fallback text and every text in the blocks: what a reader can see."""
        return "\n".join([self.text, *_texts(self.blocks)])


@dataclass
class Upload:
    file_id: str
    filename: str
    length: int
    content: bytes = b""
    title: str = ""
    channel: str | None = None
    thread_ts: str | None = None
    completed: bool = False


@dataclass
class Call:
    method: str
    args: Json
    token: str | None


@dataclass
class FakeSlack:
    bot_token: str = BOT_TOKEN
    app_token: str = APP_TOKEN
    signing_secret: str = SIGNING_SECRET
    messages: list[Message] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    uploads: dict[str, Upload] = field(default_factory=dict)
    responses: list[tuple[str, Json]] = field(default_factory=list)  # (response_url id, body)
    acks: dict[str, Json] = field(default_factory=dict)  # envelope id -> the client's ack
    # channel id -> its members' user ids (users.conversations); scopes: the token's.
    members: dict[str, set[str]] = field(default_factory=dict)
    # email -> user id (users.lookupByEmail; any id the test likes, however malformed)
    users: dict[str, str] = field(default_factory=dict)
    scopes: set[str] = field(
        default_factory=lambda: {"chat:write", "channels:read", "groups:read", "users:read.email"}
    )

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._failures: dict[str, list[str]] = {}
        self._limits: dict[str, list[int]] = {}
        self._errors: dict[str, list[int]] = {}
        self._delays: dict[str, list[float]] = {}
        self._ids = itertools.count(1)
        self._clock = time.time()
        self._http: ThreadingHTTPServer | None = None
        self._ws: Server | None = None
        self._sockets: list[ServerConnection] = []

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeSlack:
        http = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        http.daemon_threads = True
        http.fake = self  # type: ignore[attr-defined]
        self._http = http
        threading.Thread(target=http.serve_forever, args=(0.05,), name="fake-slack-http", daemon=True).start()
        # Connection threads inherit the daemon flag of the thread that serves.
        self._ws = serve(self._socket_session, "127.0.0.1", 0, compression=None)
        threading.Thread(target=self._ws.serve_forever, name="fake-slack-ws", daemon=True).start()
        return self

    def close(self) -> None:
        for sock in list(self._sockets):
            sock.close()
        if self._ws is not None:
            self._ws.shutdown()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def base(self) -> str:
        assert self._http is not None, "start the fake first"
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def url(self) -> str:
        """The Web API base URL (WebClient's base_url, PRDIGEST_SLACK_API_URL)."""
        return f"{self.base}/api/"

    @property
    def socket_url(self) -> str:
        assert self._ws is not None, "start the fake first"
        return f"ws://127.0.0.1:{self._ws.socket.getsockname()[1]}/link"

    def response_url(self, name: str) -> str:
        return f"{self.base}/response/{name}"

    # --- scripting and reading ---------------------------------------------------------

    def fail(self, method: str, error: str, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` answer ``{"ok": false, "error": error}``."""
        with self._lock:
            self._failures.setdefault(method, []).extend([error] * times)

    def ratelimit(self, method: str, retry_after: int = 0, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` answer 429 with this Retry-After."""
        with self._lock:
            self._limits.setdefault(method, []).extend([retry_after] * times)

    def server_error(self, method: str, status: int = 500, times: int = 1, after: int = 0) -> None:
        """``times`` calls of ``method``, once ``after`` more have gone through, answer HTTP ``status``
        and do nothing."""
        with self._lock:
            self._errors.setdefault(method, []).extend([0] * after + [status] * times)

    def slow(self, method: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` are carried out, then answered ``seconds`` late."""
        with self._lock:
            self._delays.setdefault(method, []).extend([seconds] * times)

    def delay_of(self, method: str) -> float:
        """The delay scripted for this call of ``method`` (0 when none), taken off the script."""
        with self._lock:
            delays = self._delays.get(method)
            return delays.pop(0) if delays else 0.0

    def calls_of(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def in_thread(self, channel: str, thread_ts: str | None) -> list[Message]:
        """Messages posted in a thread (``None``: at the top level of the channel)."""
        with self._lock:
            return [m for m in self.messages if m.channel == channel and m.thread_ts == thread_ts]

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Poll, woken by each recorded call, until ``predicate()`` is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout} s waiting for the fake Slack")
            with self._changed:
                self._changed.wait(min(left, 0.05))

    # --- Socket Mode --------------------------------------------------------------------

    def wait_connected(self, timeout: float = 10.0) -> None:
        self.wait_for(lambda: any(_is_open(s) for s in self._sockets), timeout)

    def send_event(self, body: Json, retry_attempt: int | None = None) -> str:
        """An Events API envelope; a retry carries ``retry_attempt`` as Slack's does."""
        extra: Json = {}
        if retry_attempt:
            extra = {"retry_attempt": retry_attempt, "retry_reason": "timeout"}
        return self._send("events_api", body, accepts_response_payload=False, **extra)

    def send_command(self, fields: dict[str, str]) -> str:
        return self._send("slash_commands", fields, accepts_response_payload=True)

    def send_action(self, payload: Json) -> str:
        return self._send("interactive", payload, accepts_response_payload=False)

    def wait_ack(self, envelope_id: str, timeout: float = 10.0) -> Json:
        return self.wait_for(lambda: self.acks.get(envelope_id), timeout)

    def _send(self, kind: str, payload: Json, **extra: Any) -> str:
        envelope_id = f"env-{next(self._ids)}"
        open_sockets = [s for s in self._sockets if _is_open(s)]
        assert open_sockets, "no Socket Mode client is connected"
        open_sockets[-1].send(
            json.dumps({"envelope_id": envelope_id, "type": kind, "payload": payload, **extra})
        )
        return envelope_id

    def _socket_session(self, sock: ServerConnection) -> None:
        if sock.request is None or urllib.parse.urlsplit(sock.request.path).path != "/link":
            sock.close(code=1008, reason="unknown path")
            return
        sock.send(
            json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0FAKE"}})
        )
        with self._changed:
            self._sockets.append(sock)
            self._changed.notify_all()
        try:
            for raw in sock:
                ack = json.loads(raw)
                with self._changed:
                    self.acks[ack["envelope_id"]] = ack
                    self._changed.notify_all()
        except ConnectionClosed:
            pass

    # --- the Web API --------------------------------------------------------------------

    def api(self, method: str, args: Json, token: str | None) -> tuple[int, dict[str, str], Json]:
        with self._changed:
            self.calls.append(Call(method, args, token))
            self._changed.notify_all()
            status = self._errors[method].pop(0) if self._errors.get(method) else 0
            if status:  # 0: a call let through before the scripted errors
                return status, {}, {"ok": False, "error": "fatal_error"}
            limits = self._limits.get(method)
            if limits:
                return 429, {"Retry-After": str(limits.pop(0))}, {"ok": False, "error": "ratelimited"}
            wanted = self.app_token if method == "apps.connections.open" else self.bot_token
            if token is None:
                return 200, {}, {"ok": False, "error": "not_authed"}
            if token != wanted:
                return 200, {}, {"ok": False, "error": "invalid_auth"}
            failures = self._failures.get(method)
            if failures:
                return 200, {}, {"ok": False, "error": failures.pop(0)}
            handler = _METHODS.get(method)
            if handler is None:
                return 200, {}, {"ok": False, "error": "unknown_method"}
            return 200, {}, handler(self, args)

    def _ts(self) -> str:
        # Unique and increasing, like Slack's: seconds.micro-sequence.
        return f"{int(self._clock)}.{next(self._ids):06d}"

    def _auth_test(self, args: Json) -> Json:
        return {
            "ok": True,
            "url": "https://fake.slack.com/",
            "team": "Fake",
            "user": "prdigest",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
        }

    def _user_conversations(self, args: Json) -> Json:
        """users.conversations of ``user``: the channels of ``types`` they are in, a cursor's page at
        a time (``limit``, at most 1,000), as Slack lists them; missing_scope without channels:read
        and groups:read."""
        needed = {"channels:read", "groups:read"} - self.scopes
        if needed:
            provided = ",".join(sorted(self.scopes))
            return {
                "ok": False,
                "error": "missing_scope",
                "needed": ",".join(sorted(needed)),
                "provided": provided,
            }
        user = args.get("user") or BOT_USER
        if user != BOT_USER and not str(user).startswith(("U", "W")):
            return {"ok": False, "error": "user_not_found"}
        types = set(str(args.get("types") or "public_channel").split(","))
        if not types <= {"public_channel", "private_channel", "mpim", "im"}:
            return {"ok": False, "error": "invalid_types"}
        channels = sorted(c for c, users in self.members.items() if user in users)
        channels = [
            c for c in channels if ("private_channel" if c.startswith("G") else "public_channel") in types
        ]
        limit = min(int(args.get("limit") or 100), 1000)
        start = (
            int(base64.b64decode(args["cursor"]).decode().removeprefix("next:")) if args.get("cursor") else 0
        )
        page = channels[start : start + limit]
        more = start + limit < len(channels)
        cursor = base64.b64encode(f"next:{start + limit}".encode()).decode() if more else ""
        return {
            "ok": True,
            "channels": [
                {"id": c, "is_channel": not c.startswith("G"), "is_private": c.startswith("G")} for c in page
            ],
            "response_metadata": {"next_cursor": cursor},
        }

    def _lookup_by_email(self, args: Json) -> Json:
        """users.lookupByEmail: the workspace's user with ``email`` (any capitals), as Slack answers it;
        missing_scope without users:read.email, users_not_found for an email no user has."""
        if "users:read.email" not in self.scopes:
            provided = ",".join(sorted(self.scopes))
            return {"ok": False, "error": "missing_scope", "needed": "users:read.email", "provided": provided}
        email = str(args.get("email") or "")
        if not email:
            return {"ok": False, "error": "invalid_arguments"}
        user_id = next((u for e, u in self.users.items() if e.casefold() == email.casefold()), None)
        if user_id is None:
            return {"ok": False, "error": "users_not_found"}
        name = email.split("@")[0]
        profile = {"email": email, "real_name": name, "display_name": name}
        user = {"id": user_id, "team_id": TEAM, "name": name, "deleted": False, "is_bot": False}
        return {"ok": True, "user": {**user, "real_name": name, "profile": profile}}

    def _post_message(self, args: Json) -> Json:
        if not args.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        blocks = _json_arg(args.get("blocks")) or []
        if len(blocks) > MAX_BLOCKS:
            return {"ok": False, "error": "invalid_blocks"}
        if not args.get("text") and not blocks:
            return {"ok": False, "error": "no_text"}
        metadata = _json_arg(args.get("metadata"))
        message = Message(
            args["channel"], self._ts(), args.get("text", ""), blocks, args.get("thread_ts"), metadata
        )
        self.messages.append(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": message.as_history(True)}

    def _update(self, args: Json) -> Json:
        blocks = _json_arg(args.get("blocks"))
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            return {"ok": False, "error": "invalid_blocks"}
        for message in self.messages:
            if message.channel == args.get("channel") and message.ts == args.get("ts"):
                message.text = args.get("text", message.text)
                message.blocks = blocks if blocks is not None else message.blocks
                message.edits += 1
                return {"ok": True, "channel": message.channel, "ts": message.ts}
        return {"ok": False, "error": "message_not_found"}

    def _history(self, args: Json) -> Json:
        channel = args.get("channel")
        oldest = float(args.get("oldest") or 0)
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        # Top-level messages only (thread replies are not in the channel's history), newest first.
        found = [
            m
            for m in reversed(self.messages)
            if m.channel == channel and m.thread_ts in (None, m.ts) and float(m.ts) > oldest
        ]
        return _page(found, args, with_metadata)

    def _replies(self, args: Json) -> Json:
        """A thread, oldest first: its parent, then its replies (cursor-paged as conversations.history)."""
        channel, parent = args.get("channel"), args.get("ts")
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("1", "true")
        found = [m for m in self.messages if m.channel == channel and parent in (m.ts, m.thread_ts)]
        if not found:
            return {"ok": False, "error": "thread_not_found"}
        return _page(found, args, with_metadata)

    def _upload_url(self, args: Json) -> Json:
        if not args.get("filename") or not str(args.get("length", "")).isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        file_id = f"F{next(self._ids):08d}"
        self.uploads[file_id] = Upload(file_id, args["filename"], int(args["length"]))
        return {"ok": True, "upload_url": f"{self.base}/upload/{file_id}", "file_id": file_id}

    def _complete_upload(self, args: Json) -> Json:
        files = _json_arg(args.get("files")) or []
        done = []
        for item in files:
            upload = self.uploads.get(item.get("id", ""))
            if upload is None or len(upload.content) != upload.length:
                return {"ok": False, "error": "file_not_found"}
            upload.title = item.get("title") or upload.filename
            upload.channel = args.get("channel_id")
            upload.thread_ts = args.get("thread_ts")
            upload.completed = True
            done.append({"id": upload.file_id, "name": upload.filename, "title": upload.title})
        return {"ok": True, "files": done}

    def _connections_open(self, args: Json) -> Json:
        return {"ok": True, "url": self.socket_url}

    def receive_upload(self, file_id: str, content: bytes) -> bool:
        with self._changed:
            upload = self.uploads.get(file_id)
            if upload is None:
                return False
            upload.content = content
            self._changed.notify_all()
            return True

    def receive_response(self, name: str, body: Json) -> None:
        with self._changed:
            self.responses.append((name, body))
            self._changed.notify_all()


_METHODS: dict[str, Callable[[FakeSlack, Json], Json]] = {
    "auth.test": FakeSlack._auth_test,
    "users.conversations": FakeSlack._user_conversations,
    "users.lookupByEmail": FakeSlack._lookup_by_email,
    "chat.postMessage": FakeSlack._post_message,
    "chat.update": FakeSlack._update,
    "conversations.history": FakeSlack._history,
    "conversations.replies": FakeSlack._replies,
    "files.getUploadURLExternal": FakeSlack._upload_url,
    "files.completeUploadExternal": FakeSlack._complete_upload,
    "apps.connections.open": FakeSlack._connections_open,
}


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        """Web API methods called with GET (slack_sdk's users.lookupByEmail): arguments in the query."""
        if urllib.parse.urlsplit(self.path).path.startswith("/api/"):
            self.do_POST()
        else:
            self._answer(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        fake: FakeSlack = self.server.fake  # type: ignore[attr-defined]
        url = urllib.parse.urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path.startswith("/api/"):
            args = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
            args.update(_parse_body(raw, self.headers.get("Content-Type", "")))
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
            status, headers, body = fake.api(url.path.removeprefix("/api/"), args, token)
            time.sleep(fake.delay_of(url.path.removeprefix("/api/")))
            self._answer(status, json.dumps(body).encode(), "application/json; charset=utf-8", headers)
        elif url.path.startswith("/upload/"):
            ok = fake.receive_upload(url.path.removeprefix("/upload/"), raw)
            self._answer(200 if ok else 404, f"OK - {len(raw)}".encode(), "text/plain")
        elif url.path.startswith("/response/"):
            fake.receive_response(url.path.removeprefix("/response/"), json.loads(raw or b"{}"))
            self._answer(200, b"ok", "text/plain")
        else:
            self._answer(404, b"not found", "text/plain")

    def _answer(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def _parse_body(raw: bytes, content_type: str) -> Json:
    if not raw:
        return {}
    if content_type.startswith("application/json"):
        return json.loads(raw)
    return {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode(), keep_blank_values=True).items()}


def _json_arg(value: Any) -> Any:
    """A structured argument: JSON bodies carry it as is, form bodies as a JSON string."""
    return json.loads(value) if isinstance(value, str) else value


def _is_open(sock: ServerConnection) -> bool:
    return sock.protocol.state is State.OPEN


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [
            t for k, v in node.items() for t in ([v] if k == "text" and isinstance(v, str) else _texts(v))
        ]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


# --- what Slack sends in HTTP mode -----------------------------------------------------------


@dataclass(frozen=True)
class SignedRequest:
    body: bytes
    headers: dict[str, str]


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = f"v0:{timestamp}:".encode() + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def sign(
    body: bytes, content_type: str, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> SignedRequest:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature(secret, ts, body),
    }
    return SignedRequest(body, headers)


def signed_event(body: Json, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> SignedRequest:
    return sign(json.dumps(body).encode(), "application/json", secret, timestamp)


def signed_command(fields: dict[str, str], secret: str = SIGNING_SECRET) -> SignedRequest:
    return sign(urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded", secret)


def signed_action(payload: Json, secret: str = SIGNING_SECRET) -> SignedRequest:
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    return sign(body, "application/x-www-form-urlencoded", secret)


def post(url: str, request: SignedRequest, extra_headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """POST a request as Slack does, past any proxy; (status, body) whatever the status."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, data=request.body, headers={**request.headers, **(extra_headers or {})})
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


# --- payloads ---------------------------------------------------------------------------------

_event_ids = itertools.count(1)


def event_id() -> str:
    return f"Ev{next(_event_ids):08d}"


def event_callback(event: Json, event_id: str) -> Json:
    """An Events API body (``event_callback``) around one event."""
    return {
        "token": "legacy-verification-token",  # deprecated; Slack still sends it
        "team_id": TEAM,
        "api_app_id": "A0FAKE",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
    }


def mention(text: str, *, channel: str, ts: str, user: str = "U0ALICE", thread_ts: str | None = None) -> Json:
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def direct_message(text: str, *, channel: str, ts: str, user: str = "U0ALICE", **extra: Any) -> Json:
    return {
        "type": "message",
        "channel_type": "im",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        **extra,
    }


def slash_command(
    text: str, *, channel: str, trigger_id: str, response_url: str, user: str = "U0ALICE"
) -> dict[str, str]:
    return {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "channel_id": channel,
        "user_id": user,
        "command": "/prdigest",
        "text": text,
        "response_url": response_url,
        "trigger_id": trigger_id,
        "api_app_id": "A0FAKE",
    }


def block_action(
    action_id: str,
    value: str | None,
    *,
    channel: str,
    message_ts: str,
    trigger_id: str,
    response_url: str,
    user: str = "U0ALICE",
    thread_ts: str | None = None,
) -> Json:
    """A ``block_actions`` payload: a button clicked on one of the bot's messages."""
    action: Json = {
        "type": "button",
        "action_id": action_id,
        "block_id": "b1",
        "action_ts": f"{time.time():.6f}",
    }
    if value is not None:
        action["value"] = value
    message: Json = {"type": "message", "ts": message_ts, "bot_id": BOT_ID, "text": "card"}
    if thread_ts:
        message["thread_ts"] = thread_ts
    return {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": user},
        "api_app_id": "A0FAKE",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel},
        "trigger_id": trigger_id,
        "channel": {"id": channel},
        "message": message,
        "response_url": response_url,
        "actions": [action],
    }


def _page(found: list[Any], args: Json, with_metadata: bool) -> Json:
    """One cursor page of messages, as conversations.history and conversations.replies answer."""
    start = int(args.get("cursor") or 0)
    limit = min(int(args.get("limit") or 100), 999)
    page = found[start : start + limit]
    more = start + limit < len(found)
    return {
        "ok": True,
        "messages": [m.as_history(with_metadata) for m in page],
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }
