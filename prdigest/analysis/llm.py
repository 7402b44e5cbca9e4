"""The LLM engine: per-PR analyses and the week's narrative from any OpenAI-compatible server.

The rules engine is the fallback: each PR the LLM fails on keeps its rules
analysis, and each report section the LLM fails on keeps the rules' version.
With an LLM answer, the judgement labels (``JUDGED_LABELS``) and the scores are
the model's; the rules' findings for those labels are only hints in its prompt,
and the rules keep the labels of facts the model cannot check (``FACT_LABELS``).
What the LLM returns is validated, clamped and made inert before anything keeps it:

* structured output ladder, per client: strict ``json_schema`` (OpenAI, vLLM,
  Ollama >= 0.5), then ``json_object`` where a server rejects that (DeepSeek),
  then a plain "JSON only" prompt; the first JSON object of the reply is parsed
  and validated by pydantic. The rung that worked is where the next call starts, and it is
  kept in the cache (``llm_rungs``) so that the next run starts there too.
* invalid output gets one repair request carrying the validation error.
* a risk label is kept only when its evidence quotes what the model was shown of
  the PR; a PR number in prose that is neither the PR, its related PRs nor a PR
  of the window is dropped; a week whose scores are all equal (or all 10) keeps
  the rules' scores.
* secrets are redacted from every message sent; PR text travels inside
  ``<untrusted_…>`` tags that the prompts call data, not instructions.
* each PR's prompt is built within a token budget by dropping whole lines, the
  least valuable first.
* every request is logged in ``llm_calls``; analyses are cached by content,
  model and prompt version, narratives and answers by request hash.

openai is imported only when a request is sent, so a report without an LLM never loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import posixpath
import re
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, model_validator

from prdigest.analysis.facts import clean_body
from prdigest.analysis.llm_settings import LLMSettings
from prdigest.analysis.report import enforce_citations
from prdigest.analysis.risk_rules import JUDGEMENT_LABELS
from prdigest.analysis.rules import RISK_RULES
from prdigest.analysis.taxonomy import is_test, known_tags, taxonomy_hash
from prdigest.config import Taxonomy
from prdigest.errors import PrdigestError
from prdigest.i18n import risk_name
from prdigest.models import (
    OPTIONAL_SIGNALS,
    FileChange,
    LLMUsage,
    PRAnalysis,
    PullRequest,
    Recommendation,
    Report,
    Review,
    ReviewThread,
    RiskLabel,
    RiskObservation,
    Theme,
)
from prdigest.prompts import Prompt, load_prompt
from prdigest.storage import Store, llm_log
from prdigest.storage.db import analysis_key

if TYPE_CHECKING:
    import openai

RUNGS = ("json_schema", "json_object", "prompt")
# Where a risk's evidence may come from: the keys of the report's source_* texts.
SOURCES = ("diff", "title", "body", "paths", "reviews", "checks", "labels")
LANGS = ("zh", "en")
MAX_TEXT = 1500  # characters of any one text an LLM returns
MAX_ITEMS = 8  # items of any one list an LLM returns
MAX_THEMES = 5
# Labels the model judges from the PR's text and diff (the rules' findings are hints to it) ...
JUDGED_LABELS = JUDGEMENT_LABELS
# ... and labels of facts it cannot check (reviews, checks, forks, core paths): the rules' alone.
FACT_LABELS = tuple(label for label in RISK_RULES if label not in JUDGED_LABELS)
# Scores that do not rank PRs: all equal over this many LLM analyses, or all 10 over two.
FLAT_SCORES_MIN = 3
RETRY_FAILED_AFTER = timedelta(hours=1)  # a PR's invalid or timed-out analysis is not asked again sooner
REPLY_ECHO = 4000  # characters of an invalid reply sent back with the repair request


class LLMError(PrdigestError):
    """The LLM gave no usable answer; the rules engine answers instead."""


class LLMUnavailable(LLMError):
    """The request failed: timeout, rate limit, server error, refused key, unreachable server."""

    def __init__(self, message: str, *, fatal: bool = False):
        super().__init__(message)
        # Fatal: no later request of this run can succeed (wrong key or model, server down).
        self.fatal = fatal


class LLMBadOutput(LLMError):
    """The answer stayed invalid after the repair request, or no rung of the ladder was accepted."""


# --- text going out: token estimate, redaction, the untrusted wrapper ----------------------


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` without a tokenizer: ceil(ASCII characters / 4) + 1 per other character.

    BPE tokenizers spend about four ASCII characters per token on English and code and
    about one token per CJK character; counting every other non-ASCII character (accents,
    emoji) as a whole token errs on the safe side.
    """
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // 4) + len(text) - ascii_chars


REDACTED = "[REDACTED]"
_SECRETS = (
    # A private key block; a diff excerpt may cut it before its END line.
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}"),  # Slack bot, user and app tokens
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/-]{16,}=*", re.I),
)
# scheme://user:password@ or scheme://token@
_URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@", re.I)
# password=..., "api_key": "...", DB_PASSWORD: ..., token = '...'
_ASSIGNED_SECRET = re.compile(
    r"(?i)\b([\w.-]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|token)\b[\"']?\s*[:=]\s*)"
    r"([\"']?)([^\s\"',;&]{4,})\2"
)


def redact(text: str) -> str:
    """``text`` with tokens, keys, passwords, private keys, JWTs and URL credentials replaced."""
    for pattern in _SECRETS:
        text = pattern.sub(REDACTED, text)
    text = _URL_CREDENTIALS.sub(rf"\1{REDACTED}@", text)
    return _ASSIGNED_SECRET.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}{m[2]}", text)


_WRAPPER_TAG = re.compile(r"<(\s*/?\s*untrusted_)", re.I)


def data_line(text: str) -> str:
    """A line of untrusted data as it goes into a prompt: redacted, unable to close its wrapper."""
    return _sealed(redact(text))


def _sealed(text: str) -> str:
    return _WRAPPER_TAG.sub(r"‹\1", text)


