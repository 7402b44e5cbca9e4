"""A repository's CODEOWNERS, read as GitHub reads it: who owns the files an open PR changes.

Its own module because it is a small language of its own (gitignore-style patterns, GitHub's owner
forms and exceptions), with untrusted input on both sides: the file is written by whoever can push to
the default branch, and the paths it is matched against by any PR author. So the text is bounded
(size, rules, line and pattern length, path length, matching work), a line that cannot be read is
skipped as GitHub skips it, and nothing here raises on bad input.

Patterns are matched by a small matcher of their own rather than by pathspec's regular expressions:
those backtrack, and cost grows as a power of the path's length (a 200-character path against
``**/*a*a*a*a*b`` takes seconds). Here a path's directory levels are matched against the pattern's
with the classic one-star greedy walk (``**`` being the star), and a level's name against a glob the
same way, with ``str.find`` and quantifier-free expressions: at worst the path's length times the
pattern's, never a power of either.

GitHub's rules (docs: "About code owners"): the first of ``.github/CODEOWNERS``, ``CODEOWNERS`` and
``docs/CODEOWNERS`` that exists is used; a file of 3 MB or more is not loaded; each line is a pattern
and owners (``@user``, ``@org/team``, an email); for each file the last matching line wins, and a line
with no owners leaves its files unowned; ``!`` negation and ``[ ]`` ranges do not work (such a line is
an error and skipped), and neither does escaping a leading ``#`` (``\\#x`` stays a comment).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")  # GitHub's order: the first found
MAX_BYTES = 3 * 1024 * 1024  # GitHub does not load a CODEOWNERS this large
MAX_RULES = 10_000  # beyond: the file is not used (keeping part of it would name the wrong owners)
MAX_LINE = 4096  # characters; a longer line is skipped
MAX_PATTERN = 512  # characters
MAX_PATH = 1024  # characters; a longer path is owned by nobody here
# Matching work per file read, in steps (one per pattern level tried against one path level, or per
# pattern ruled out by its literal): about a second at worst. Past it, the remaining paths have no owners.
MAX_STEPS = 2_000_000
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_DOMAIN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
_STAR = object()  # ``*`` within a level name
_ANY = object()  # ``**``: any number of levels, zero too


class _Piece:
    """A run of a glob between stars: literal characters and ``?`` (any one character)."""

    __slots__ = ("expression", "size", "text")

    def __init__(self, chars: list[str | None]):
        self.size = len(chars)
        if None in chars:
            self.text = None
            # No quantifier: a search costs at most the piece's length per position.
            self.expression: re.Pattern[str] | None = re.compile(
                "".join("." if c is None else re.escape(c) for c in chars), re.DOTALL
            )
        else:
            self.text, self.expression = "".join(c for c in chars if c is not None), None

    def at(self, name: str, start: int) -> bool:
        if self.expression is None:
            assert self.text is not None
            return name.startswith(self.text, start)
        return self.expression.match(name, start) is not None

    def find(self, name: str, start: int, end: int) -> int:
        """Where it first occurs in ``name[start:end]``; -1 if nowhere."""
        if self.expression is None:
            assert self.text is not None
            return name.find(self.text, start, end)
        found = self.expression.search(name, start, end)
        return found.start() if found else -1


class _Glob:
    """One level's name pattern: pieces between ``*`` stars."""

    __slots__ = ("cost", "pieces", "size", "starred")

    def __init__(self, tokens: list[str | object | None]):
        pieces: list[list[str | None]] = [[]]
        for token in tokens:
            if token is not _STAR:
                pieces[-1].append(token if isinstance(token, str) else None)
            elif pieces[-1] or len(pieces) == 1:  # consecutive stars are one star
                pieces.append([])
        self.starred = len(pieces) > 1
        self.pieces = [_Piece(p) for p in pieces]
        self.size = sum(p.size for p in self.pieces)
        # What matching a name costs beyond a step, per character of the name: the "?" pieces' searches.
        self.cost = sum(p.size for p in self.pieces if p.expression is not None)

    def match(self, name: str) -> bool:
        first, last = self.pieces[0], self.pieces[-1]
        if not self.starred:
            return len(name) == first.size and first.at(name, 0)
        if len(name) < self.size or not first.at(name, 0):
            return False
        end = len(name) - last.size
        if not last.at(name, end):
            return False
        start = first.size
        for piece in self.pieces[1:-1]:  # each at its first place: a star-only glob's greedy walk is exact
            found = piece.find(name, start, end)
            if found < 0:
                return False
            start = found + piece.size
        return True

    def literals(self) -> list[str]:
        return [p.text for p in self.pieces if p.text]


