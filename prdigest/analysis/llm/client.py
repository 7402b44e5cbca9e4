"""One OpenAI-compatible endpoint: the only module that touches the openai SDK.

The structured-output ladder, per client: strict ``json_schema`` (OpenAI, vLLM, Ollama >= 0.5),
then ``json_object`` where a server rejects that (DeepSeek), then a plain "JSON only" prompt;
invalid output, or output the quality gate refuses (``gate``), gets one repair request carrying
the reason. Every message sent is redacted. openai is imported inside the functions that send, so a
report without an LLM never loads it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from prdigest.analysis.llm.call import Attempt, Call, Exchange, request_hash
from prdigest.analysis.llm.errors import LLMBadOutput as LLMBadOutput
from prdigest.analysis.llm.errors import LLMContextFull as LLMContextFull
from prdigest.analysis.llm.errors import LLMError as LLMError
from prdigest.analysis.llm.errors import LLMUnavailable as LLMUnavailable
from prdigest.analysis.llm.gate import GateRefused
from prdigest.analysis.llm.patience import pause, retry_after
from prdigest.analysis.llm.rate import limiter
from prdigest.analysis.llm.safety import estimate_tokens
from prdigest.analysis.llm.schemas import CHARS_PER_TOKEN, LLMOutput, describe_error, strict_schema
from prdigest.analysis.llm.stream import Chunks, joined
from prdigest.config import LLMSettings
from prdigest.prompts import load_prompt
from prdigest.redact import redact

if TYPE_CHECKING:
    import openai
    from openai.types import CompletionUsage
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat import ChatCompletionToolParam as ChatCompletionToolParam  # routing's tools

    from prdigest.storage.db import Store

RUNGS = ("json_schema", "json_object", "prompt")
REPLY_ECHO = 4000  # characters of an invalid reply sent back with the repair request


_FATAL = {"unavailable"}


class LLMClient:
    """One OpenAI-compatible endpoint; remembers the rung of the ladder its server honours.

    Keep one per endpoint for the life of the process (the bot): later calls then
    start at the rung that worked. Thread-safe; the SDK client is made on first use. Each request waits
    for its turn under the rate limit, booked in ``store`` (rate.py; none: in this process).
    """

    def __init__(self, settings: LLMSettings, store: Store | None = None):
        self.settings = settings
        self._rate = limiter(endpoint_key(settings), settings, store)
        self.start = 0  # index into RUNGS
        self._lock = threading.Lock()
        self._sdk: openai.OpenAI | None = None
        # Streams one at a time: set once the server has taken a stream back to serve another.
        self.serial = False
        self._serial = threading.Lock()

    @property
    def rung(self) -> str:
        return RUNGS[self.start]

    def complete(
        self, call: Call, record: Callable[[Attempt], None], until: float | None = None
    ) -> LLMOutput:
        """The validated answer to ``call``; every request sent is passed to ``record``. A 429 is waited
        out while the pause ends before ``until`` (a monotonic time; None: never)."""
        messages = list(call.messages)
        rung = self.start
        repaired, interrupted, waits = False, False, 0
        max_tokens = self.settings.max_output_tokens.of(call.purpose)
        while True:
            sent = self._messages(messages, RUNGS[rung], call.lang)
            self._rate.take(sent, max_tokens, until, call.subject)  # LLMUnavailable: no turn in time
            started = time.monotonic()
            reply = self._send(sent, RUNGS[rung], call.schema, max_tokens)
            outcome, result, error = self._judge(reply, call, max_tokens)
            record(
                Attempt(
                    rung=RUNGS[rung],
                    prompt_hash=request_hash(sent),
                    outcome=outcome,
                    input_tokens=reply.input_tokens,
                    output_tokens=reply.output_tokens,
                    latency_ms=round((time.monotonic() - started) * 1000),
                    repair=repaired,
                )
            )
            if result is not None:
                self.start = rung
                return result
            if outcome in ("rejected", "blank"):
                if rung + 1 == len(RUNGS):
                    raise LLMBadOutput(f"{call.subject}: the server accepted no way of asking for JSON")
                rung += 1
                if outcome == "rejected":  # a refused way of asking: later calls start below it
                    self.start = max(self.start, rung)
            elif outcome in ("invalid", "gate") and not repaired:
                repaired = True
                repair = load_prompt("common", call.lang).render("repair", error=error)
                messages = [
                    *call.messages,
                    {"role": "assistant", "content": reply.text[:REPLY_ECHO]},
                    {"role": "user", "content": repair},
                ]
            elif outcome == "rate_limited" and (wait := pause(reply.retry_after, waits, until)) is not None:
                waits += 1  # the run may wait (patience.py): asked again, on the same rung
                time.sleep(wait)
            elif outcome == "interrupted" and not interrupted:
                interrupted = True  # asked again, one stream at a time from now on (see `_send`)
            elif outcome in ("invalid", "gate"):
                raise LLMBadOutput(f"{call.subject}: the answer stayed invalid after a repair: {error}")
            elif outcome == "context":
                raise LLMContextFull(f"{call.subject}: the prompt did not fit the server's context")
            else:
                raise LLMUnavailable(f"{call.subject}: {outcome}", fatal=outcome in _FATAL)

    @staticmethod
    def _judge(reply: Exchange, call: Call, max_tokens: int) -> tuple[str, LLMOutput | None, str]:
        """(outcome, the validated answer or None, the error to send back for repair)."""
        if reply.outcome != "ok":
            return reply.outcome, None, ""
        if not reply.text.strip():
            return "blank", None, ""
        try:
            return "ok", call.parse(reply.text, max_tokens), ""
        except ValueError as exc:  # pydantic's ValidationError is one; the gate's refusal is counted apart
            return "gate" if isinstance(exc, GateRefused) else "invalid", None, describe_error(exc)

    @staticmethod
    def _messages(messages: list[dict[str, str]], rung: str, lang: str) -> list[dict[str, str]]:
        """The messages as sent: redacted, and told to answer in JSON only on the last rung."""
        if rung == "prompt":
            messages = [
                *messages,
                {"role": "user", "content": load_prompt("common", lang).render("json_only")},
            ]
        return [{"role": m["role"], "content": redact(m["content"])} for m in messages]

    def _client(self) -> openai.OpenAI:
        with self._lock:
            if self._sdk is None:
                self._sdk = sdk_client(self.settings)
            return self._sdk

    def _send(
        self,
        messages: list[dict[str, str]],
        rung: str,
        schema: type[LLMOutput],
        max_tokens: int,
        keys: frozenset[str] | None = None,
    ) -> Exchange:
        """One request; a streamed answer is left once its JSON object begins with a key not in ``keys``
        (None: the schema's fields)."""
        import httpx2
        import openai

        options: dict[str, Any] = {"max_tokens": max_tokens}
        if rung == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": strict_schema(schema), "strict": True},
            }
        elif rung == "json_object":
            options["response_format"] = {"type": "json_object"}
        try:
            if self.settings.streams:
                with self._serial if self.serial else nullcontext():
                    keys = frozenset(schema.model_fields) if keys is None else keys
                    text, usage, finished = self._streamed(messages, options, rung != "prompt", keys)
                if not finished:
                    # The server ended the stream with no finish reason: it took the request back to
                    # serve another (llama-cpp-python's interrupt_requests). It serves one at a time.
                    self.serial = True
                    return Exchange("interrupted", detail="the server ended the stream to serve another")
            else:
                completion = self._client().chat.completions.create(
                    model=self.settings.model, messages=sdk_messages(messages), **options
                )
                text = (completion.choices[0].message.content or "") if completion.choices else ""
                usage = completion.usage  # some servers send none: then estimate what was billed
        except openai.OpenAIError as exc:
            return _failed(exc)
        except httpx2.TimeoutException as exc:  # the deadline passed while the answer streamed in
            return Exchange("timeout", detail=f"the answer was still arriving: {exc}")
        except httpx2.TransportError as exc:
            return Exchange("error", detail=str(exc))
        return Exchange(
            "ok",
            text,
            usage.prompt_tokens if usage else sum(estimate_tokens(m["content"]) for m in messages),
            usage.completion_tokens if usage else estimate_tokens(text),
        )

    def _streamed(
        self,
        messages: list[dict[str, str]],
        options: dict[str, Any],
        stop_at_json: bool,
        keys: frozenset[str],
    ) -> tuple[str, CompletionUsage | None, bool]:
        """A streamed answer, read until its JSON object closes or begins with a key not in ``keys``
        (stream.py), its usage if the server sent it before, and whether it was whole: False when the
        server ended it with no finish reason. Leaving the ``with`` closes the stream, which ends the
        request on the server."""
        import openai
        from openai.types import CompletionUsage

        # The SDK's own request (retries, errors, server-sent events), each chunk left a plain dict: the
        # typed chunk it would build for every token or two is most of a streamed answer's CPU.
        body = {"model": self.settings.model, "messages": sdk_messages(messages), "stream": True}
        body["stream_options"] = {"include_usage": True}  # OpenAI, vLLM: a last chunk with the usage
        stream: openai.Stream[object] = self._client().post(
            "/chat/completions", body={**body, **options}, cast_to=object, stream=True,
            stream_cls=openai.Stream[object],
        )  # fmt: skip
        chunks = Chunks(stream)
        with stream:
            limit = options["max_tokens"] * CHARS_PER_TOKEN
            text = joined(chunks, stop_at_json, limit, keys)
        sent, got = chunks.tokens()
        usage = CompletionUsage(prompt_tokens=sent, completion_tokens=got, total_tokens=sent + got)
        return text, usage if sent or got else None, chunks.finished or not chunks.ended


