"""A local OpenAI-compatible chat-completions server that the real openai SDK talks to over HTTP.

One mode per kind of server:

    strict       OpenAI, vLLM: json_schema, json_object and plain requests all honoured
    json_object  DeepSeek: a json_schema response_format is answered 400; json_object honoured
    prose        some Ollama/SGLang set-ups: response_format ignored, the JSON wrapped in prose
    plain        an older server: any response_format answered 400
    weak         llama-cpp-python with a tiny model: a json_schema response_format answered 500 (its
                 request validation names response_format), and a stream ended with [DONE] and no
                 finish reason when another request arrives (its interrupt_requests); pair it with
                 ``weak_answers``

An accepted request is answered from the queue (``enqueue``), else by the responder,
a function of the Request. An answer is the message content (a string) or a Reply
(status, headers, delay, content). A request with ``stream`` is answered as OpenAI streams:
server-sent events of chat.completion.chunk, a few characters each (``drip`` seconds apart), then
``[DONE]``; a client that leaves mid-stream is counted (``left``), as a real server stops generating
there. The server checks the Bearer key, records every
request, and waits ``latency`` seconds before each answer; ``close()`` releases
answers still waiting. With ``rate_per_minute``, a completion request beyond that many accepted in
the last minute is answered 429 at once, with a Retry-After (seconds until the window has room), as a
hosted API's rate limit does; ``rate_limited`` counts them. GET /v1/models lists the model (with
``model_fields`` in its entry, as vLLM's max_model_len); GET /props answers ``props`` (llama.cpp's
server), else 404.

    with FakeOpenAI(mode="json_object", responder=prdigest_answers) as fake:
        settings = LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model")

The second half holds answers in prdigest's shapes, for tests and the bench.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "sk-fake-local-key"
MODES = ("strict", "json_object", "prose", "plain", "weak")
COMPLETIONS = "/v1/chat/completions"


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float  # time.monotonic() when it arrived

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        """Every message's content: what the prompt costs."""
        return "\n".join(m.get("content") or "" for m in self.messages)

    @property
    def user(self) -> str:
        """The first user message: the one carrying the data."""
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def format(self) -> str | None:
        return (self.body.get("response_format") or {}).get("type")


@dataclass(frozen=True)
class Reply:
    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds, on top of the server's latency
    message: str = "scripted error"  # the error message of a status >= 400
    finish_reason: str = "stop"
    # (function name, JSON arguments) of each tool call the answer makes, instead of content.
    tool_calls: tuple[tuple[str, str], ...] = ()
    # Seconds between bytes: a server that drips its answer (its headers too, with drip_headers); when
    # the answer is streamed, seconds between its chunks.
    drip: float = 0.0
    drip_headers: bool = False
    # Streamed: ended after its first chunk with [DONE] and no finish reason, as a server does that
    # takes a stream back to serve another request.
    interrupted: bool = False


class Dripped(bytes):
    """A payload sent one byte every ``every`` seconds; with ``headers``, the status line and headers too."""

    every: float = 0.0
    headers: bool = False


class Streamed(list[bytes]):
    """A streamed answer: its server-sent events, ``every`` seconds apart; with ``yields``, ended as soon
    as another request has arrived since the ``arrived``-th."""

    every: float = 0.0
    yields: bool = False
    arrived: int = 0


CHUNK_CHARS = 8  # characters of the answer per streamed chunk: a token or two


Responder = Callable[[Request], "Reply | str"]


