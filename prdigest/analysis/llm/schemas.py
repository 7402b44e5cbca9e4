"""What an LLM may return: pydantic models tolerant in what they read, trusting nothing they keep."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, model_validator

from prdigest import LANGS
from prdigest.analysis.llm.safety import Shown, clip, inert, one_line
from prdigest.analysis.risks.rules import JUDGEMENT_LABELS
from prdigest.analysis.rules import RISK_RULES
from prdigest.models import PRAnalysis, PullRequest, RiskLabel

# Where a risk's evidence may come from: the keys of the report's source_* texts.
SOURCES = ("diff", "title", "body", "paths", "reviews", "checks", "labels")
MAX_TEXT = 1500  # characters of any one text an LLM returns
MAX_ITEMS = 8  # items of any one list an LLM returns
MAX_THEMES = 5
# What a reply may be: at most this many characters per token it was allowed (a token of a run of
# spaces or digits stands for several), nesting no deeper than prdigest's deepest schema (4) needs.
CHARS_PER_TOKEN = 16
MAX_DEPTH = 16
MAX_STARTS = 16  # braces of a reply where a JSON object is looked for
_TOO_DEEP = f"the reply nests lists and objects deeper than {MAX_DEPTH}"
# Labels the model judges from the PR's text and diff (the rules' findings are hints to it) ...
JUDGED_LABELS = JUDGEMENT_LABELS
# ... and labels of facts it cannot check (reviews, checks, forks, core paths): the rules' alone.
FACT_LABELS = tuple(label for label in RISK_RULES if label not in JUDGED_LABELS)


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
                setattr(self, name, clip(inert(value, allowed.links), MAX_TEXT))
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                texts = (clip(inert(v, allowed.links), MAX_TEXT) for v in value)
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


class RiskOut(LLMOutput):
    label: str
    evidence: str = Field(description="a short quote or fact from the data")
    evidence_source: str = Field(json_schema_extra={"enum": list(SOURCES)})


class PRAnalysisOut(LLMOutput):
    """One PR's analysis as the LLM writes it; ``to_analysis`` makes the PRAnalysis."""

    summary: str = Field(description="one line, at most 120 characters")
    # The summary in the other report language: a report in it tells the PR without a second analysis.
    summary_translated: str = Field(default="", description="the summary in the other language")
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
        self.summary_translated = one_line(self.summary_translated, 200)
        self.tags = [t for t in dict.fromkeys(self.tags) if t in allowed.tags]
        risks: dict[str, RiskOut] = {}  # one per label
        for r in self.risks:
            quoted = allowed.shown is None or allowed.shown.supports(r.label, r.evidence)
            if r.label in allowed.risk_labels and r.evidence_source in SOURCES and r.evidence and quoted:
                risks.setdefault(r.label, r)
        self.risks = list(risks.values())
        self.watch = self.watch[:3]
        self.related = [n for n in self.related if allowed.prs is None or n in allowed.prs]

    def to_analysis(self, pr: PullRequest, model: str, version: str, lang: str) -> PRAnalysis:
        """The LLM's own PRAnalysis written in ``lang``, as cached; ``with_rules`` adds the rules' facts
        (and tells it in the report's language) when it is used."""
        assert pr.number is not None
        other = [o for o in LANGS if o != lang]
        return PRAnalysis(
            repo=pr.repo,
            number=pr.number,
            summary=self.summary,
            lang=lang,
            translations={other[0]: self.summary_translated} if other and self.summary_translated else {},
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


class FollowupVerdict(LLMOutput):
    """Which of one risk's candidate later PRs address it."""

    item: int
    addressed_by: list[int] = []
    reason: str = Field(default="", description="one sentence")


class FollowupOut(LLMOutput):
    """The model's verdict on each risk item of a follow-up request, from the PRs' evidence."""

    items: list[FollowupVerdict]


@functools.cache
def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as strict structured output wants it: closed objects, all required. Made
    once per model (pydantic's schema generation cost more CPU than the request), so never to be changed
    by a caller."""

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


def describe_error(exc: ValueError) -> str:
    """A validation error in a few lines the model can act on (never the whole input echoed)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc)
    lines = [
        f"{'.'.join(str(p) for p in e['loc']) or '(object)'}: {e['msg']}"
        for e in errors(include_url=False, include_input=False)
    ]
    return "; ".join(lines[:10])


def json_value(text: str, max_tokens: int | None = None) -> Any:
    """``text`` as JSON, whole; ValueError as for ``first_json_object``."""
    _check_size(text, max_tokens)
    try:
        return _shallow(json.loads(text))
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None


def first_json_object(text: str, max_tokens: int | None = None) -> Any:
    """The first JSON object in ``text``: servers that ignore the schema wrap it in prose or fences.

    ValueError when there is none, when ``text`` is longer than ``max_tokens`` can say, or when it
    nests deeper than an answer may (deep enough, the parser itself gives up: RecursionError). Only
    the first few braces are tried, so that a reply full of them costs linear time."""
    _check_size(text, max_tokens)
    decoder = json.JSONDecoder()
    for match in itertools.islice(re.finditer(r"\{", text), MAX_STARTS):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:
            raise ValueError(_TOO_DEEP) from None
        if isinstance(value, dict):
            return _shallow(value)
    raise ValueError("the reply holds no JSON object")


def _check_size(text: str, max_tokens: int | None) -> None:
    if max_tokens is not None and len(text) > max_tokens * CHARS_PER_TOKEN:
        raise ValueError(f"the reply is longer than {max_tokens} tokens can say")


def _shallow(value: Any) -> Any:
    """``value`` when its lists and objects nest no deeper than MAX_DEPTH (counted without recursion,
    so that validation never recurses deeper either); ValueError otherwise."""
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        item, depth = level.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise ValueError(_TOO_DEEP)
            level.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return value