def sdk_client(settings: LLMSettings) -> openai.OpenAI:
    import openai

    from prdigest.analysis.llm.deadline import deadline_client

    key = settings.api_key
    return openai.OpenAI(
        base_url=settings.base_url,
        # The SDK refuses an empty key; local servers take any.
        api_key=key.get_secret_value() if key else "unused",
        timeout=settings.timeout,
        max_retries=settings.retries,
        http_client=deadline_client(endpoint_key(settings), settings.timeout),  # the timeout, whole
    )


def tool_call(
    settings: LLMSettings,
    messages: list[dict[str, str]],
    tools: list[ChatCompletionToolParam],
    store: Store | None = None,
) -> tuple[str, str] | None:
    """The first tool the model calls, as (name, JSON arguments); None when it calls none or fails. Its
    turn under the rate limit is booked in ``store``'s line (every process's), else this process's."""
    import openai

    cap = settings.max_output_tokens.route
    try:
        limiter(endpoint_key(settings), settings, store).take(messages, cap, None, "route")
        # A server that ignores tools writes on: bounded like any request.
        completion = _tool_completion(settings, messages, tools, cap)
    except (openai.OpenAIError, LLMUnavailable):  # no turn under the rate limit in time, too
        return None
    return _first_tool(completion)


def _tool_completion(
    settings: LLMSettings,
    messages: list[dict[str, str]],
    tools: list[ChatCompletionToolParam],
    max_tokens: int,
) -> ChatCompletion:
    return sdk_client(settings).chat.completions.create(
        model=settings.model,
        messages=sdk_messages([{**m, "content": redact(m["content"])} for m in messages]),
        tools=tools,
        max_tokens=max_tokens,
    )