class FakeOpenAI:
    def __init__(
        self,
        mode: str = "strict",
        *,
        responder: Responder | None = None,
        key: str = KEY,
        latency: float = 0.0,
        model_fields: dict[str, Any] | None = None,
        props: dict[str, Any] | None = None,
        rate_per_minute: int | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode
        self.responder = responder
        self.key = key
        self.latency = latency
        self.model_fields = model_fields or {}
        self.props = props
        self.rate_per_minute = rate_per_minute  # None: no rate limit
        self.rate_limited = 0  # requests answered 429 for the rate limit
        self._accepted: deque[float] = deque()  # when the requests of the last minute were accepted
        self.requests: list[Request] = []
        # Requests being answered at once, now and at most: what a concurrency limit bounds.
        self.in_flight = 0
        self.most_in_flight = 0
        self.left = 0  # streamed answers the client stopped reading before their end
        self._queue: deque[Reply | str] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def wait_left(self, count: int, timeout: float = 10.0) -> int:
        """The count of streams clients left, once it reaches ``count`` or ``timeout`` passes (the
        server notices a client gone at its next write)."""
        deadline = time.monotonic() + timeout
        while self.left < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.left

    def enqueue(self, *answers: Reply | str) -> None:
        with self._lock:
            self._queue.extend(answers)

    def start(self) -> FakeOpenAI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), name="fake-openai", daemon=True).start()
        return self

    def close(self) -> None:
        self._closing.set()  # releases slow answers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- answering ----------------------------------------------------------------

    def handle_get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """What the server says of its model: /v1/models, and llama.cpp's /props when it has some."""
        if path == "/v1/models":
            entry = {"id": "fake-model", "object": "model", "owned_by": "fake", **self.model_fields}
            body: dict[str, Any] = {"object": "list", "data": [entry]}
        elif path == "/props" and self.props is not None:
            body = self.props
        else:
            return _error(404, f"no route {path}", "not_found")
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        if path != COMPLETIONS:
            return _error(404, f"no route {path}", "not_found")
        body = json.loads(raw or b"{}")
        request = Request(path, headers, body, time.monotonic())
        with self._lock:
            self.requests.append(request)
        if headers.get("authorization") != f"Bearer {self.key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        rejected = self._rejects(request.format)
        if rejected:
            status = 500 if self.mode == "weak" else 400
            return _error(status, rejected, "invalid_request_error", param="response_format")
        wait = self._over_rate(request.at)
        if wait is not None:
            status, extra, payload = _error(429, "Rate limit reached for requests", "requests")
            return status, {**extra, "Retry-After": str(wait)}, payload
        with self._lock:
            answer = self._queue.popleft() if self._queue else None
        if answer is None:
            answer = (
                self.responder(request) if self.responder else Reply(status=500, message="nothing scripted")
            )
        reply = Reply(content=answer) if isinstance(answer, str) else answer
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            self._closing.wait(self.latency + reply.delay)
        finally:
            with self._lock:
                self.in_flight -= 1
        if reply.status >= 400:
            status, extra, payload = _error(reply.status, reply.message, "scripted")
            return status, {**extra, **reply.headers}, payload
        if request.body.get("stream"):
            events = Streamed(self._chunks(request, reply))
            events.every, events.yields, events.arrived = reply.drip, self.mode == "weak", self.calls
            if reply.interrupted:
                events[1:] = [b"data: [DONE]\n\n"]
            return 200, {"Content-Type": "text/event-stream", **reply.headers}, events  # type: ignore[return-value]
        payload = self._completion(request, reply)
        if reply.drip:
            payload = Dripped(payload)
            payload.every, payload.headers = reply.drip, reply.drip_headers
        return 200, {"Content-Type": "application/json", **reply.headers}, payload

    def _over_rate(self, now: float) -> int | None:
        """None when the request is within ``rate_per_minute`` (then it counts), else the seconds until
        the window has room."""
        if self.rate_per_minute is None:
            return None
        with self._lock:
            while self._accepted and now - self._accepted[0] >= 60:
                self._accepted.popleft()
            if len(self._accepted) < self.rate_per_minute:
                self._accepted.append(now)
                return None
            self.rate_limited += 1
            return max(1, math.ceil(60 - (now - self._accepted[0])))

    def _rejects(self, fmt: str | None) -> str:
        if self.mode == "json_object" and fmt == "json_schema":
            return "This response_format type is unavailable now"
        if self.mode == "plain" and fmt is not None:
            return "response_format is not supported"
        if self.mode == "weak" and fmt == "json_schema":
            return "1 validation error: body.response_format.type: Input should be 'text' or 'json_object'"
        return ""

    def _content(self, reply: Reply) -> str:
        if self.mode == "prose":
            return f"Sure! Here is the JSON you asked for:\n```json\n{reply.content}\n```\nAnything else?"
        return reply.content

    def _chunks(self, request: Request, reply: Reply) -> list[bytes]:
        """The answer as OpenAI streams it: a role chunk, the content a few characters a chunk, the
        finish reason, the usage in a chunk of no choices when stream_options asks for it, [DONE]."""
        content = self._content(reply)
        head = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": request.body.get("model", "")}  # fmt: skip
        deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant", "content": ""}, None)]
        pieces = [content[i : i + CHUNK_CHARS] for i in range(0, len(content), CHUNK_CHARS)]
        deltas += [({"content": piece}, None) for piece in pieces]
        deltas.append(({}, reply.finish_reason))
        events = [
            json.dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            for delta, finish in deltas
        ]
        if (request.body.get("stream_options") or {}).get("include_usage"):
            events.append(json.dumps({**head, "choices": [], "usage": _usage(request.text, content)}))
        return [f"data: {event}\n\n".encode() for event in [*events, "[DONE]"]]

    def _completion(self, request: Request, reply: Reply) -> bytes:
        content = self._content(reply)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.tool_calls:  # as OpenAI sends them: no content, finish_reason "tool_calls"
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for i, (name, arguments) in enumerate(reply.tool_calls)
            ]}  # fmt: skip
        return json.dumps(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls" if reply.tool_calls else reply.finish_reason,
                        "message": message,
                    }
                ],
                "usage": _usage(request.text, content),
            }
        ).encode()