# --- text coming back: inert ---------------------------------------------------------------

_MARKUP = re.compile(r"</?[A-Za-z!@#][^<>\n]*>")  # <!channel> <@U1> <#C1> <at id=all> <a href> <img>
_BROADCAST = re.compile(r"(?<![\w.@])@+(?:(?:all|here|channel|everyone)\b|所有人)", re.I)
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>()\[\]\"'`]+|\bwww\.[^\s<>()\[\]\"'`]+", re.I)
_SPACES = re.compile(r"[ \t]{2,}")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # direction overrides that make text read otherwise


def inert(text: str, links: Iterable[str] = ()) -> str:
    """``text`` without mentions, markup, images, direction overrides and links, except ``links`` (ours)."""
    allowed = set(links)

    def link(match: re.Match[str]) -> str:
        url = match.group(0).rstrip(".,;:!?")
        return match.group(0) if url in allowed else match.group(0)[len(url) :]

    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    text = _BROADCAST.sub("", text)
    text = _URL.sub(link, text)
    text = _BIDI.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut after a sentence or a word when it must be cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind(". "), head.rfind("。"), head.rfind("\n"))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return (head[: cut + 1] if cut >= limit // 2 else head).rstrip() + "…"


# --- what an LLM may return ------------------------------------------------------------------


_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”|‘([^’\n]+)’|「([^」\n]+)」|'([^'\n]{4,})'")
_TOKEN = re.compile(r"--?[a-z][\w-]*|[\w][\w./:=+-]*\w", re.A | re.I)
# An identifier, option, path, version or constant, not a word: "--foo", "a_b", "x.py", "v0.5", "FSDP2".
_CODE_LIKE = re.compile(r"^--?\w|\w[_./:=+-]\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|^[A-Z_]{4,}$", re.A)
_WORDS = re.compile(r"\w+", re.A)
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_ELLIPSIS = re.compile(r"…|\.\.\.")
_MIN_TOKEN, _MIN_RUN, _RUN_WORDS, _CJK_RUN = 4, 12, 3, 6  # what makes a shared fragment substantial


@dataclass(frozen=True)
class Shown:
    """What the model was shown of one PR (title, description, file paths, diff lines): a risk's
    evidence must quote it. Quotes sit in prose of any language, so fragments are looked for:
    quoted text, identifiers and options, runs of words, runs of CJK characters."""

    text: str  # lowercased, whitespace collapsed
    words: str  # its ASCII words, space-separated and padded: " a b c "
    tests_touched: bool | None = None  # None: the file list is unknown

    @classmethod
    def of(cls, texts: Iterable[str], paths: list[str] | None) -> Shown:
        text = " ".join(" ".join(texts).lower().split())
        touched = None if paths is None else any(map(is_test, paths))
        return cls(text, f" {' '.join(_WORDS.findall(text))} ", touched)

    def supports(self, label: str, evidence: str) -> bool:
        if label == "no_tests" and self.tests_touched is False:
            return True  # an absence cannot be quoted: the file list confirms it
        return any(map(self._found, _fragments(evidence)))

    def _found(self, fragment: str) -> bool:
        fragment = " ".join(fragment.lower().split())
        if fragment in self.text:
            return True
        words = _WORDS.findall(fragment)
        return len(words) >= _RUN_WORDS and f" {' '.join(words)} " in self.words


def _fragments(evidence: str) -> Iterable[str]:
    """The substantial fragments of ``evidence`` that a quote of the PR would share with it."""
    quoted = [q for groups in _QUOTED.findall(evidence) for q in groups if q]
    for part in (p.strip(" ,;:()[]") for q in quoted for p in _ELLIPSIS.split(q)):
        if _substantial(part):
            yield part
    for token in _TOKEN.findall(evidence):
        if len(token) >= _MIN_TOKEN and _CODE_LIKE.search(token):
            yield token
    for run in _NOT_ASCII.split(evidence):  # runs of words: any three in a row
        words = _WORDS.findall(run)
        for i in range(len(words) - _RUN_WORDS + 1):
            window = words[i : i + _RUN_WORDS]
            if sum(map(len, window)) >= _MIN_RUN:
                yield " ".join(window)
    for run in _CJK.findall(evidence):
        yield from (run[i : i + _CJK_RUN] for i in range(len(run) - _CJK_RUN + 1))


def _substantial(fragment: str) -> bool:
    if sum(map(len, _CJK.findall(fragment))) >= _CJK_RUN:
        return True
    if len(fragment) >= _MIN_TOKEN and _CODE_LIKE.search(fragment):
        return True
    return len(fragment) >= _MIN_RUN and len(_WORDS.findall(fragment)) >= 2


_PR_REF = re.compile(
    r"(?P<sep>\s*(?:[,，、/]|\band\b|\bor\b|和|及|或)\s*)?"
    r"(?:[(（\[]\s*(?:PR\s*)?#(?P<a>\d+)\s*[)）\]]|(?:\b(?:PR|pull request)\s*)?#(?P<b>\d+)\b)",
    re.I,
)
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+(?=[,.;:!?，。；：！？、)）])")


def scrub_prs(text: str, keep: Container[int]) -> str:
    """``text`` without the PR numbers ("#12", "(#12)", "PR #12") that are not in ``keep``."""

    def drop(match: re.Match[str]) -> str:
        return match[0] if int(match["a"] or match["b"]) in keep else ""

    out = _PR_REF.sub(drop, text)
    return out if out == text else _SPACES.sub(" ", _SPACE_BEFORE_PUNCT.sub("", out)).strip()


@dataclass(frozen=True)
class Allowed:
    """What one LLM output may name; anything else is dropped by validation."""

    links: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    risk_labels: frozenset[str] = frozenset(RISK_RULES)
    prs: frozenset[int] | None = None  # None: any number (citations are checked against the window later)
    shown: Shown | None = None  # None: a risk's evidence is not checked against the PR


def _allowed(info: ValidationInfo) -> Allowed:
    return (info.context or {}).get("allowed") or Allowed()