def _first_tool(completion: ChatCompletion) -> tuple[str, str] | None:
    calls = (completion.choices[0].message.tool_calls or []) if completion.choices else []
    function = getattr(calls[0], "function", None) if calls else None
    return (function.name, function.arguments or "{}") if function is not None else None


# --- one request, not retried: what `prdigest llm check` asks ---------------------------------


def probe(
    settings: LLMSettings, rung: str, messages: list[dict[str, str]], schema: type[LLMOutput], max_tokens: int
) -> Exchange:
    """One request on ``rung`` of the ladder, sent once: a refusal is an answer here, not a retry."""
    client = LLMClient(settings.model_copy(update={"max_retries": 0}))
    # Any JSON object tells the rung works: the answer is read to its close whatever its first key.
    return client._send(LLMClient._messages(messages, rung, "en"), rung, schema, max_tokens, frozenset())


def probe_tools(
    settings: LLMSettings,
    messages: list[dict[str, str]],
    tools: list[ChatCompletionToolParam],
    max_tokens: int,
) -> Exchange:
    """One request offering ``tools``, sent once: ok with the called tool's name, ``ignored`` with the
    text the model wrote instead, or why it failed."""
    import openai

    try:
        completion = _tool_completion(
            settings.model_copy(update={"max_retries": 0}), messages, tools, max_tokens
        )
    except openai.OpenAIError as exc:
        return _failed(exc)
    called = _first_tool(completion)
    if called is not None:
        return Exchange("ok", called[0])
    text = (completion.choices[0].message.content or "") if completion.choices else ""
    return Exchange("ignored", text)


