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
from collections.abc import Iterable, Iterator
from functools import cached_property, partial
from itertools import chain

from prdigest.analysis.facts import Facts, FileDiff

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
    # map over C functions, not a generator: a PR's changed lines run to tens of thousands.
    return Counter(map(" ".join, map(str.split, filter(LOGIC.match, lines))))


def _side(diffs: list[FileDiff], side: str) -> Iterator[str]:
    return chain.from_iterable(getattr(d, side) for d in diffs)


def _changed(diffs: list[FileDiff], prompts: bool = False) -> tuple[Counter[str], Counter[str]]:
    """The lines that do something, added and removed; ``prompts``: a doctest line counts as its code
    (an example rewritten between a code block and doctest prompts is the same example)."""
    unprompt = partial(_PROMPT.sub, r"\1")

    def lines(side: str) -> Iterable[str]:
        return map(unprompt, _side(diffs, side)) if prompts else _side(diffs, side)

    return _logic(lines("added")), _logic(lines("removed"))


class ChangedLines:
    """Some diffs' changed lines as the questions below read them, each reading made once: the rules
    ask of one PR's shipped code whether it is cosmetic (its score's cap) and whether it may change
    behaviour (no_tests)."""

    def __init__(self, diffs: list[FileDiff]) -> None:
        self.diffs = diffs

    @cached_property
    def plain(self) -> tuple[Counter[str], Counter[str]]:
        return _changed(self.diffs)

    @cached_property
    def logic(self) -> bool:
        """Whether any changed line does something (`plain` not both empty), found without counting."""
        if "plain" in self.__dict__:  # counted already
            return bool(self.plain[0] or self.plain[1])
        return any(map(LOGIC.match, chain(_side(self.diffs, "added"), _side(self.diffs, "removed"))))

    @cached_property
    def doctests(self) -> bool:
        lines = list(chain(_side(self.diffs, "added"), _side(self.diffs, "removed")))
        text = "\n".join(lines)
        # A prompt is ">>>" or "...": most changes hold neither, and no line is matched alone.
        return (">>>" in text or "..." in text) and any(map(_PROMPT.match, lines))

    @cached_property
    def prompted(self) -> tuple[Counter[str], Counter[str]]:
        # Without a doctest prompt on any line, reading prompts away changes no line.
        return _changed(self.diffs, prompts=True) if self.doctests else self.plain


def product_lines(f: Facts) -> ChangedLines:
    """The changed lines of the code the PR ships, read once per PR."""
    return f.once(_product_lines)


def _product_lines(f: Facts) -> ChangedLines:
    return ChangedLines(f.diffs_where(lambda p: p in f.product_set))


def cosmetic(lines: ChangedLines, title: str) -> bool:
    """Whether lines changed but none that does something (comments, imports, logging, doctests alone;
    code examples turned into doctests), or the title says it documents."""
    words = title.split(maxsplit=1)
    if words and words[0].lower().strip(":") in _DOCUMENTS:
        return True
    if not any(d.added or d.removed for d in lines.diffs):
        return False  # a file renamed with no line changed shows no line at all: a module moved
    if not lines.logic:
        return True
    # Code examples rewritten as doctests (or back): most lines are the same once prompts are read away.
    return lines.doctests and _moved(*lines.prompted)


def _moved(added: Counter[str], removed: Counter[str]) -> bool:
    """Whether most changed lines are found on both sides: moved, reordered or rewritten in place."""
    return sum((added & removed).values()) >= MOVED * max(added.total(), removed.total())


def form_only(lines: ChangedLines, title: str) -> bool:
    """Whether only the code's form changed: cosmetic changes, or lines moved and reordered."""
    if cosmetic(lines, title):
        return True
    return _moved(*lines.prompted)


def may_change_behaviour(lines: ChangedLines, title: str, deletes_files: bool = False) -> bool:
    """Whether these changed lines (of the code that ships) and the title say the code may now behave
    differently; ``deletes_files``: the PR deletes some of that code's files."""
    if form_only(lines, title):
        return False
    added, removed = lines.plain
    deleted = filter(LOGIC.match, _side(lines.diffs, "removed"))
    if not added and (deletes_files or all(not line[:1].isspace() for line in deleted)):
        return False  # code deleted with its files, or top-level definitions: nothing new to test
    return not all(_VERSION.search(line) for line in [*added, *removed])