def _score(value: Any) -> float:
    """0-10, clamped; a number in a string is read, anything else is an error to repair."""
    number = math.nan
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        with contextlib.suppress(ValueError):
            number = float(value)
    if math.isnan(number):
        raise ValueError("expected a number from 0 to 10")
    return round(max(0.0, min(10.0, number)), 1)


def _numbers(value: Any) -> list[int]:
    """PR numbers: 12, "12" or "#12"; anything else is dropped, repeats too."""
    items = value if isinstance(value, list) else [value]
    found = [int(m) for item in items for m in re.findall(r"\d+", str(item))[:1]]
    return list(dict.fromkeys(n for n in found if n > 0))


Score = Annotated[float, BeforeValidator(_score), Field(description="0-10")]
PRNumbers = Annotated[list[int], BeforeValidator(_numbers)]


class LLMOutput(BaseModel):
    """Base of what an LLM returns: tolerant in what it reads, trusting nothing it keeps.

    After validation every text is made inert and clipped, every list capped, and
    ``_check`` drops what ``Allowed`` does not allow.
    """

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="after")
    def _make_inert(self, info: ValidationInfo) -> Self:
        allowed = _allowed(info)
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, _clip(inert(value, allowed.links), MAX_TEXT))
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                texts = (_clip(inert(v, allowed.links), MAX_TEXT) for v in value)
                setattr(self, name, [v for v in texts if v][:MAX_ITEMS])
            elif isinstance(value, list) and all(isinstance(v, LLMOutput) for v in value):
                setattr(self, name, value[:MAX_ITEMS])
        self._check(allowed)
        return self

    def _check(self, allowed: Allowed) -> None:
        """Drop or reject what ``allowed`` does not allow (subclasses)."""


def _required(text: str, what: str) -> str:
    if not text:
        raise ValueError(f"{what} is empty")
    return text


def one_line(text: str, limit: int) -> str:
    return _clip(" ".join(text.split()), limit)


class RiskOut(LLMOutput):
    label: str
    evidence: str = Field(description="a short quote or fact from the data")
    evidence_source: str = Field(json_schema_extra={"enum": list(SOURCES)})


class PRAnalysisOut(LLMOutput):
    """One PR's analysis as the LLM writes it; ``to_analysis`` makes the PRAnalysis."""

    summary: str = Field(description="one line, at most 120 characters")
    explanation: str = Field(description="two to four sentences")
    importance: Score
    insight: Score
    tags: list[str] = []
    risks: list[RiskOut] = []
    watch: list[str] = []
    unresolved: list[str] = []
    related: PRNumbers = []

    def _check(self, allowed: Allowed) -> None:
        self.summary = _required(one_line(self.summary, 200), "summary")
        self.tags = [t for t in dict.fromkeys(self.tags) if t in allowed.tags]
        risks: dict[str, RiskOut] = {}  # one per label
        for r in self.risks:
            quoted = allowed.shown is None or allowed.shown.supports(r.label, r.evidence)
            if r.label in allowed.risk_labels and r.evidence_source in SOURCES and r.evidence and quoted:
                risks.setdefault(r.label, r)
        self.risks = list(risks.values())
        self.watch = self.watch[:3]
        self.related = [n for n in self.related if allowed.prs is None or n in allowed.prs]

    def to_analysis(self, pr: PullRequest, model: str, version: str) -> PRAnalysis:
        """The LLM's own PRAnalysis, as cached; ``with_rules`` adds the rules' facts when it is used."""
        assert pr.number is not None
        return PRAnalysis(
            repo=pr.repo,
            number=pr.number,
            summary=self.summary,
            explanation=self.explanation,
            importance=self.importance,
            insight=self.insight,
            tags=self.tags,
            risks=[
                RiskLabel(label=r.label, evidence=r.evidence, evidence_source=r.evidence_source)
                for r in self.risks
            ],
            watch=self.watch,
            unresolved=self.unresolved,
            related=list(dict.fromkeys([*pr.related, *self.related])),
            engine="llm",
            model=model,
            version=version,
        )


class ThemeOut(LLMOutput):
    title: str
    prs: PRNumbers
    story: str
    trend: str = ""
    representative: PRNumbers = []


class ObservationOut(LLMOutput):
    title: str
    label: str = ""
    prs: PRNumbers
    evidence: str


class RecommendationOut(LLMOutput):
    text: str
    prs: PRNumbers


class NarrativeOut(LLMOutput):
    """The week's narrative as the LLM writes it; citations are checked by ``enforce_citations``."""

    summary: str = Field(description="the executive judgement, two to four sentences")
    themes: list[ThemeOut] = []
    risks: list[ObservationOut] = []
    recommendations: list[RecommendationOut] = []

    def _check(self, allowed: Allowed) -> None:
        self.summary = _required(self.summary, "summary")
        self.themes = [t for t in self.themes if t.title and t.story][:MAX_THEMES]
        for obs in self.risks:
            obs.label = obs.label if obs.label in allowed.risk_labels else ""
        self.risks = [o for o in self.risks if o.title]
        self.recommendations = [r for r in self.recommendations if r.text]


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as strict structured output wants it: closed objects, all required."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("default", None)
            if "properties" in node:
                node.pop("description", None)  # a class docstring: written for us, not for the model
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
                for prop in node["properties"].values():
                    walk(prop)
            for child in [*node.get("$defs", {}).values(), node.get("items"), *node.get("anyOf", [])]:
                walk(child)

    schema = model.model_json_schema()
    walk(schema)
    return schema