@dataclass
class Rule:
    pattern: str  # as written
    owners: tuple[str, ...]  # as written, without "@"; empty: the files are left unowned
    levels: list[object] = field(repr=False)  # _Glob or _ANY
    literal: str = field(repr=False)  # a text every path it matches contains: a cheap first test


class CodeOwners:
    """The rules of one CODEOWNERS file, and the owners they give paths (remembered per path)."""

    def __init__(self, rules: list[Rule], source: str = "CODEOWNERS"):
        self.rules = rules
        self.source = source
        self._known: dict[str, tuple[str, ...]] = {}
        self._steps = 0  # matching work done so far, against MAX_STEPS

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners the last matching rule names; none when no rule matches or it names nobody."""
        if path not in self._known:
            self._known[path] = self._owners_of(path)
        return self._known[path]

    def owners(self, paths: Iterable[str], leave_out: str = "") -> list[str]:
        """The owners of any of ``paths``, each once (logins ignore case), in first-seen order, without
        ``leave_out`` (the author)."""
        seen = {leave_out.lower()} if leave_out else set()
        found = []
        for path in paths:
            for owner in self.owners_of(path):
                if owner.lower() not in seen:
                    seen.add(owner.lower())
                    found.append(owner)
        return found

    def _owners_of(self, path: str) -> tuple[str, ...]:
        names = path.split("/")
        if not path or len(path) > MAX_PATH or "" in names:
            return ()
        for rule in reversed(self.rules):
            if self._steps >= MAX_STEPS:
                if self._steps < MAX_STEPS * 2:  # said once
                    self._steps = MAX_STEPS * 2
                    log.warning("%s: matching took too long; later files have no code owners", self.source)
                return ()
            self._steps += 1
            if rule.literal not in path:
                continue
            matched, steps = _match(rule.levels, names)
            self._steps += steps
            if matched:
                return rule.owners
        return ()


def parse(text: str, source: str = "CODEOWNERS") -> CodeOwners | None:
    """The file's rules; None when GitHub would not load it (too large) or it has too many rules."""
    if len(text) * 4 >= MAX_BYTES and len(text.encode("utf-8", "replace")) >= MAX_BYTES:
        log.warning("%s is 3 MB or more: GitHub does not load it, and no code owners are named", source)
        return None
    rules = []
    for line in text.removeprefix("\ufeff").splitlines():
        rule = parse_line(line)
        if rule is not None:
            rules.append(rule)
            if len(rules) > MAX_RULES:
                log.warning("%s has over %d rules: no code owners are named", source, MAX_RULES)
                return None
    return CodeOwners(rules, source)


def parse_line(line: str) -> Rule | None:
    """A line's rule; None for a blank line, a comment, or a line GitHub would skip as an error."""
    if len(line) > MAX_LINE:
        return None
    tokens = _tokens(line.strip())
    if not tokens or tokens[0].startswith(("#", "\\#")):
        return None
    pattern, written = tokens[0], tokens[1:]
    owners = [_owner(token) for token in written]
    if any(owner is None for owner in owners) or len(pattern) > MAX_PATTERN:
        return None
    levels = _levels(pattern)
    if levels is None:
        return None
    literals = [text for level in levels if isinstance(level, _Glob) for text in level.literals()]
    unique = tuple(dict.fromkeys(o for o in owners if o is not None))
    return Rule(pattern, unique, levels, max(literals, key=len, default=""))