def endpoint_key(settings: LLMSettings) -> str:
    """The endpoint as the log keeps it (the rung it accepts, its monthly usage)."""
    return settings.base_url or "https://api.openai.com/v1"


# What a server's error says when it refuses the way of asking for JSON (llama.cpp answers a schema it
# cannot turn into a grammar with a 500), and when the prompt did not fit its context.
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|grammar|structured output", re.I)
_CONTEXT_WORDS = re.compile(
    r"context (length|size|window)|maximum context|too many tokens|exceeds? the (model|context)|n_ctx", re.I
)


def _failed(exc: openai.OpenAIError) -> Exchange:
    """What a request that raised returned, and why."""
    import openai

    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its base
        return Exchange("timeout", detail=str(exc))
    if isinstance(exc, openai.APIStatusError):
        outcome = _refusal(exc)
        wait = retry_after(exc.response.headers) if outcome == "rate_limited" else None
        return Exchange(outcome, detail=f"HTTP {exc.status_code}: {_server_reason(exc)}", retry_after=wait)
    if isinstance(exc, openai.APIConnectionError):
        return Exchange("unavailable", detail=str(exc.__cause__ or exc))
    return Exchange("error", detail=str(exc))


def _server_reason(exc: openai.APIStatusError) -> str:
    """The error's message as the server wrote it (OpenAI's error.message, FastAPI's detail)."""
    body = exc.body  # the SDK keeps the inside of an {"error": {...}} body
    if isinstance(body, dict) and (message := body.get("message") or body.get("detail")):
        return str(message)
    return exc.message


def _refusal(exc: openai.APIStatusError) -> str:
    """The outcome of an HTTP error: a full context is no refused format, whatever the status."""
    import openai

    text = f"{exc.message} {exc.body}"
    if _CONTEXT_WORDS.search(text):
        return "context"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limited"
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError | openai.NotFoundError):
        return "unavailable"  # a wrong key, no such model, or a base URL without the API
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError) or _FORMAT_WORDS.search(
        text
    ):
        return "rejected"  # the server refuses this request's shape: on a format rung, the format
    return "error"


def sdk_messages(messages: Sequence[dict[str, str]]) -> list[ChatCompletionMessageParam]:
    """The messages as the SDK types them: the system, user and assistant turns prdigest sends."""
    out: list[ChatCompletionMessageParam] = []
    for m in messages:
        role, content = m["role"], m["content"]
        if role == "system":
            out.append({"role": "system", "content": content})
        elif role == "assistant":
            out.append({"role": "assistant", "content": content})
        elif role == "user":
            out.append({"role": "user", "content": content})
        else:
            raise ValueError(f"prdigest sends no {role!r} messages")
    return out