def first_json_object(text: str) -> Any:
    """The first JSON object in ``text``: servers that ignore the schema wrap it in prose or fences."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("the reply holds no JSON object")


# --- one structured call, and the client that climbs the ladder ---------------------------------


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

    def parse(self, text: str) -> LLMOutput:
        return self.schema.model_validate(first_json_object(text), context={"allowed": self.allowed})


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


_MESSAGE_OVERHEAD = 8  # tokens a chat template adds around each message, roughly


def evidence_budget(prompt: Prompt, budget: int, **variables: Any) -> int:
    """Tokens left for the evidence once the prompt's own text (and the JSON-only rung's) is counted."""
    fixed = (
        prompt.render("system", evidence="", **variables)
        + prompt.render("user", evidence="", **variables)
        + load_prompt("common", prompt.lang).render("json_only")
    )
    return max(budget - estimate_tokens(fixed) - 3 * _MESSAGE_OVERHEAD, 0)


@dataclass(frozen=True)
class Exchange:
    """What one request returned: ok with the reply's text, or why it failed."""

    outcome: str  # ok, rejected, timeout, rate_limited, unavailable, error
    text: str = ""
    # Billed tokens: none for a refused or failed request.
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Attempt:
    """One request as the log keeps it."""

    rung: str
    prompt_hash: str
    outcome: str
    input_tokens: int
    output_tokens: int
    latency_ms: int


_FATAL = {"unavailable"}


class LLMClient:
    """One OpenAI-compatible endpoint; remembers the rung of the ladder its server honours.

    Keep one per endpoint for the life of the process (the bot): later calls then
    start at the rung that worked. Thread-safe; the SDK client is made on first use.
    """

    def __init__(self, settings: LLMSettings):
        self.settings = settings
        self.start = 0  # index into RUNGS
        self._lock = threading.Lock()
        self._sdk: openai.OpenAI | None = None

    @property
    def rung(self) -> str:
        return RUNGS[self.start]

    def complete(self, call: Call, record: Callable[[Attempt], None]) -> LLMOutput:
        """The validated answer to ``call``; every request sent is passed to ``record``."""
        messages = list(call.messages)
        rung = self.start
        repaired = False
        while True:
            sent = self._messages(messages, RUNGS[rung], call.lang)
            started = time.monotonic()
            reply = self._send(sent, RUNGS[rung], call.schema)
            outcome, result, error = self._judge(reply, call)
            record(
                Attempt(
                    rung=RUNGS[rung],
                    prompt_hash=_hash(sent),
                    outcome=outcome,
                    input_tokens=reply.input_tokens,
                    output_tokens=reply.output_tokens,
                    latency_ms=round((time.monotonic() - started) * 1000),
                )
            )
            if result is not None:
                self.start = rung
                return result
            if outcome in ("rejected", "blank"):
                if rung + 1 == len(RUNGS):
                    raise LLMBadOutput(f"{call.subject}: the server accepted no way of asking for JSON")
                rung += 1
            elif outcome == "invalid" and not repaired:
                repaired = True
                repair = load_prompt("common", call.lang).render("repair", error=error)
                messages = [
                    *call.messages,
                    {"role": "assistant", "content": reply.text[:REPLY_ECHO]},
                    {"role": "user", "content": repair},
                ]
            elif outcome == "invalid":
                raise LLMBadOutput(f"{call.subject}: the answer stayed invalid after a repair: {error}")
            else:
                raise LLMUnavailable(f"{call.subject}: {outcome}", fatal=outcome in _FATAL)

    @staticmethod
    def _judge(reply: Exchange, call: Call) -> tuple[str, LLMOutput | None, str]:
        """(outcome, the validated answer or None, the error to send back for repair)."""
        if reply.outcome != "ok":
            return reply.outcome, None, ""
        if not reply.text.strip():
            return "blank", None, ""
        try:
            return "ok", call.parse(reply.text), ""
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            return "invalid", None, _describe(exc)

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

    def _send(self, messages: list[dict[str, str]], rung: str, schema: type[LLMOutput]) -> Exchange:
        import openai

        options: dict[str, Any] = {}
        if rung == "json_schema":
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": strict_schema(schema), "strict": True},
            }
        elif rung == "json_object":
            options["response_format"] = {"type": "json_object"}
        try:
            completion = self._client().chat.completions.create(
                model=self.settings.model, messages=messages, **options
            )
        except openai.APITimeoutError:
            return Exchange("timeout")
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            # The server refuses this request's shape: on a format rung, the format.
            return Exchange("rejected")
        except openai.RateLimitError:
            return Exchange("rate_limited")
        except (
            openai.AuthenticationError,
            openai.PermissionDeniedError,
            openai.NotFoundError,  # no such model, or a base URL without the API
            openai.APIConnectionError,
        ):
            return Exchange("unavailable")
        except openai.OpenAIError:
            return Exchange("error")
        text = (completion.choices[0].message.content or "") if completion.choices else ""
        usage = completion.usage  # some servers send none: then estimate what was billed
        return Exchange(
            "ok",
            text,
            usage.prompt_tokens if usage else sum(estimate_tokens(m["content"]) for m in messages),
            usage.completion_tokens if usage else estimate_tokens(text),
        )


def sdk_client(settings: LLMSettings) -> openai.OpenAI:
    import openai

    key = settings.api_key
    return openai.OpenAI(
        base_url=settings.base_url,
        # The SDK refuses an empty key; local servers take any.
        api_key=key.get_secret_value() if key else "unused",
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )


def tool_call(
    settings: LLMSettings, messages: list[dict[str, str]], tools: list[dict[str, Any]]
) -> tuple[str, str] | None:
    """The first tool the model calls, as (name, JSON arguments); None when it calls none or fails."""
    import openai

    try:
        completion = sdk_client(settings).chat.completions.create(
            model=settings.model,
            messages=[{**m, "content": redact(m["content"])} for m in messages],
            tools=tools,
        )
    except openai.OpenAIError:
        return None
    calls = (completion.choices[0].message.tool_calls or []) if completion.choices else []
    function = getattr(calls[0], "function", None) if calls else None
    return (function.name, function.arguments or "{}") if function is not None else None


