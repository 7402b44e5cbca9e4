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


# The characters outside ASCII that re.I matches to an ASCII letter (Python's case folding, checked over
# every code point by tests/analysis/test_rules_speed.py), written as that letter: "İ".lower() is two
# characters, and "ſ", "ı" lower to themselves.
_ASCII_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_FOLDED = re.compile("[\u0130\u0131\u017f\u212a]")  # found in one scan: str.translate is slow


def folded(text: str) -> str:
    """``text`` as a case-insensitive regex compares it with ASCII: lower case, and each character that
    re.I matches to an ASCII letter written as that letter. Where such a regex matches an ASCII word
    (lower case) in ``text``, the word is in ``folded(text)``."""
    return (text.translate(_ASCII_FOLDS) if not text.isascii() and _FOLDED.search(text) else text).lower()


def may_hold(text: str, words: tuple[str, ...]) -> bool:
    """False only when no case-insensitive regex whose every match holds one of ``words`` (ASCII, lower
    case) can match ``text``: a substring test that spares most texts the regex."""
    return any(map(folded(text).__contains__, words))


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
