"""One structured request to the LLM, as the engine builds it and the client sends it: its messages,
the schema that validates the answer, what the answer may name, and the quality gate it passes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prdigest.analysis.llm.gate import gated
from prdigest.analysis.llm.schemas import Allowed, LLMOutput, first_json_object
from prdigest.models import LANGS
from prdigest.prompts import Prompt


def prompt_lang(lang: str) -> str:
    """``lang`` where a prompt is written in it, else English."""
    return lang if lang in LANGS else "en"


@dataclass(frozen=True)
class Call:
    """One structured request: its messages, the model that validates the answer and what it may name."""

    purpose: str
    subject: str
    version: str
    lang: str
    messages: tuple[dict[str, str], ...]
    schema: type[LLMOutput]
    allowed: Allowed

    def parse(self, text: str, max_tokens: int | None = None) -> LLMOutput:
        data = first_json_object(text, max_tokens)  # ValueError: too long or too deep, or no object
        output = self.schema.model_validate(data, context={"allowed": self.allowed})
        return gated(output, self.messages, self.lang)


def request_hash(messages: Sequence[dict[str, str]]) -> str:
    """A short hash of the messages as sent: the log's prompt hash, the answers' cache key."""
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()[:16]


def make_call(
    prompt: Prompt,
    *,
    purpose: str,
    subject: str,
    version: str,
    schema: type[LLMOutput],
    allowed: Allowed,
    **variables: Any,
) -> Call:
    messages = (
        {"role": "system", "content": prompt.render("system", **variables)},
        {"role": "user", "content": prompt.render("user", **variables)},
    )
    return Call(purpose, subject, version, prompt.lang, messages, schema, allowed)


@dataclass(frozen=True)
class Exchange:
    """What one request returned: ok with the reply's text, or why it failed."""

    outcome: str  # ok, rejected, timeout, rate_limited, unavailable, error
    text: str = ""
    # Billed tokens: none for a refused or failed request.
    input_tokens: int = 0
    output_tokens: int = 0
    detail: str = ""  # a failure's reason as the server or the SDK gave it, for `prdigest llm check`
    retry_after: float | None = None  # a 429's Retry-After, in seconds, when it gave one


@dataclass(frozen=True)
class Attempt:
    """One request as the log keeps it."""

    rung: str
    prompt_hash: str
    outcome: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    repair: bool = False  # the request that sends an invalid answer back with its error