def _describe(exc: ValueError) -> str:
    """A validation error in a few lines the model can act on (never the whole input echoed)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc)
    lines = [
        f"{'.'.join(str(p) for p in e['loc']) or '(object)'}: {e['msg']}"
        for e in errors(include_url=False, include_input=False)
    ]
    return "; ".join(lines[:10])


def _hash(messages: Sequence[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()[:16]


# --- the evidence a prompt carries, within its budget --------------------------------------------


@dataclass
class Section:
    """Evidence lines under a heading, most valuable first.

    ``value`` orders the trimming (the lowest goes first); ``keep`` lines survive the
    first pass, so every section keeps its head before any loses it.
    """

    title: str
    lines: list[str]
    value: int
    keep: int = 0
    omitted: int = 0


_MARKER_TOKENS = 12  # "[… N lines left out]"


def _cost(line: str) -> int:
    return estimate_tokens(line) + 1  # and its newline


def fit(header: list[str], sections: list[Section], budget: int) -> str:
    """The evidence as text of at most ``budget`` tokens: whole lines dropped, least valuable first.

    The header is never dropped. Trims ``sections`` in place.
    """
    sections = [s for s in sections if s.lines or s.omitted]
    costs = {id(s): [_cost(line) for line in s.lines] for s in sections}
    total = sum(map(_cost, header)) + sum(
        _cost(s.title) + sum(costs[id(s)]) + (_MARKER_TOKENS if s.omitted else 0) for s in sections
    )
    for first_pass in (True, False):
        for s in sorted(sections, key=lambda s: s.value):
            floor = s.keep if first_pass else 0
            while total > budget and len(s.lines) > floor:
                if not s.omitted:
                    total += _MARKER_TOKENS
                total -= costs[id(s)].pop()
                s.lines.pop()
                s.omitted += 1
    out = list(header)
    for s in sections:
        out += ["", f"## {s.title}", *s.lines]
        if s.omitted:
            out.append(f"[… {s.omitted} more lines left out]")
    return "\n".join(out)


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")


def _head(text: str, chars: int) -> tuple[str, int]:
    """The whole lines (or sentences) of ``text`` within ``chars`` characters, and how many lines are left.

    A budget of B tokens holds at most 4 * B characters, so a huge body or diff is cut to
    that first: redaction and fitting then work on what can be sent, not on megabytes.
    """
    if len(text) <= chars:
        return text, 0
    cut = max(text.rfind("\n", 0, chars), text.rfind(". ", 0, chars) + 1, text.rfind("。", 0, chars) + 1, 0)
    return text[:cut], text.count("\n", cut) + 1


def _units(text: str, limit: int = 400) -> list[str]:
    """The non-blank lines of ``text``; a long line split into sentences, so trimming drops whole ones.

    Redacted as a whole (a private key block spans lines), then sealed line by line.
    """
    out: list[str] = []
    for line in redact(text).splitlines():
        if len(line) <= limit:
            out.append(line)
        else:
            out += _SENTENCE_END.split(line)
    return [_sealed(u) for u in out if u.strip()]


def lead(text: str, limit: int = 300) -> str:
    """The first whole sentences of ``text`` within ``limit`` characters."""
    text = " ".join(text.split())
    out = ""
    for sentence in _SENTENCE_END.split(text):
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return _clip(out, limit)


def pr_evidence(pr: PullRequest, budget: int, diff: str | None, related: dict[int, str]) -> str:
    """What the LLM reads about one PR, within ``budget`` tokens; ``related`` maps numbers to titles."""
    return fit(*pr_sections(pr, budget, diff, related), budget)


def shown_of(pr: PullRequest, sections: list[Section]) -> Shown:
    """Where the risk evidence of ``pr`` must be found: its title, file paths, and the description and
    diff lines of ``sections`` that ``fit`` kept."""
    kept = [line for s in sections if s.title in ("Description", "Diff excerpt") for line in s.lines]
    paths = [f.path for f in pr.files] if pr.files is not None else None
    return Shown.of([pr.title, *(paths or []), *kept], paths)


def pr_sections(
    pr: PullRequest, budget: int, diff: str | None, related: dict[int, str]
) -> tuple[list[str], list[Section]]:
    """The header and the sections of a PR's evidence, before ``fit`` trims them to ``budget``."""
    header = [
        f"PR #{pr.number}: {one_line(pr.title, 300)}",
        f"author: {pr.author}"
        + (f" ({pr.author_association})" if pr.author_association else "")
        + f" · merged {pr.merged_at:%Y-%m-%d}"
        + (f" into {pr.base_branch}" if pr.base_branch else ""),
        f"size: +{pr.additions}/-{pr.deletions}"
        + (f" in {len(pr.files)} files" if pr.files is not None else "")
        + (f", {pr.commits} commits" if pr.commits is not None else ""),
    ]
    if pr.labels is not None:
        header.append(f"labels: {', '.join(pr.labels) or 'none'}")
    if pr.checks is not None:
        failing = f" (failing: {', '.join(pr.checks.failing[:5])})" if pr.checks.failing else ""
        header.append(f"checks: {pr.checks.state}{failing}")
    if pr.is_fork:
        header.append("opened from a fork")
    unknown = [s for s in OPTIONAL_SIGNALS if getattr(pr, s) is None and s != "diff_excerpt"]
    if unknown:
        header.append(f"not supplied by the source (unknown, not none): {', '.join(unknown)}")
    threads = pr.review_threads or []
    open_threads = [th for th in threads if not th.is_resolved and not th.is_outdated]
    # A body or diff is cut to what could fit first (template cleaning reads at most twice that).
    body, body_left = _head(clean_body(_head(pr.body, 8 * budget)[0]), 4 * budget)
    diff, diff_left = _head(diff or "", 4 * budget)
    reviews = sorted(pr.reviews or [], key=lambda r: r.is_bot)  # people first
    sections = [
        Section("Description", _units(body), value=6, keep=10, omitted=body_left),
        Section("Reviews", _data([_review_line(r) for r in reviews]), value=7, keep=4),
        Section(
            "Unresolved review threads", _data([_thread_line(th) for th in open_threads]), value=7, keep=3
        ),
        Section(
            "Related pull requests", _data([f"#{n}: {t}" if t else f"#{n}" for n, t in related.items()]), 5
        ),
        Section("Files by directory", _data(_directory_lines(pr.files or [])), value=4, keep=5),
        Section("Diff excerpt", _diff_lines(diff), value=3, keep=40, omitted=diff_left),
        Section(
            "Resolved review threads",
            _data([_thread_line(th) for th in threads if th not in open_threads]),
            2,
        ),
        Section(
            "Comments", _data([f"{c.author}: {lead(c.body)}" for c in pr.comments or [] if not c.is_bot]), 1
        ),
    ]
    return _data(header), sections


