"""What the rules read from one PR, computed once: its paths by kind, its body, its diff by file."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import TypeVar, cast

from prdigest.analysis.taxonomy import is_core, module_of
from prdigest.config import Taxonomy
from prdigest.models import PullRequest
from prdigest.path_kinds import is_ci, is_dependency, is_doc, is_support, is_test

# Indentation never reaches past its line, so no line start rescans the blank lines after it.
_TEMPLATE = re.compile(r"^[^\S\n]*+(#+\s.*|-\s*+\[[ xX]?\]\s*.*|<!--.*?-->|)$", re.M)

T = TypeVar("T")


@dataclass
class FileDiff:
    """One file's added and removed lines (without their +/-), as far as the excerpt shows them."""

    path: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)  # the functions or classes the hunks sit in


@dataclass(frozen=True)
class Facts:
    churn: int
    paths: list[str] | None
    code_paths: list[str]  # neither tests, docs nor CI
    product_paths: list[str]  # code that ships: not examples, scripts, tools, images or manifests either
    test_paths: list[str]
    core_paths: list[str]
    modules: list[str]
    body: str
    diffs: list[FileDiff]
    diff_added: list[str]
    diff_removed: list[str]
    # What `once` computed: several rules read the same reading of a PR (its options, its product's lines).
    _memo: dict[Callable[[Facts], object], object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def once(self, compute: Callable[[Facts], T]) -> T:
        """``compute(self)``, computed by the first rule that asks and then shared: callers only read it."""
        if compute not in self._memo:
            self._memo[compute] = compute(self)
        return cast(T, self._memo[compute])

    def diffs_where(self, keep: Callable[[str], bool]) -> list[FileDiff]:
        return [d for d in self.diffs if keep(d.path)]

    # The path lists as sets, for membership tests: a PR may change thousands of files.
    @cached_property
    def code_set(self) -> frozenset[str]:
        return frozenset(self.code_paths)

    @cached_property
    def product_set(self) -> frozenset[str]:
        return frozenset(self.product_paths)


def clean_body(body: str) -> str:
    """The body without PR-template headings, checklists and comments."""
    text = _without_comments(body)
    return "\n".join(line for line in text.splitlines() if not _TEMPLATE.fullmatch(line)).strip()


def _without_comments(text: str) -> str:
    """``text`` without its closed HTML comments. Found with str.find, not a lazy regex: a body of
    thousands of "<!--" and no "-->" would have each of them scan to the end."""
    kept, at = [], 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        kept.append(text[at:start])
        at = end + 3
    return "".join(kept) + text[at:]


def split_diff(excerpt: str) -> list[FileDiff]:
    files: list[FileDiff] = []
    current = FileDiff(path="")  # lines before any header belong to no file
    for line in excerpt.splitlines():
        first = line[:1]  # one comparison per line: diffs run to thousands of lines
        if first == "+":
            current.added.append(line[1:])
        elif first == "-":
            current.removed.append(line[1:])
        elif line.startswith("diff --git"):
            current = FileDiff(path=line.rpartition(" b/")[2])
            files.append(current)
        elif line.startswith("@@ "):
            current.contexts.append(line[3:])
    return files


def facts(pr: PullRequest, taxonomy: Taxonomy) -> Facts:
    paths = [f.path for f in pr.files] if pr.files is not None else None
    code = [p for p in paths or [] if not (is_test(p) or is_doc(p) or is_ci(p))]
    churn_by_module: dict[str, int] = {}
    code_set = set(code)
    for f in pr.files or []:
        if f.path in code_set:
            key = module_of(f.path)
            churn_by_module[key] = churn_by_module.get(key, 0) + (f.additions or 0) + (f.deletions or 0)
    diffs = split_diff(pr.diff_excerpt or "")
    return Facts(
        churn=pr.additions + pr.deletions,
        paths=paths,
        code_paths=code,
        product_paths=[p for p in code if not (is_support(p) or is_dependency(p))],
        test_paths=[p for p in paths or [] if is_test(p)],
        core_paths=[p for p in paths or [] if is_core(p, taxonomy)],
        modules=sorted(churn_by_module, key=lambda m: -churn_by_module[m]),
        body=clean_body(pr.body),
        diffs=diffs,
        diff_added=list(chain.from_iterable(d.added for d in diffs)),
        diff_removed=list(chain.from_iterable(d.removed for d in diffs)),
    )
