"""Whether a PR's code changes can change what the code does: the question `no_tests` asks before it
wants a test. Read from the diff's changed lines alone, in any language.

Not behaviour: comments, imports, logging and doctest lines (code examples rewritten as doctests too);
code only deleted, with its files or as module-level definitions (nothing new to test; lines deleted
inside code, such as a list's entries, do change it); lines moved or reordered (what a refactor that
aligns or sorts code leaves: the same lines, elsewhere); and a change whose every line is about a
version (a compatibility gate for another release of a dependency). A title that says it documents is
not asking for a test either.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from prdigest.analysis.facts import FileDiff

# A line that does something: not a comment, a docstring's quotes or doctest prompt, an import or a log.
LOGIC = re.compile(
    r"^\s*(?!#|//|\"\"\"|'''|>>>|\.\.\.|import\b|from\b|_?(?:logger|log|LOGGER)\s*=|logger\.|logging\.|print\()\S"
)
# The share of changed lines that, found both removed and added, makes the change a move.
MOVED = 0.6
_VERSION = re.compile(r"version|\b\d+\.\d+(?:\.\d+)?\b|\(\s*\d+\s*,\s*\d+", re.I)
_DOCUMENTS = ("document", "documents", "documented", "docs", "docstring", "docstrings")
_PROMPT = re.compile(r"^(\s*)(?:>>>|\.\.\.)(?: |$)")


def _logic(lines: Iterable[str]) -> Counter[str]:
    return Counter(" ".join(line.split()) for line in lines if LOGIC.match(line))


def _changed(diffs: list[FileDiff], prompts: bool = False) -> tuple[Counter[str], Counter[str]]:
    """The lines that do something, added and removed; ``prompts``: a doctest line counts as its code
    (an example rewritten between a code block and doctest prompts is the same example)."""

    def lines(side: str) -> Iterable[str]:
        for d in diffs:
            for line in getattr(d, side):
                yield _PROMPT.sub(r"\1", line) if prompts else line

    return _logic(lines("added")), _logic(lines("removed"))


def cosmetic(diffs: list[FileDiff], title: str) -> bool:
    """Whether lines changed but none that does something (comments, imports, logging, doctests alone;
    code examples turned into doctests), or the title says it documents."""
    words = title.split(maxsplit=1)
    if words and words[0].lower().strip(":") in _DOCUMENTS:
        return True
    if not any(d.added or d.removed for d in diffs):
        return False  # a file renamed with no line changed shows no line at all: a module moved
    added, removed = _changed(diffs)
    if not added and not removed:
        return True
    # Code examples rewritten as doctests (or back): most lines are the same once prompts are read away.
    doctests = any(_PROMPT.match(line) for d in diffs for line in [*d.added, *d.removed])
    return doctests and _moved(*_changed(diffs, prompts=True))


def _moved(added: Counter[str], removed: Counter[str]) -> bool:
    """Whether most changed lines are found on both sides: moved, reordered or rewritten in place."""
    return sum((added & removed).values()) >= MOVED * max(added.total(), removed.total())


def form_only(diffs: list[FileDiff], title: str) -> bool:
    """Whether only the code's form changed: cosmetic changes, or lines moved and reordered."""
    if cosmetic(diffs, title):
        return True
    return _moved(*_changed(diffs, prompts=True))


def may_change_behaviour(diffs: list[FileDiff], title: str, deletes_files: bool = False) -> bool:
    """Whether these changed lines (of the code that ships) and the title say the code may now behave
    differently; ``deletes_files``: the PR deletes some of that code's files."""
    if form_only(diffs, title):
        return False
    added, removed = _changed(diffs)
    deleted = [line for d in diffs for line in d.removed if LOGIC.match(line)]
    if not added and (deletes_files or all(not line[:1].isspace() for line in deleted)):
        return False  # code deleted with its files, or top-level definitions: nothing new to test
    return not all(_VERSION.search(line) for line in [*added, *removed])