def _data(lines: list[str]) -> list[str]:
    return [data_line(line) for line in lines]


def _review_line(review: Review) -> str:
    who = f"{review.author} (bot)" if review.is_bot else review.author
    return f"{who}: {review.state}" + (f": {lead(review.body)}" if review.body.strip() else "")


def _thread_line(thread: ReviewThread) -> str:
    return f"{thread.path or '-'} ({thread.author or '?'}): {lead(thread.body)}"


def _directory_lines(files: list[FileChange]) -> list[str]:
    """One line per directory, most churn first: its file count, churn and largest files."""
    by_dir: dict[str, list[FileChange]] = defaultdict(list)
    for f in files:
        by_dir[posixpath.dirname(f.path) or "."].append(f)

    def churn(f: FileChange) -> int:
        return (f.additions or 0) + (f.deletions or 0)

    lines = []
    for directory, group in sorted(by_dir.items(), key=lambda kv: -sum(map(churn, kv[1]))):
        group.sort(key=churn, reverse=True)
        names = [
            posixpath.basename(f.path)
            + (" (binary)" if f.binary else "")
            + (f" ({f.status})" if f.status != "modified" else "")
            for f in group[:6]
        ]
        more = f" and {len(group) - 6} more" if len(group) > 6 else ""
        added = sum(f.additions or 0 for f in group)
        deleted = sum(f.deletions or 0 for f in group)
        count = f"{len(group)} file" + ("s" if len(group) > 1 else "")
        lines.append(f"{directory}/: {count}, +{added}/-{deleted}: {', '.join(names)}{more}")
    return lines


_LONG_LINE = 400


def _diff_lines(diff: str) -> list[str]:
    """The diff's lines; a generated or minified line is named, not copied."""
    return [
        _sealed(line) if len(line) <= _LONG_LINE else f"{line[:1]}[a {len(line)}-character line left out]"
        for line in redact(diff).splitlines()
        if line.strip()
    ]


# --- the engine --------------------------------------------------------------------------------


DiffLoader = Callable[[PullRequest], str | None]