def _usage(prompt: str, content: str) -> dict[str, int]:
    """Tokens as the fake bills them: a quarter of the characters."""
    prompt_tokens, completion_tokens = math.ceil(len(prompt) / 4), math.ceil(len(content) / 4)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _error(
    status: int, message: str, kind: str, param: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"message": message, "type": kind, "param": param, "code": None}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._send(*self.server.fake.handle(self.path, headers, raw))  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        self._send(*self.server.fake.handle_get(self.path))  # type: ignore[attr-defined]

    def _send(self, status: int, out_headers: dict[str, str], payload: bytes) -> None:
        if isinstance(payload, Streamed):
            self._stream(out_headers, payload)
            return
        try:
            self.send_response(status)
            for name, value in {**out_headers, "Content-Length": str(len(payload))}.items():
                self.send_header(name, value)
            if isinstance(payload, Dripped):
                self._drip(payload)
            else:
                self.end_headers()
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a timeout test)

    def _stream(self, out_headers: dict[str, str], events: Streamed) -> None:
        """Send the events one by one, until the last, the client leaves (counted) or the fake closes."""
        fake = self.server.fake  # type: ignore[attr-defined]
        self.close_connection = True  # the stream ends when the connection does: no length is sent
        try:
            self.send_response(200)
            for name, value in {**out_headers, "Connection": "close"}.items():
                self.send_header(name, value)
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
                if fake._closing.wait(events.every):
                    return
                if events.yields and fake.calls > events.arrived:  # taken back to serve the newcomer
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
        except (BrokenPipeError, ConnectionResetError):
            with fake._lock:
                fake.left += 1

    def _drip(self, payload: Dripped) -> None:
        """Send ``payload`` a byte at a time until it is sent, the client leaves or the fake closes."""
        self.close_connection = True
        head = b""
        if payload.headers:
            head, self._headers_buffer = b"".join(self._headers_buffer) + b"\r\n", []
        else:
            self.end_headers()
        closing = self.server.fake._closing  # type: ignore[attr-defined]
        data = head + bytes(payload)
        for i in range(len(data)):
            self.wfile.write(data[i : i + 1])
            if closing.wait(payload.every):
                return

    def log_message(self, *_: object) -> None:
        pass


# --- answers in prdigest's shapes -----------------------------------------------------------

