"""Which later PRs revert or address an earlier week's risk, PR by PR, by the rules.

A later PR addresses one of the risk's PRs when it names it as what it fixes, tests or follows up, or
when it changes the same files (or their tests) and does what the risk asks for: a test for a risk of
missing or removed tests, a fix of the kind the risk names for the others (see FIXING_KINDS). A
revert is a PR titled as one that names the risk's PR, or repeats its title.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from prdigest.analysis.followups.items import RiskItem
from prdigest.models import PRAnalysis, PullRequest
from prdigest.path_kinds import is_test
from prdigest.sources.parsing import references

Closing = Literal["addressed", "reverted"]

# The tags (the rules engine's kinds of change) of a PR that fixes what each kind of risk names; a PR
# that changes tests of the risk's files addresses every kind. Risks of missing or removed tests are
# addressed by tests alone: another untested fix of the same files leaves them as they were.
FIXING_KINDS: dict[str, frozenset[str]] = {
    "no_tests": frozenset(),
    "tests_removed": frozenset(),
    "perf_regression": frozenset({"bugfix", "performance"}),
    "security_sensitive": frozenset({"bugfix", "security"}),
    # A compatibility fix, or the migration note and option aliases the breaking change wants.
    "config_breaking": frozenset({"bugfix", "configuration", "docs"}),
    "dependency_change": frozenset({"bugfix", "dependency"}),
    "failing_checks": frozenset({"bugfix", "ci"}),
    "hot_files": frozenset({"bugfix", "refactor"}),
}
DEFAULT_FIXING = frozenset({"bugfix"})  # reviews, threads, checks: a later fix of the same code
# Risks that say where to look, not what is wrong: a later PR of the same files does not make them
# looked at. Only a PR that names the risk's PR as what it follows up closes one.
BY_REFERENCE_ONLY = frozenset(
    {"core_path", "hot_files", "large_low_review", "fork_no_bot_review", "unreviewed_core_change",
     "review_concentration"}
)  # fmt: skip

_REVERT_TITLE = re.compile(r'^\s*revert\b\s*"?(?P<title>.*?)"?\s*$', re.I)
_TEST_AFFIX = re.compile(r"^test_|_test$|_spec$|\.test$|\.spec$")
_TRAILING_NUMBER = re.compile(r"(?<!\s)\s*\(#\d+\)\s*$")
# Words that say a reference is to what the PR fixes or carries on (English and Chinese).
_FOLLOWS = re.compile(
    r"\b(fix\w*|follow[- ]?ups?|follows?|address\w*|resolv\w*|clos\w*|regress\w*|tests?|covers?|amend\w*)\b"
    r"|修复|跟进|补充|测试|解决",
    re.I,
)


@dataclass(frozen=True)
class Later:
    """A PR merged after the risk's week, as the rules judged it; what its text says is read once."""

    pr: PullRequest
    number: int
    tags: frozenset[str]
    named: frozenset[int]  # the PRs its title and body name, and its own references
    is_revert: bool
    says_follows: bool  # its text says it fixes, tests or follows something up
    paths: frozenset[str]
    tested: frozenset[str]  # the names its tests share with their subjects (see _stem)

    @classmethod
    def of(cls, pr: PullRequest, analysis: PRAnalysis | None) -> Later:
        text = f"{pr.title}\n{pr.body}"
        tags = frozenset(analysis.tags if analysis is not None else ())
        paths = frozenset(f.path for f in pr.files or [])
        named = frozenset(references(text) | set(pr.related))
        return cls(
            pr=pr,
            number=pr.number or 0,
            tags=tags,
            named=named,
            is_revert="revert" in tags or bool(_REVERT_TITLE.match(pr.title)),
            says_follows=bool(named) and bool(_FOLLOWS.search(text)),  # only a PR that names one asks
            paths=paths,
            tested=frozenset(_stem(path) for path in paths if is_test(path)),
        )


@dataclass(frozen=True)
class Close:
    """A later PR that reverts or addresses some of a risk's PRs."""

    number: int
    how: Closing
    covers: frozenset[int]  # the risk's PRs it reverts or addresses


def closing(item: RiskItem, own: dict[int, PullRequest], later: Iterable[Later]) -> list[Close]:
    """The later PRs that revert or address some of the item's PRs (``own``: PRs by number)."""
    files = {n: {f.path for f in own[n].files or []} for n in item.prs if n in own}
    stems = {n: {_stem(path) for path in paths if not is_test(path)} for n, paths in files.items()}
    out = []
    for p in later:
        if p.number in item.prs:
            continue
        named = set(p.named & set(item.prs))
        if p.is_revert:
            covers = named or {n for n in files if _same_title(p.pr.title, own[n].title)}
            how: Closing = "reverted"
        else:
            follows = named if p.says_follows else set()
            fixing = fixes(p, item.label) and item.label not in BY_REFERENCE_ONLY
            covers = follows | {n for n in files if fixing and touches(p, files[n], stems[n])}
            how = "addressed"
        if covers:
            out.append(Close(p.number, how, frozenset(covers)))
    return out


def _same_title(revert: str, title: str) -> bool:
    """``revert`` is the title git gives a revert of the PR titled ``title``."""
    match = _REVERT_TITLE.match(revert)
    reverted = _TRAILING_NUMBER.sub("", match.group("title")).strip().lower() if match else ""
    return bool(reverted) and reverted == _TRAILING_NUMBER.sub("", title).strip().lower()


def touches(p: Later, files: set[str], stems: set[str]) -> bool:
    """``p`` changes one of ``files``, or a test named after one of their ``stems`` (test_parse.py for
    parse.py)."""
    return not p.paths.isdisjoint(files) or not p.tested.isdisjoint(stems)


def fixes(p: Later, label: str) -> bool:
    """``p`` changes tests, or is a change of a kind that fixes what ``label`` names."""
    return bool(p.tested) or bool(p.tags & FIXING_KINDS.get(label, DEFAULT_FIXING))


def _stem(path: str) -> str:
    """The name a test and its subject share: parse for src/parse.py, tests/test_parse.py, parse_test.go."""
    name = posixpath.splitext(posixpath.basename(path))[0].lower()
    return _TEST_AFFIX.sub("", name)