def _tokens(line: str) -> list[str]:
    """Words split at unescaped whitespace, up to a word that starts a comment."""
    words: list[str] = []
    word: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            word.append(char)
            escaped = False
        elif char == "\\":
            word.append(char)
            escaped = True
        elif char.isspace():
            if word:
                words.append("".join(word))
                word = []
        elif char == "#" and not word and words:
            return words  # "*.js @owner # who" : a comment after the owners
        else:
            word.append(char)
    if word:
        words.append("".join(word))
    return words


def _owner(token: str) -> str | None:
    """``@user`` or ``@org/team`` (without the "@"), or an email as written; None if neither."""
    if token.startswith("@"):
        org, slash, team = token[1:].partition("/")
        if _is_name(org) and (not slash or _is_name(team)):
            return token[1:]
        return None
    local, at, domain = token.rpartition("@")
    labels = domain.split(".")
    if (
        at
        and 0 < len(local) <= 64
        and "@" not in local
        and len(domain) <= 255
        and len(labels) > 1
        and all(labels)
        and set(domain) <= _DOMAIN_CHARS
        and not any(c.isspace() for c in local)
    ):
        return token
    return None


def _is_name(name: str) -> bool:
    return 0 < len(name) <= 100 and set(name) <= _NAME_CHARS


def _levels(pattern: str) -> list[object] | None:
    """The pattern's levels as gitignore reads them (pathspec's "gitignore" normalisation): anchored at
    the root when it has a slash before its end, else at any depth; a trailing slash matches only
    below a directory; a last level other than ``*`` also matches what lies below it. None: a pattern
    GitHub cannot use (``!``, ``[ ]``, an empty level, a lone slash, a trailing backslash)."""
    if pattern.startswith("!") or pattern == "/":
        return None
    raw: list[list[str | object | None]] = [[]]  # per level: characters, _STAR and None for "?"
    escaped = False
    for char in pattern:
        if escaped:
            raw[-1].append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "/":
            raw.append([])
        elif char in "[]":
            return None
        else:
            raw[-1].append(_STAR if char == "*" else None if char == "?" else char)
    if escaped:
        return None
    anchored = not raw[0]
    if anchored:
        del raw[0]
    directory = not raw[-1]
    if directory:
        raw.pop()
    if not raw or any(not level for level in raw):
        return None
    # An unescaped "**" level; "a**b" is two stars, one star.
    double = [level == [_STAR, _STAR] for level in raw]
    if not anchored and len(raw) == 1 and not double[0]:
        raw.insert(0, [_STAR, _STAR])
        double.insert(0, True)
    levels: list[object] = []
    for level, is_double in zip(raw, double, strict=True):
        if is_double:
            if not levels or levels[-1] is not _ANY:
                levels.append(_ANY)
        else:
            levels.append(_Glob(level))
    if levels == [_ANY]:  # "**" owns every path, "**/" every path below a directory
        return [_ANY] if not directory else [_Glob([_STAR]), _Glob([_STAR]), _ANY]
    if directory and levels[-1] is not _ANY:
        levels.append(_ANY)  # "docs/" is "docs/**"
    if levels[-1] is _ANY:
        levels[-1:] = [_Glob([_STAR]), _ANY]  # a trailing "**": at least one level below
    elif raw[-1] != [_STAR]:
        levels.append(_ANY)  # "docs" also owns docs/...; "docs/*" only docs' own files
    return levels


def _match(levels: list[object], names: list[str]) -> tuple[bool, int]:
    """Whether the levels match the path's names (``_ANY`` a star over levels, each _Glob one level),
    and the steps it took. The greedy walk that backs up only to the last star is exact here, as each
    non-star matches exactly one level; it tries each level at most once per star."""
    p = n = steps = 0
    star, resume = -1, 0
    while n < len(names):
        steps += 1
        level = levels[p] if p < len(levels) else None
        if level is _ANY:
            star, resume = p, n
            p += 1
            continue
        if isinstance(level, _Glob):
            steps += 1 + len(names[n]) * level.cost // 64  # and a "?" piece's search, per character
            if level.match(names[n]):
                p += 1
                n += 1
                continue
        if star < 0:
            return False, steps
        resume += 1
        p, n = star + 1, resume
    return all(level is _ANY for level in levels[p:]), steps
