"""What an OpenAI-compatible endpoint supports, asked once per way of asking (`prdigest llm check`).

One tiny request per rung of the structured-output ladder and one offering a tool, each sent once
(a refusal is the answer sought, not something to retry) and bounded by a few output tokens and the
settings' timeout; the context length where the server says it. The verdict names the rung the
engine will ask on, the first the server accepts, as the engine's own ladder would find it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prdigest.analysis.llm.call import Exchange
from prdigest.analysis.llm.client import RUNGS, endpoint_key, probe, probe_tools
from prdigest.analysis.llm.schemas import LLMOutput, first_json_object
from prdigest.config import LLMSettings

if TYPE_CHECKING:
    from prdigest.analysis.llm.client import ChatCompletionToolParam

TOOLS = "tools"
PROBE_TOKENS = 32  # enough for {"ok": true}; a model that writes on is cut there
INFO_TIMEOUT = 10.0  # seconds for each GET of what the server says of its model

_MESSAGES = [
    {"role": "system", "content": "You answer in JSON."},
    {"role": "user", "content": 'Reply with this JSON object and nothing else: {"ok": true}'},
]
_TOOL_MESSAGES = [{"role": "user", "content": "Show the report of last week."}]
_TOOL: list[ChatCompletionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "report",
            "description": "The weekly report of a repository.",
            "parameters": {"type": "object", "properties": {"period": {"type": "string"}}},
        },
    }
]


class ProbeReply(LLMOutput):
    ok: bool


@dataclass(frozen=True)
class RungCheck:
    rung: str  # json_schema, json_object, prompt or tools
    outcome: str  # ok, rejected, blank, ignored (tools), timeout, context, unavailable, error...
    detail: str  # the server's reason, or what an accepted request's answer was like


@dataclass(frozen=True)
class ServerCheck:
    rungs: tuple[RungCheck, ...]
    context: int | None  # tokens, where the server says it
    context_source: str  # where it said it

    @property
    def rung(self) -> str | None:
        """The rung the engine will ask on (the first accepted: the check records it, and the engine
        starts there); None: the LLM is unusable and the rules answer."""
        return next((c.rung for c in self.rungs if c.rung in RUNGS and c.outcome == "ok"), None)

    @property
    def tools(self) -> bool:
        return any(c.rung == TOOLS and c.outcome == "ok" for c in self.rungs)

    @property
    def reachable(self) -> bool:
        return any(c.outcome != "unavailable" for c in self.rungs)


def check_server(settings: LLMSettings) -> ServerCheck:
    """Ask the endpoint once per rung; a server that cannot be reached is asked nothing more."""
    checks: list[RungCheck] = []
    for rung in RUNGS:
        checks.append(_judge(rung, probe(settings, rung, _MESSAGES, ProbeReply, PROBE_TOKENS)))
        if checks[-1].outcome == "unavailable":
            return ServerCheck(tuple(checks), None, "")
    checks.append(_judge(TOOLS, probe_tools(settings, _TOOL_MESSAGES, _TOOL, PROBE_TOKENS)))
    context, source = context_length(settings)
    return ServerCheck(tuple(checks), context, source)


def _judge(rung: str, reply: Exchange) -> RungCheck:
    if reply.outcome == "ok" and rung != TOOLS:
        if not reply.text.strip():
            return RungCheck(rung, "blank", "an empty answer")
        try:
            first_json_object(reply.text)
        except ValueError:
            return RungCheck(
                rung, "ok", f"accepted, but the answer holds no JSON object: {_clip(reply.text)!r}"
            )
        return RungCheck(rung, "ok", "accepted, answered JSON")
    if reply.outcome == "ok":
        return RungCheck(rung, "ok", f"called {reply.text}")
    if reply.outcome == "ignored":
        return RungCheck(rung, "ignored", f"no tool called; wrote {_clip(reply.text)!r}")
    return RungCheck(rung, reply.outcome, _clip(reply.detail))


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


# --- the context length, where the server says it ------------------------------------------------


def context_length(settings: LLMSettings) -> tuple[int | None, str]:
    """(tokens, where the server said it): llama.cpp's /props (the context it runs with), else the
    model's entry in /v1/models (vLLM's max_model_len, context_length, llama.cpp's n_ctx_train)."""
    base = endpoint_key(settings)
    root = base.removesuffix("/v1")
    props = _get_json(f"{root}/props", settings)
    if isinstance(props, dict):
        n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx, "/props"
    models = _get_json(f"{base}/models", settings)
    entries = models.get("data") if isinstance(models, dict) else None
    if isinstance(entries, list):
        mine = [e for e in entries if isinstance(e, dict) and e.get("id") == settings.model]
        for entry in mine or [e for e in entries if isinstance(e, dict)][:1]:
            meta = entry.get("meta")
            for key, value in (*entry.items(), *(meta.items() if isinstance(meta, dict) else ())):
                if key in ("max_model_len", "context_length", "n_ctx_train", "n_ctx") and _count(value):
                    return value, f"/v1/models {key}"
    return None, ""


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _get_json(url: str, settings: LLMSettings) -> Any:
    """The JSON a GET returns; None for any failure (a server that does not say is no error)."""
    request = urllib.request.Request(url)
    if settings.api_key is not None:
        request.add_header("Authorization", f"Bearer {settings.api_key.get_secret_value()}")
    try:
        with urllib.request.urlopen(request, timeout=min(settings.timeout, INFO_TIMEOUT)) as response:
            return json.loads(response.read(1_000_000))
    except (OSError, ValueError, urllib.error.URLError):
        return None