class LLMEngine:
    """One run's use of the LLM (a report, a question): its calls are logged under one run id."""

    def __init__(self, settings: LLMSettings, store: Store, client: LLMClient | None = None):
        self.settings = settings
        self.store = store
        self.client = client or LLMClient(settings)
        # Where earlier runs found this endpoint's rung: a fresh client starts there.
        self._endpoint = settings.base_url or "https://api.openai.com/v1"
        self._stored_rung = llm_log.known_rung(store, self._endpoint, settings.model)
        if client is None and self._stored_rung in RUNGS:
            self.client.start = RUNGS.index(self._stored_rung)
        self.run_id = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._halted = ""  # why no more requests are sent in this run
        self._narrative: Literal["llm", "rules"] | None = None

    # --- calls ----------------------------------------------------------------------------

    def complete(self, call: Call, *, cache: bool = False) -> LLMOutput:
        """The validated answer; with ``cache``, an equal request made before costs nothing."""
        key = _hash([{"model": self.settings.model, "version": call.version}, *call.messages])
        if cache and (data := llm_log.get_output(self.store, key)) is not None:
            try:
                return call.parse(data)
            except ValueError:
                pass  # kept by an older release whose validation let it through: ask again
        if self._halted:
            raise LLMUnavailable(self._halted, fatal=True)
        try:
            result = self.client.complete(call, lambda attempt: self._record(call, attempt))
        except LLMUnavailable as exc:
            if exc.fatal:
                self._halted = str(exc)
            raise
        self._remember_rung()
        if cache:
            llm_log.put_output(
                self.store, key, call.purpose, self.settings.model, call.version, result.model_dump_json()
            )
        return result

    def _remember_rung(self) -> None:
        rung = self.client.rung
        with self._lock:
            if rung == self._stored_rung:
                return
            self._stored_rung = rung
        llm_log.remember_rung(self.store, self._endpoint, self.settings.model, rung)

    def _record(self, call: Call, attempt: Attempt) -> None:
        llm_log.record_call(
            self.store,
            llm_log.LLMCall(
                run_id=self.run_id,
                purpose=call.purpose,
                subject=call.subject,
                model=self.settings.model,
                prompt_version=call.version,
                prompt_hash=attempt.prompt_hash,
                rung=attempt.rung,
                input_tokens=attempt.input_tokens,
                output_tokens=attempt.output_tokens,
                latency_ms=attempt.latency_ms,
                outcome=attempt.outcome,
            ),
        )

    def usage(self) -> LLMUsage:
        totals = llm_log.run_totals(self.store, self.run_id)
        return LLMUsage(
            model=self.settings.model,
            calls=totals.calls,
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            analysed=self._counts["llm"],
            cached=self._counts["cached"],
            fallback=self._counts["fallback"],
            narrative=self._narrative,
        )

    def _count(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1

    # --- per-PR analyses ------------------------------------------------------------------

    @staticmethod
    def analysis_version(taxonomy: Taxonomy, lang: str) -> str:
        """The prompt's version and the taxonomy's hash: a change to either means a new analysis."""
        return f"analyse_pr-{load_prompt('analyse_pr', _lang(lang)).version}+{taxonomy_hash(taxonomy)}"

    def analyse(
        self,
        prs: Iterable[PullRequest],
        rules: dict[int, PRAnalysis],
        taxonomy: Taxonomy,
        lang: str,
        diff_loader: DiffLoader | None = None,
    ) -> dict[int, PRAnalysis]:
        """Each PR's LLM analysis, from the cache or one call per PR in parallel; ``rules[n]`` where it fails.

        ``rules`` holds the rules engine's analysis of every PR (its fallback, and the source of
        its factual risk labels). ``diff_loader`` supplies the diff of a PR that carries none; it is
        called from the worker threads, one call at a time. ``prs`` is the window: the PRs an
        analysis's prose may name.
        """
        version = self.analysis_version(taxonomy, lang)
        numbered = [pr for pr in prs if pr.number is not None]
        raw: dict[int, PRAnalysis] = {}  # the LLM's own analyses, as cached
        how: dict[int, str] = {}  # cached, llm or fallback: for the usage counts
        todo: list[PullRequest] = []
        for pr in numbered:
            key = analysis_key(
                pr.repo, pr.number, pr.content_hash(), "llm", self.settings.model, version, lang
            )
            cached = self.store.get_analysis(key)
            if cached is not None:
                raw[pr.number], how[pr.number] = cached, "cached"
            else:
                todo.append(pr)
        # A PR whose output stayed invalid, or that timed out, within the hour falls back at once:
        # chat commands rebuild reports, and must neither wait for it nor pay for it again.
        failed = llm_log.recent_failures(
            self.store,
            [pr.uid for pr in todo],
            self.settings.model,
            version,
            datetime.now(UTC) - RETRY_FAILED_AFTER,
        )
        todo = [pr for pr in todo if pr.uid not in failed]
        diff = _serialised(diff_loader)
        with ThreadPoolExecutor(self.settings.concurrency, thread_name_prefix="prdigest-llm") as pool:
            done = pool.map(
                lambda pr: self._analyse_one(pr, rules[pr.number], taxonomy, lang, version, diff), todo
            )
            for pr, analysis in zip(todo, done, strict=True):
                if analysis is not None:
                    raw[pr.number], how[pr.number] = analysis, "llm"
        window = {pr.number for pr in numbered}
        out = {n: with_rules(a, rules[n], window) for n, a in raw.items()}
        if flat_scores(list(out.values())):
            # Scores that rank nothing are invalid output: the rules' scores stand for every PR.
            out = {n: with_rules_scores(a, rules[n]) for n, a in out.items()}
            how = dict.fromkeys(how, "fallback")
        for pr in numbered:
            self._count(how.get(pr.number, "fallback"))
        return {pr.number: out.get(pr.number, rules[pr.number]) for pr in numbered}

    def _analyse_one(
        self,
        pr: PullRequest,
        rules: PRAnalysis,
        taxonomy: Taxonomy,
        lang: str,
        version: str,
        diff: DiffLoader,
    ) -> PRAnalysis | None:
        """The LLM's own analysis of ``pr`` (cached), or None where it failed."""
        try:
            call = self._pr_call(pr, rules, taxonomy, lang, version, diff)
            result = self.complete(call)
        except LLMError:
            return None
        assert isinstance(result, PRAnalysisOut)
        analysis = result.to_analysis(pr, self.settings.model, version)
        self.store.put_analysis(pr, analysis, lang)
        return analysis

    def _pr_call(
        self,
        pr: PullRequest,
        rules: PRAnalysis,
        taxonomy: Taxonomy,
        lang: str,
        version: str,
        diff: DiffLoader,
    ) -> Call:
        prompt = load_prompt("analyse_pr", _lang(lang))
        tags = known_tags(taxonomy)
        variables = {
            "repo": pr.repo,
            "tags": tags,
            "sources": SOURCES,
            # The rules' findings for the judged labels: hints to confirm or reject, never findings.
            "hints": [
                data_line(f"{r.label}: {one_line(r.evidence, 300)} ({r.evidence_source})")
                for r in rules.risks
                if r.label in JUDGED_LABELS
            ],
        }
        related = {n: self._title(pr.repo, n) for n in pr.related}
        budget = evidence_budget(prompt, self.settings.input_budget_tokens, **variables)
        header, sections = pr_sections(
            pr, budget, pr.diff_excerpt if pr.diff_excerpt is not None else diff(pr), related
        )
        evidence = fit(header, sections, budget)
        # The PRs it may call related: its own references, and any "#N" its text names.
        named = {int(n) for n in re.findall(r"#(\d+)", f"{pr.title}\n{pr.body}")}
        allowed = Allowed(
            links=frozenset(filter(None, [pr.url])),
            tags=frozenset(tags),
            risk_labels=frozenset(JUDGED_LABELS),
            prs=frozenset(named | set(pr.related)) - {pr.number or 0},
            shown=shown_of(pr, sections),
        )
        return make_call(
            prompt,
            purpose="analyse_pr",
            subject=pr.uid,
            version=version,
            schema=PRAnalysisOut,
            allowed=allowed,
            evidence=evidence,
            **variables,
        )

    def _title(self, repo: str, number: int) -> str:
        cached = self.store.get_pr(repo, number)
        return one_line(cached.title, 200) if cached else ""

    # --- the week's narrative -------------------------------------------------------------

    def narrate(self, report: Report, analyses: dict[int, PRAnalysis]) -> Report:
        """The report with the LLM's summary, themes, risk observations and recommendations.

        Figures are left as computed. Citations outside the window are dropped; a section the
        LLM leaves empty, or a narrative still invalid after its repair, keeps the rules' version.
        """
        if not report.prs:
            return report
        try:
            result = self.complete(self._narrative_call(report, analyses), cache=True)
        except LLMError:
            self._narrative = "rules"
            return report
        assert isinstance(result, NarrativeOut)
        self._narrative = "llm"
        return apply_narrative(report, result)

    def _narrative_call(self, report: Report, analyses: dict[int, PRAnalysis]) -> Call:
        prompt = load_prompt("narrate", _lang(report.lang))
        variables = {
            "repo": report.repo,
            "since": report.window.since,
            "until": report.window.until,
            "risk_labels": {label: risk_name(label, prompt.lang) for label in RISK_RULES},
        }
        budget = evidence_budget(prompt, self.settings.input_budget_tokens, **variables)
        return make_call(
            prompt,
            purpose="narrate",
            subject=f"{report.repo} {report.window.since}..{report.window.until}",
            version=f"narrate-{prompt.version}",
            schema=NarrativeOut,
            allowed=Allowed(links=frozenset(p.url for p in report.prs if p.url)),
            evidence=week_evidence(report, analyses, budget),
            **variables,
        )


def with_rules(analysis: PRAnalysis, rules: PRAnalysis, window: Iterable[int]) -> PRAnalysis:
    """The LLM's analysis as a report uses it: its judged labels, the rules' fact labels, the rules'
    tags where it named none, and no PR number in its prose outside the PR, its related PRs and ``window``.

    Merged on use, not in the cache: a new rules engine changes the facts without a new LLM call.
    """
    keep = {*window, analysis.number, *analysis.related}
    # A label the model confirms keeps what the rules' evidence showed: users break (RiskLabel.breaks).
    breaking = {r.label for r in rules.risks if r.breaks}
    judged = [  # caches of older prompts had more labels
        r.model_copy(update={"breaks": r.breaks or r.label in breaking})
        for r in analysis.risks
        if r.label in JUDGED_LABELS
    ]
    facts = [r for r in rules.risks if r.label in FACT_LABELS]
    return analysis.model_copy(
        update={
            "summary": scrub_prs(analysis.summary, keep),
            "explanation": scrub_prs(analysis.explanation, keep),
            "watch": [t for t in (scrub_prs(w, keep) for w in analysis.watch) if t],
            "unresolved": [t for t in (scrub_prs(u, keep) for u in analysis.unresolved) if t],
            "risks": [
                r.model_copy(update={"evidence": scrub_prs(r.evidence, keep)}) for r in [*judged, *facts]
            ],
            "tags": analysis.tags or rules.tags,
        }
    )


def flat_scores(analyses: Sequence[PRAnalysis]) -> bool:
    """Whether the LLM's scores rank nothing: every LLM analysis got the same importance or the same
    insight (over ``FLAT_SCORES_MIN`` of them), or all got 10 (over two)."""
    llm = [a for a in analyses if a.engine == "llm"]
    for score in ("importance", "insight"):
        values = {getattr(a, score) for a in llm}
        if len(values) == 1 and (len(llm) >= FLAT_SCORES_MIN or (len(llm) >= 2 and values == {10.0})):
            return True
    return False


def with_rules_scores(analysis: PRAnalysis, rules: PRAnalysis) -> PRAnalysis:
    """The analysis with the rules' importance and insight, and their reasons."""
    return analysis.model_copy(
        update={"importance": rules.importance, "insight": rules.insight, "reasons": rules.reasons}
    )


def week_evidence(report: Report, analyses: dict[int, PRAnalysis], budget: int) -> str:
    """One line per analysed PR in merge order; over budget, the least important PRs are left out."""
    lines: dict[int, str] = {}
    for p in report.prs:
        a = analyses.get(p.number)
        if a is None:
            continue
        line = f"#{p.number} merged {p.merged_at:%m-%d} by {p.author} · importance {a.importance:g}"
        line += f" · insight {a.insight:g} · tags: {', '.join(a.tags) or '-'} · {a.summary}"
        if a.risks:
            line += " · risks: " + "; ".join(f"{r.label}: {r.evidence}" for r in a.risks[:4])
        if a.watch:
            line += " · watch: " + "; ".join(a.watch[:2])
        lines[p.number] = data_line(" ".join(line.split()))
    ranked = sorted(lines, key=lambda n: (-analyses[n].importance, n))
    section = Section("Pull requests, most important first", [lines[n] for n in ranked], value=1, keep=0)
    fit([], [section], budget)
    kept = set(ranked[: len(section.lines)])
    in_merge_order = [line for n, line in lines.items() if n in kept]
    missing = f"[… {section.omitted} less important pull requests left out]" if section.omitted else ""
    return "\n".join([f"Pull requests in merge order ({report.repo}):", *in_merge_order, missing]).strip()


def apply_narrative(report: Report, narrative: NarrativeOut) -> Report:
    """A copy of the report with the narrative's sections, cited in merge order and checked."""
    position = {p.number: i for i, p in enumerate(report.prs)}

    def ordered(numbers: list[int]) -> list[int]:
        # Numbers outside the window sort last; enforce_citations drops them.
        return sorted(dict.fromkeys(numbers), key=lambda n: position.get(n, len(position)))

    # Prose may name the window's PRs and their own references, nothing else.
    keep = {n for p in report.prs for n in (p.number, *p.related)}

    def prose(text: str) -> str:
        return scrub_prs(text, keep)

    out = report.model_copy(deep=True)
    out.summary = prose(narrative.summary)
    out.themes = [
        Theme(
            title=prose(t.title),
            prs=ordered(t.prs),
            story=prose(t.story),
            trend=prose(t.trend),
            representative=[n for n in t.representative if n in t.prs],
        )
        for t in narrative.themes
    ]
    out.risk_observations = [
        RiskObservation(title=prose(o.title), label=o.label, prs=ordered(o.prs), evidence=prose(o.evidence))
        for o in narrative.risks
    ]
    out.recommendations = [
        Recommendation(text=prose(r.text), prs=ordered(r.prs)) for r in narrative.recommendations
    ]
    enforce_citations(out)
    for section in ("themes", "risk_observations", "recommendations"):
        if not getattr(out, section):
            setattr(out, section, getattr(report, section))
    return out


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


def _serialised(loader: DiffLoader | None) -> DiffLoader:
    """``loader`` called one at a time (a source client need not be thread-safe); its errors mean no diff."""
    lock = threading.Lock()

    def load(pr: PullRequest) -> str | None:
        if loader is None:
            return None
        with lock:
            try:
                return loader(pr)
            except PrdigestError:
                return None

    return load