_PR = re.compile(r"PR #(\d+):")
_LISTED = re.compile(r"^#(\d+) merged", re.M)  # a PR line of the week's or a question's data


def analysis_json(number: int, **fields: Any) -> str:
    """A valid analysis of PR ``number``; ``fields`` replace the defaults."""
    value = {
        "summary": f"Change {number} in one line",
        "summary_translated": f"Change {number} in one line",  # the other language's, as tests read it
        "explanation": f"PR {number} changes one thing. It matters a little.",
        # Scores that differ from PR to PR: equal scores over a week are invalid output.
        "importance": 3 + number % 6,
        "insight": 2 + number % 5,
        "tags": ["feature"],
        "risks": [],
        "watch": ["watch the rollout"],
        "unresolved": [],
        "related": [],
    }
    return json.dumps({**value, **fields}, ensure_ascii=False)


def narrative_json(numbers: list[int], **fields: Any) -> str:
    """A valid narrative citing ``numbers``; ``fields`` replace the defaults."""
    half = max(len(numbers) // 2, 1)
    value = {
        "summary": "A week of steady work on the trainer.",
        "themes": [
            {
                "title": "First half",
                "prs": numbers[:half],
                "story": "It started here.",
                "trend": "growing",
                "representative": numbers[:2],
            },
            {
                "title": "Second half",
                "prs": numbers[half:],
                "story": "It went on there.",
                "trend": "steady",
                "representative": numbers[half : half + 2],
            },
        ],
        "risks": [
            {"title": "Core paths moved", "label": "core_path", "prs": numbers[:1], "evidence": "a quote"}
        ],
        "recommendations": [{"text": "Benchmark the change.", "prs": numbers[:1]}],
    }
    return json.dumps({**value, **fields}, ensure_ascii=False)


def pr_number(request: Request) -> int:
    match = _PR.search(request.user)
    assert match, "not a PR analysis request"
    return int(match.group(1))


def listed_numbers(request: Request) -> list[int]:
    return [int(n) for n in _LISTED.findall(request.user)]


def prdigest_answers(request: Request) -> str:
    """A valid answer to any prdigest request: a PR analysis, the week's narrative or a question."""
    if "<untrusted_pr_data>" in request.user:
        return analysis_json(pr_number(request))
    if "<untrusted_week_data>" in request.user:
        return narrative_json(listed_numbers(request))
    if "<untrusted_search_results>" in request.user:
        first = listed_numbers(request)[0]
        return json.dumps({"answer": f"It was #{first}.", "cited": [first]})
    raise AssertionError("an unknown request")


def narrated_summary(summary: str, report: Any) -> str:
    """What a narrative's ``summary`` becomes in the report: the model's words, then the level and its
    cause in the one sentence every rendering says (analysis/risks/level.py)."""
    from prdigest.analysis.risks.level import level_sentence
    from prdigest.i18n import report_texts

    level = level_sentence(report, report_texts(report.lang, report.window.since, report.window.until))
    return summary + ("" if report.lang == "zh" else " ") + level


# What a tiny model says where the format forces JSON: the junk (JSON punctuation, a hash list,
# a merged PR "not yet merged", the prompt echoed) and no risk at all.
WEAK_SUMMARIES = ("}, {", "0", ":{", "repo:", "d55816; d873b353", "This PR has not yet been merged.")


def weak_answers(request: Request) -> str:
    """A weak model's answer to any prdigest request: well-formed junk under a JSON format, prose junk
    without one (a tools request gets no tool call)."""
    if request.format is None:
        return "}, {"
    if "<untrusted_pr_data>" in request.user:
        number = pr_number(request)
        summary = WEAK_SUMMARIES[number % len(WEAK_SUMMARIES)]
        return analysis_json(number, summary=summary, explanation=summary, watch=["d55816; d873b353"])
    if "<untrusted_week_data>" in request.user:
        echoed = request.messages[0]["content"][:200]
        return narrative_json(listed_numbers(request), summary=echoed, risks=[], recommendations=[])
    return json.dumps({"answer": "}, {", "cited": []})
