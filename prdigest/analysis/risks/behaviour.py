"""Whether a PR's code changes can change what the code does: the question `no_tests` asks before it
wants a test. Read from the diff's changed lines alone, in any language.

Not behaviour: comments, imports, logging and doctest lines; code only deleted, with its files or as
module-level definitions (nothing new to test; lines deleted inside code, such as a list's entries, do
change it);
lines moved or reordered (what a refactor that aligns or sorts code leaves: the same lines, elsewhere);
and a change whose every line is about a version (a compatibility gate for another release of a
dependency). A title that says it documents is not asking for a test either.
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


def _logic(lines: Iterable[str]) -> Counter[str]:
    return Counter(" ".join(line.split()) for line in lines if LOGIC.match(line))


def may_change_behaviour(diffs: list[FileDiff], title: str, deletes_files: bool = False) -> bool:
    """Whether these changed lines (of the code that ships) and the title say the code may now behave
    differently; ``deletes_files``: the PR deletes some of that code's files."""
    if title.split(maxsplit=1)[:1] and title.split(maxsplit=1)[0].lower().strip(":") in _DOCUMENTS:
        return False
    added = _logic(line for d in diffs for line in d.added)
    removed = _logic(line for d in diffs for line in d.removed)
    deleted = [line for d in diffs for line in d.removed if LOGIC.match(line)]
    if not added and (deletes_files or all(not line[:1].isspace() for line in deleted)):
        return False  # comments and imports only, code deleted with its files or top-level definitions
    moved = sum((added & removed).values())
    if moved >= MOVED * max(added.total(), removed.total()):
        return False  # the same lines, elsewhere
    return not all(_VERSION.search(line) for line in [*added, *removed])
