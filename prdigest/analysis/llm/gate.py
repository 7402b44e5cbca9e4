"""The quality gate on what a model says, before anything keeps it.

Schema validation accepts any string; a weak model's strings are JSON punctuation (``}, {``), a key
(``repo:``), commit hashes, the prompt's own instructions echoed back, or a merged PR said to be
"not yet merged". A PR's summary and the week's executive summary must be a sentence about the
subject: one that fails refuses the whole answer (``GateRefused``: repaired once like invalid
output, then the rules answer, and never cached). Other texts that fail are dropped, so that the
rules' version of a section stands when none is left.

Every pattern runs in linear time: the echo test compares runs of words (of characters, in Chinese)
with those of prdigest's own instructions, never a regex over the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from prdigest.analysis.llm.schemas import LLMOutput, NarrativeOut, PRAnalysisOut
from prdigest.prompts import Prompt, load_prompt

RUN = 6  # words (Chinese characters) in a row that an echo shares with the instructions
ECHO_SHARE = 0.7  # of a text's words within shared runs: an echo, not a sentence quoting a phrase
MIN_CLAUSE = 3  # words of a clause found whole in the instructions: echoed ...
MIN_SHORT_ECHO = 4  # ... or this many, when the clause is all the text says
MIN_WORDS = 2  # a sentence has two words at least (a Chinese word counted as two characters) ...
MIN_LETTERS = 6  # ... and this many letters (a Chinese character counted as two)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_\u3400-\u9fff\uf900-\ufaff]+")
_CLAUSE = re.compile(r"[.,;:!?…。，；：！？、]")
_LETTERS = re.compile(r"[^\W\d_]+")
_WORDISH = re.compile(r"[\w-]+")
# A JSON key ("summary": ...), an object's opening brace, or a bare key ("repo:").
_JSON_KEY = re.compile(r"\"[A-Za-z_]\w*\"\s?:|^\s*\{|^\s*\"?[\w.-]+\"?\s?:\W*$")
# A merged PR said to be unmerged, in either language ("not merged" alone may be said of weights).
_UNMERGED = re.compile(
    r"(?:\bnot\s+yet\s+(?:been\s+)?merged|(?:\bnot|n't)\s+(?:yet\s+)?been\s+merged|\byet\s+to\s+be\s+merged"
    r"|\b(?:pr|pull\s+request|change)\s+(?:is|was)(?:\s+not|n't)\s+merged)\b"
    r"|(?:尚未|还未|仍未|还没有?)被?(?:合并|合入)|未被(?:合并|合入)|(?:PR|改动|拉取请求)\s*(?:未|没有)(?:合并|合入)",
    re.I,
)
# ... unless the text speaks of another PR or upstream ("needs upstream's fix, not yet merged").
_ELSEWHERE = re.compile(r"#\d|upstream|上游", re.I)
_DATA = re.compile(r"<untrusted_(\w+)>")


class GateRefused(ValueError):
    """The answer is well-formed and says nothing usable: its reason goes back in the repair request."""


def _tokens(text: str) -> list[str]:
    """Words, lowercased; each Chinese character is one."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Gate:
    """What a model's texts are checked against: the instructions it was sent (prdigest's own text)."""

    said: frozenset[tuple[str, ...]]  # every run of RUN words of the instructions
    words: str  # the instructions' words, space-separated and padded: " a b c "

    @classmethod
    def of(cls, texts: Iterable[str]) -> Gate:
        return _gate(tuple(texts))

    def problem(self, text: str, *, sentence: bool = False, merged: bool = False) -> str | None:
        """Why ``text`` is no usable text (a sentence, with ``sentence``), or None when it is.
        ``merged``: it speaks of a merged PR, which it must not call unmerged."""
        if len(_LETTERS.findall(text)) == 0:
            return "it is punctuation or numbers, not a sentence"
        if _JSON_KEY.search(text):
            return "it is a fragment of JSON, not a sentence"
        words = _WORDISH.findall(text)
        if 2 * sum(map(_is_hash, words)) > len(words):
            return "it is a list of commit hashes, not a sentence"
        if sentence and _too_short(text):
            return "it is too short to say what the change does"
        if self._echoes(text):
            return "it repeats the instructions instead of describing the data"
        if merged and _UNMERGED.search(text) and not _ELSEWHERE.search(text):
            return "it says the pull request is not merged, but it is merged"
        return None

    def _echoes(self, text: str) -> bool:
        """Whether most of ``text`` is the instructions': runs of RUN words they hold, and whole clauses."""
        clauses = [c for c in map(_tokens, _CLAUSE.split(text)) if c]
        tokens = [t for c in clauses for t in c]
        covered = [False] * len(tokens)
        for i in range(len(tokens) - RUN + 1):
            if tuple(tokens[i : i + RUN]) in self.said:
                covered[i : i + RUN] = [True] * RUN
        shortest = MIN_CLAUSE if len(clauses) > 1 else MIN_SHORT_ECHO  # "Fixes a typo" may be all it says
        at = 0
        for clause in clauses:
            if len(clause) >= shortest and f" {' '.join(clause)} " in self.words:
                covered[at : at + len(clause)] = [True] * len(clause)
            at += len(clause)
        return bool(tokens) and sum(covered) >= ECHO_SHARE * len(tokens)

    def require(self, text: str, field: str, *, merged: bool = False) -> None:
        """GateRefused unless ``text`` is a sentence about its subject."""
        problem = self.problem(text, sentence=True, merged=merged)
        if problem:
            raise GateRefused(f"{field}: {problem}")

    def junk(self, text: str) -> bool:
        """Whether a text that need not be a sentence (a title, a point to watch) is punctuation, JSON,
        hashes or an echo: a point names behaviour in as few words as it likes."""
        return self.problem(text) is not None

    def kept(self, texts: Sequence[str]) -> list[str]:
        return [t for t in texts if not self.junk(t)]


