"""Tags and risk labels, each defined once here as data, and how a PR earns its tags from its title, labels
and paths. The rules engine, the stories and the chat's noise controls read this data; `prdigest.i18n`
only translates the names.

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


@dataclass(frozen=True)
class Tag:
    """A kind of change the rules engine may tag a PR with, what it weighs, and the signals that tag it."""

    name: str
    weight: float  # the importance a change of this kind starts from (README, "How the rules engine scores")
    # The kind of story a PR of this tag tells (stories.text.KINDS); None: no kind of its own.
    story: str | None
    area: bool = False  # says where a change is (tests, CI, docs, manifests), not what it does: rides along
    insight: float = 0.0  # what a reader learns from a change of this kind, beyond its text
    tested: bool | None = None  # True: a change of this kind wants a test; False: it needs none
    types: tuple[str, ...] = ()  # conventional-commit types and synonyms: "fix(x):", "[Bug Fix]"
    labels: tuple[str, ...] = ()  # GitHub labels besides the tag's own name
    words: str = ""  # title words that name the kind (a regular expression, case-insensitive)
    word_rank: int = 0  # the first kind whose words a title holds, in this order, names its change
    word_always: bool = False  # its words tag a title that names another kind of change too
    path: Callable[[str], bool] | None = None  # a changed file of this kind tags the PR
    path_share: bool = False  # ... only when such files hold half the PR's churn


@dataclass(frozen=True)
class Risk:
    """A risk label: how much it weighs and which PR fields its rule needs (the rule is rules.RISK_RULES)."""

    name: str
    weight: int  # in the week's risk level (3 and more: medium) and the order of observations
    inputs: tuple[str, ...] = ()  # PR fields the rule needs: unknown input (None) keeps the rule silent
    judged: int | None = None  # a judgement of the diff and text (the LLM's too), in the order stories
    # name their costs; None: a fact the model cannot check (reviews, checks, forks, core paths)
    high_at: int | None = None  # this many in one week make the week's risk high
    weekly: bool = False  # found of the week's PRs together (analysis/review_flow.py), not of one PR alone


# Default tags, in the order reports list ties.
DEFAULT_TAGS: tuple[Tag, ...] = (
    Tag(
        "feature", 3.0, "feature", tested=True, types=("feat", "feature"), labels=("enhancement",),
        words=r"\b(add(s|ed)?|support(s)?|introduce[sd]?|enable[sd]?|implement(s|ed)?|new)\b", word_rank=1,
    ),
    Tag(
        "bugfix", 2.5, "bugfix", tested=True, types=("fix", "bugfix", "hotfix", "bug"), labels=("bug",),
        words=r"\b(fix(es|ed)?|bug|crash|hang|leak|race|oom|wrong|incorrect)\b", word_rank=0,
    ),
    Tag(
        "performance", 3.0, "performance", insight=1.5, tested=True, types=("perf", "performance"),
        words=r"\b(speed ?up|faster|optimi[sz]\w*|perf\w*|throughput|latency|fused?)\b", word_rank=2,
        word_always=True,
    ),
    Tag(
        "refactor", 2.0, "migration", insight=1.0, tested=False, types=("refactor", "style", "cleanup"),
        words=r"\b(refactor\w*|clean ?up|move[sd]?|rename[sd]?|simplif\w*|extract\w*|dedup\w*)\b",
        word_rank=3,
    ),
    Tag(
        "security", 3.5, "security", insight=1.5, types=("security",),
        words=r"\b(security|cve|vulnerab\w*|sanitiz\w*|injection|secret\w*)\b", word_rank=4, word_always=True,
    ),
    Tag(
        "testing", 1.2, "hardening", area=True, tested=False, types=("test", "tests"), labels=("tests",),
        words=r"\b(test(s|ing)?|e2e|unit ?test)\b", word_rank=7, path=is_test,
    ),
    Tag(
        "ci", 1.5, "hardening", area=True, tested=False, types=("ci",),
        words=r"\b(ci|workflow|pipeline)\b", word_rank=8, path=is_ci,
    ),
    Tag(
        "docs", 0.6, "docs", area=True, tested=False, types=("docs", "doc"), labels=("documentation",),
        words=r"\b(docs?|documentation|readme|tutorial)\b", word_rank=5, path=is_doc, path_share=True,
    ),
    Tag(
        "dependency", 1.5, "dependency", area=True, tested=False, types=("build", "deps"),
        labels=("dependencies",), words=r"\b(bump|upgrade|pin|dependenc\w*)\b", word_rank=6,
        path=is_dependency,
    ),
    Tag(
        "configuration", 2.0, None, types=("config",),
        words=r"\b(config\w*|flag|option|argument|--[a-z][\w-]+)\b", word_rank=9, word_always=True,
    ),
    Tag("revert", 1.5, "bugfix", tested=False, types=("revert",), words=r"^revert\b", word_rank=10),
)  # fmt: skip
TAGS = tuple(tag.name for tag in DEFAULT_TAGS)

# Risk labels, in the order the rules engine finds them.
RISKS: tuple[Risk, ...] = (
    Risk("security_sensitive", 5, judged=2),
    Risk("failing_checks", 4, ("checks",)),
    Risk("tests_removed", 4, judged=1, high_at=3),  # removed files need the file list, skip markers the diff
    Risk("perf_regression", 4, judged=3),
    Risk("config_breaking", 4, judged=0, high_at=4),
    Risk("large_low_review", 3, ("files", "reviews")),
    Risk("fork_no_bot_review", 3, ("is_fork", "reviews")),
    Risk("unresolved_threads", 3, ("review_threads",)),
    Risk("unreviewed_core_change", 3, ("files", "reviews")),
    Risk("core_path", 2, ("files",)),
    Risk("no_tests", 2, ("files",), judged=4),
    Risk("dependency_change", 2, ("files",), judged=5),
    Risk("review_concentration", 2, ("reviews",), weekly=True),
)
RISK_LABELS = tuple(risk.name for risk in RISKS)
# The judgement labels, in the order stories name their costs.
JUDGED_LABELS = tuple(r.name for r in sorted(RISKS, key=lambda r: r.judged or 0) if r.judged is not None)

# Conventional-commit types and common synonyms -> tag.
_TYPE_TAGS = {word: tag.name for tag in DEFAULT_TAGS for word in tag.types}
# GitHub label names -> tag (a label named as a tag is that tag).
_LABEL_TAGS = {label: tag.name for tag in DEFAULT_TAGS for label in tag.labels}
# Words in a title that name the kind of change, the first kind to look for first.
_TITLE_WORDS = [
    (re.compile(tag.words, re.I), tag) for tag in sorted(DEFAULT_TAGS, key=lambda t: t.word_rank) if tag.words
]
_ALWAYS_WORDS = [(pattern, tag.name) for pattern, tag in _TITLE_WORDS if tag.word_always]
# Tags of the paths a PR changes: (tag, path kind, whether it needs half the churn).
_PATH_TAGS = [(tag.name, tag.path, tag.path_share) for tag in DEFAULT_TAGS if tag.path is not None]

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
    for tag in _word_tags(parsed.text, bool(parsed.type)):
        add(tag)
    for label in pr.labels or []:
        name = label.lower()
        add(_LABEL_TAGS.get(name, name))
    add_path_tags(pr, add)
    lowered = pr.title.lower()
    paths = [f.path for f in pr.files or []]
    for tag, rule in taxonomy.tags.items():
        if any(k.lower() in lowered for k in rule.keywords) or any(matches(p, rule.paths) for p in paths):
            add(tag)
    return found


@lru_cache(maxsize=4096)  # a title's words are read again for each language of its analysis
def _word_tags(text: str, typed: bool) -> tuple[str, ...]:
    """The tags a title's words name, in order: the first kind word's (for a title of no type), then
    those always read."""
    found = []
    if not typed:
        for pattern, kind in _TITLE_WORDS:
            if pattern.search(text):
                found.append(kind.name)
                break  # the first kind word names the change; more words are noise
    found += [name for pattern, name in _ALWAYS_WORDS if pattern.search(text)]
    return tuple(found)


def add_path_tags(pr: PullRequest, add: Callable[[str | None], None]) -> None:
    files = pr.files or []
    if not files:
        return
    paths = [f.path for f in files]
    for name, kind, share in _PATH_TAGS:
        if not share and any(kind(p) for p in paths):
            add(name)
    churn = sum((f.additions or 0) + (f.deletions or 0) for f in files) or 1
    for name, kind, share in _PATH_TAGS:  # after the others: a tag of most of the churn
        if share and sum((f.additions or 0) + (f.deletions or 0) for f in files if kind(f.path)) * 2 >= churn:
            add(name)


@lru_cache(maxsize=4096)
def module_of(path: str) -> str:
    """The module a path belongs to: its first two folders (one for shallow trees)."""
    parts = path.split("/")[:-1]
    if not parts:
        return "(root)"
    if parts[0] in (".github", "docs", "doc", "tests", "test", "examples", "scripts", "docker"):
        return parts[0]
    return "/".join(parts[:2])
