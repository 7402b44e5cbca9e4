"""What every judgement risk rule shares: the labels, a finding, and quoting the evidence."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from prdigest.analysis.taxonomy import JUDGED_LABELS

# The labels these rules judge (the others are facts: reviews, checks, forks, core paths).
JUDGEMENT_LABELS = JUDGED_LABELS


# A default worth comparing: a number, a string, a constant or a name; not a call whose help text changed.
LITERAL = re.compile(r"""^(-?[\d.e_+]+|True|False|None|"[^"]*"|'[^']*'|[A-Za-z_][\w.]*)$""")


class Finding(NamedTuple):
    evidence: str
    source: str  # diff, title, body, paths, reviews, checks
    breaks: bool = False  # users break: see RiskLabel.breaks
    strength: Literal["strong", "weak"] = "strong"  # see RiskLabel.strength


Evidence = Finding | tuple[str, str] | None


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """False only when no case-insensitive regex whose every match holds one of ``words`` (lower case)
    can match ``text``: a substring test that spares most files the regex. Outside ASCII, case folding
    is wider than ``str.lower`` (re.I matches "ſ" for "s", "K" for "k"), so the answer is always True."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(word in lowered for word in words)


def _line_at(text: str, index: int) -> str:
    start, end = text.rfind("\n", 0, index) + 1, text.find("\n", index)
    return text[start : end if end != -1 else len(text)].strip()


def quote(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def sentence_around(text: str, index: int) -> str:
    """The sentence that holds text[index] ("8.5%" does not end a sentence)."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, index)), default=0)
    end = _SENTENCE_END.search(text, index)
    return text[start : end.start() if end else len(text)].strip()