def _is_hash(word: str) -> bool:
    """A commit hash, abbreviated or not: hex digits, some of them letters and some numbers."""
    hexed = 6 <= len(word) <= 40 and all(c in "0123456789abcdefABCDEF" for c in word)
    return hexed and not word.isdigit() and not word.isalpha()


def _too_short(text: str) -> bool:
    cjk = len(_CJK.findall(text))
    latin = _LETTERS.findall(_CJK.sub(" ", text))
    return len(latin) + cjk / 2 < MIN_WORDS or sum(map(len, latin)) + 2 * cjk < MIN_LETTERS


@lru_cache(maxsize=64)
def _gate(texts: tuple[str, ...]) -> Gate:
    tokens = _tokens("\n".join(texts))
    said = frozenset(tuple(tokens[i : i + RUN]) for i in range(len(tokens) - RUN + 1))
    return Gate(said, f" {' '.join(tokens)} ")


def without_data(text: str) -> str:
    """``text`` without its ``<untrusted_…>`` blocks: the data may be quoted, the instructions not.
    The data cannot close its wrapper (safety.sealed), so each block ends at its own closing tag; a tag
    without one is the instructions naming it."""
    out, at = [], 0
    while (start := _DATA.search(text, at)) is not None:
        out.append(text[at : start.start()])
        end = text.find(f"</untrusted_{start[1]}>", start.end())
        at = start.end() if end < 0 else end + len(start[1]) + len("</untrusted_>")
    return "".join([*out, text[at:]])


def call_gate(messages: Iterable[dict[str, str]], lang: str) -> Gate:
    """The gate of a request: its own instructions, and those a later rung or the repair adds."""
    common = load_prompt("common", lang)
    ours = [without_data(m["content"]) for m in messages if m["role"] != "assistant"]
    return Gate.of([*ours, common.render("json_only"), common.render("repair", error="")])


def prompt_gate(prompt: Prompt, **variables: Any) -> Gate:
    """The gate of ``prompt``'s requests, without their data: for answers read back from the cache."""
    data = {"evidence": "", "hints": [], "instructions": "", **variables}
    parts = [prompt.render("system", **data), prompt.render("user", **data)]
    return call_gate([{"role": "user", "content": p} for p in parts], prompt.lang)


class Said(Protocol):
    """A PR's analysis, as the model wrote it or as the cache keeps it."""

    summary: str
    explanation: str
    watch: list[str]
    unresolved: list[str]


def analysis_texts(gate: Gate, analysis: Said) -> dict[str, Any]:
    """The analysis's texts that pass the gate (an update for ``model_copy``); GateRefused when its
    summary fails: one that calls the merged PR "not yet merged" too (the explanation may tell of
    other PRs that are not)."""
    gate.require(analysis.summary, "summary", merged=True)
    explanation = analysis.explanation
    return {
        "explanation": "" if gate.junk(explanation) else explanation,
        "watch": gate.kept(analysis.watch),
        "unresolved": gate.kept(analysis.unresolved),
    }


def gated(output: LLMOutput, messages: Iterable[dict[str, str]], lang: str) -> LLMOutput:
    """``output`` with the texts that pass the gate of the request that asked for it; GateRefused when
    its summary fails. Answers other than a PR's analysis and the narrative pass as they are."""
    if isinstance(output, PRAnalysisOut):
        gate = call_gate(messages, lang)
        translated = "" if gate.junk(output.summary_translated) else output.summary_translated
        return output.model_copy(update={**analysis_texts(gate, output), "summary_translated": translated})
    if isinstance(output, NarrativeOut):
        return output.model_copy(update=_narrative_texts(call_gate(messages, lang), output))
    return output


def _narrative_texts(gate: Gate, narrative: NarrativeOut) -> dict[str, Any]:
    """The narrative's sections without the items that fail the gate: a section left empty keeps the
    rules' version (apply_narrative)."""
    gate.require(narrative.summary, "summary")
    themes = [
        t.model_copy(update={"trend": "" if gate.junk(t.trend) else t.trend})
        for t in narrative.themes
        if not (gate.junk(t.title) or gate.junk(t.story))
    ]
    return {
        "themes": themes,
        "risks": [o for o in narrative.risks if not (gate.junk(o.title) or gate.junk(o.evidence))],
        "recommendations": [r for r in narrative.recommendations if not gate.junk(r.text)],
    }
