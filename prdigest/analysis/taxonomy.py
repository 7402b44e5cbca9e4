"""Tags and risk labels: what they are and how a PR earns them from its title, labels and paths.

Per-repository extra tags and core paths come from the settings (`[[repos]]`
`taxonomy`); everything else here is the default taxonomy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from prdigest.config import Taxonomy
from prdigest.models import PullRequest
from prdigest.path_kinds import (
    DEFAULT_CORE_GLOBS,
    is_ci,
    is_dependency,
    is_doc,
    is_test,
    matches,
)

# Default tags, in the order reports list ties.
TAGS = (
    "feature",
    "bugfix",
    "performance",
    "refactor",
    "security",
    "testing",
    "ci",
    "docs",
    "dependency",
    "configuration",
    "revert",
)

# Conventional-commit types and common synonyms -> tag.
_TYPE_TAGS = {
    "feat": "feature",
    "feature": "feature",
    "fix": "bugfix",
    "bugfix": "bugfix",
    "hotfix": "bugfix",
    "bug": "bugfix",
    "perf": "performance",
    "performance": "performance",
    "refactor": "refactor",
    "style": "refactor",
    "cleanup": "refactor",
    "test": "testing",
    "tests": "testing",
    "ci": "ci",
    "build": "dependency",
    "deps": "dependency",
    "docs": "docs",
    "doc": "docs",
    "security": "security",
    "config": "configuration",
    "revert": "revert",
}

# GitHub label names -> tag.
_LABEL_TAGS = {
    "bug": "bugfix",
    "enhancement": "feature",
    "feature": "feature",
    "documentation": "docs",
    "dependencies": "dependency",
    "performance": "performance",
    "security": "security",
    "refactor": "refactor",
    "testing": "testing",
    "tests": "testing",
    "ci": "ci",
}

# Words in a title that name the kind of change.
_TITLE_WORDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(fix(es|ed)?|bug|crash|hang|leak|race|oom|wrong|incorrect)\b", re.I), "bugfix"),
    (
        re.compile(r"\b(add(s|ed)?|support(s)?|introduce[sd]?|enable[sd]?|implement(s|ed)?|new)\b", re.I),
        "feature",
    ),
    (
        re.compile(r"\b(speed ?up|faster|optimi[sz]\w*|perf\w*|throughput|latency|fused?)\b", re.I),
        "performance",
    ),
    (
        re.compile(r"\b(refactor\w*|clean ?up|move[sd]?|rename[sd]?|simplif\w*|extract\w*|dedup\w*)\b", re.I),
        "refactor",
    ),
    (re.compile(r"\b(security|cve|vulnerab\w*|sanitiz\w*|injection|secret\w*)\b", re.I), "security"),
    (re.compile(r"\b(docs?|documentation|readme|tutorial)\b", re.I), "docs"),
    (re.compile(r"\b(bump|upgrade|pin|dependenc\w*)\b", re.I), "dependency"),
    (re.compile(r"\b(test(s|ing)?|e2e|unit ?test)\b", re.I), "testing"),
    (re.compile(r"\b(ci|workflow|pipeline)\b", re.I), "ci"),
    (re.compile(r"\b(config\w*|flag|option|argument|--[a-z][\w-]+)\b", re.I), "configuration"),
    (re.compile(r"^revert\b", re.I), "revert"),
]

# Conventional title: "[ci, megatron] fix(scope)!: text" -> brackets, type, scope, bang.
# Leading "[ci, megatron]" groups and stack markers ("(1/4)", "[3/7]"), any number of them.
_PREFIX = re.compile(r"^\s*(?:\[(?P<brackets>[^\]]+)\]|\(\d+/\d+\))\s*:?\s*")
_STACK = re.compile(r"^\d+/\d+$")
_TITLE = re.compile(
    r"^(?:(?P<type>[A-Za-z]+) ?(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?:\s*)?"
    r"(?P<rest>.*)$",
    re.S,  # any title matches, one with a line break too
)


@dataclass(frozen=True)
class ParsedTitle:
    brackets: tuple[str, ...]
    type: str | None
    scope: str | None
    breaking: bool
    text: str


def is_kind_word(word: str) -> bool:
    """A word that names a kind of change ("fix", "Bug Fix", "feat"), not an area."""
    return word.replace(" ", "").lower() in _TYPE_TAGS


@lru_cache(maxsize=4096)  # read by the tags, the summary and two risk rules: parsed once per title
def parse_title(title: str) -> ParsedTitle:
    found: list[str] = []
    while prefix := _PREFIX.match(title):
        found += [b.strip().lower() for b in (prefix.group("brackets") or "").split(",")]
        title = title[prefix.end() :]
    brackets = tuple(b for b in found if b and not _STACK.match(b))
    match = _TITLE.match(title.strip())
    assert match is not None  # the pattern matches any string
    kind = match.group("type")
    if kind and kind.lower() not in _TYPE_TAGS:
        # "dashboard: report MFU" names an area, not a kind of change: read it as the scope.
        scope = kind.lower() if not match.group("scope") else match.group("scope").strip().lower()
        return ParsedTitle(brackets, None, scope, bool(match.group("bang")), match.group("rest").strip())
    return ParsedTitle(
        brackets=brackets,
        type=kind.lower() if kind else None,
        scope=(match.group("scope") or "").strip().lower() or None,
        breaking=bool(match.group("bang")),
        text=match.group("rest").strip(),
    )


def core_globs(taxonomy: Taxonomy) -> tuple[str, ...]:
    return tuple(taxonomy.core_paths) or DEFAULT_CORE_GLOBS


def is_core(path: str, taxonomy: Taxonomy) -> bool:
    return not (is_test(path) or is_doc(path)) and matches(path, core_globs(taxonomy))


def taxonomy_hash(taxonomy: Taxonomy) -> str:
    """Part of the rules version: a changed taxonomy means a new analysis."""
    return hashlib.sha256(taxonomy.model_dump_json().encode()).hexdigest()[:10]


def known_tags(taxonomy: Taxonomy) -> tuple[str, ...]:
    return TAGS + tuple(t for t in taxonomy.tags if t not in TAGS)


def tags_for(pr: PullRequest, taxonomy: Taxonomy) -> list[str]:
    """Tags from the title's conventions and words, the labels, the paths and the repository's extra tags."""
    parsed = parse_title(pr.title)
    known = known_tags(taxonomy)
    found: list[str] = []

    def add(tag: str | None) -> None:
        if tag and tag in known and tag not in found:
            found.append(tag)

    for bracket in parsed.brackets:
        bracket = bracket.replace(" ", "")  # "[Bug Fix]"
        add(_TYPE_TAGS.get(bracket, bracket))
    if parsed.type:
        add(_TYPE_TAGS.get(parsed.type))
    if parsed.scope:
        for part in re.split(r"[,/ ]+", parsed.scope):
            add(_TYPE_TAGS.get(part, part))
    if not parsed.type:
        for pattern, tag in _TITLE_WORDS:
            if pattern.search(parsed.text):
                add(tag)
                break  # the first kind word names the change; more words are noise
    for pattern, tag in _TITLE_WORDS:
        if tag in ("security", "performance", "configuration") and pattern.search(parsed.text):
            add(tag)
    for label in pr.labels or []:
        name = label.lower()
        add(_LABEL_TAGS.get(name, name))
    add_path_tags(pr, add)
    lowered = pr.title.lower()
    for tag, rule in taxonomy.tags.items():
        paths = [f.path for f in pr.files or []]
        if any(k.lower() in lowered for k in rule.keywords) or any(matches(p, rule.paths) for p in paths):
            add(tag)
    return found


def add_path_tags(pr: PullRequest, add: Callable[[str | None], None]) -> None:
    files = pr.files or []
    if not files:
        return
    paths = [f.path for f in files]
    if any(is_test(p) for p in paths):
        add("testing")
    if any(is_ci(p) for p in paths):
        add("ci")
    if any(is_dependency(p) for p in paths):
        add("dependency")
    churn = sum((f.additions or 0) + (f.deletions or 0) for f in files) or 1
    doc_churn = sum((f.additions or 0) + (f.deletions or 0) for f in files if is_doc(f.path))
    if doc_churn * 2 >= churn:
        add("docs")


@lru_cache(maxsize=4096)
def module_of(path: str) -> str:
    """The module a path belongs to: its first two folders (one for shallow trees)."""
    parts = path.split("/")[:-1]
    if not parts:
        return "(root)"
    if parts[0] in (".github", "docs", "doc", "tests", "test", "examples", "scripts", "docker"):
        return parts[0]
    return "/".join(parts[:2])
