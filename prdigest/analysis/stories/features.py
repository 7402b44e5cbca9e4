"""What a PR is about, for grouping the week's stories: its distinctive words (title, body, file
names), the folders and files it changes, the PRs it names and its place in a numbered series.

The grouping is in `stories`, the naming and telling of a story in `story_text`.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from prdigest.models import PullRequest
from prdigest.path_kinds import is_ci, is_doc, is_test

BODY_CHARS = 2000

# Words that name no subject: function words, the verbs of every change, generic code words.
_GENERIC_WORDS = """
    a an and are as at be been but by can do does for from has have in into is it its no not of on
    or so than that the their then there these this those to up via was were when which while with
    without we our you your i all any each every more most other some such only also just now new
    add adds added adding support supports supported supporting fix fixes fixed fixing update updates
    updated updating use uses used using make makes made allow allows enable enables enabled disable
    disables remove removes removed drop drops move moves moved rename renames renamed refactor
    refactors improve improves improved bump bumps feat feature chore docs doc test tests testing ci
    build perf style revert reverts cleanup clean wip minor misc small handle handles set get run runs
    instead after before when default defaults option options issue issues bug bugs pr prs change
    changes changed follow followup up one two first second via per across keep keeps stop stops
    py md txt json yaml yml toml sh cfg ini init main utils util common core base misc helper helpers
    lib src
    co authored signed off http https www github com org
"""
GENERIC = frozenset(_GENERIC_WORDS.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)*")
_PART = re.compile(r"[_\-.]")
_URL = re.compile(r"(?<!\w)\w+://\S+")
_TRAILER = re.compile(r"^(?:co-authored-by|signed-off-by|reviewed-by):.*$", re.I | re.M)
_REFERENCE = re.compile(r"(?<![\w/])#(\d+)\b")
_SERIES = re.compile(r"[\[(]\s*(\d+)\s*/\s*(\d+)\s*[\])]")
_STEM = re.compile(r"\.[A-Za-z0-9]+$")


@dataclass(frozen=True)  # cached per PR: shared by every report of its week
class Features:
    """What a PR is about, as sparse weighted vectors, and whom it names."""

    words: dict[str, float]
    dirs: dict[str, float]
    files: dict[str, float]
    refs: set[int]
    series: tuple[int, int] | None


@dataclass
class Story:
    prs: list[PullRequest]  # merge order
    terms: list[str]  # the distinctive words its PRs share, most distinctive first
    references: list[tuple[int, int, str]] = field(default_factory=list)  # (pr, other, "revert"|"ref")
    score: float = 0.0


def tokens(text: str, generic: frozenset[str] = GENERIC) -> list[str]:
    """Lower-case words and their parts ("weights_backuper" -> it, "weights", "backuper"), not generic."""
    out: list[str] = []
    for word in _WORD.findall(_URL.sub(" ", text)):
        word = word.lower().strip(".")
        parts = [p for p in _PART.split(word) if p]
        for token in ([word] if len(parts) > 1 else []) + parts:
            token = _singular(token)
            if len(token) > 1 and not token.isdigit() and token not in generic:
                out.append(token)
    return out


@lru_cache(maxsize=64)
def generic_for(repo: str) -> frozenset[str]:
    """The generic words plus the repository's own name, which every PR of it may say."""
    return GENERIC | frozenset(tokens(repo.replace("/", " ")))


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _dirs_of(path: str) -> list[str]:
    """The folders a file lives in, deepest last; a top folder counts only for files right inside it."""
    parts = path.split("/")[:-1]
    if len(parts) == 1:
        return parts
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def features(pr: PullRequest) -> Features:
    """What ties a PR to others; read-only, and cached: chat answers rebuild the same week's report."""
    paths = tuple(f.path for f in pr.files or [])
    return _features(pr.repo, pr.number or 0, pr.title, pr.body, paths, tuple(pr.related))


@lru_cache(maxsize=8192)
def _features(
    repo: str, number: int, title: str, body: str, paths: tuple[str, ...], related: tuple[int, ...]
) -> Features:
    body = _TRAILER.sub(" ", body[:BODY_CHARS])
    generic = generic_for(repo)
    words: defaultdict[str, float] = defaultdict(float)
    for token in tokens(title, generic):  # the scope and brackets too: "(fsdp)", "[lora]" name the subject
        words[token] += 1.0
    for token in sorted(set(tokens(body, generic))):  # one summing order, so one result every run
        words[token] += 0.5
    dirs: defaultdict[str, float] = defaultdict(float)
    files: dict[str, float] = {}
    path_words: set[str] = set()
    for path in paths:
        side = is_test(path) or is_doc(path) or is_ci(path)
        weight = 0.5 if side else 1.0
        files[path] = weight
        for d in _dirs_of(path):
            dirs[d] += weight
        if not side:  # the file's own name: "weight_sync.py" speaks of weight sync
            path_words.update(tokens(_STEM.sub("", path.rsplit("/", 1)[-1]), generic))
    for token in path_words:
        words[token] += 0.3
    refs = {int(n) for n in _REFERENCE.findall(f"{title}\n{body}")} | set(related)
    match = _SERIES.search(title)
    series = (int(match.group(1)), int(match.group(2))) if match else None
    return Features(
        words=dict(words),
        dirs={d: 1 + math.log(n) if n >= 1 else n for d, n in dirs.items()},
        files=files,
        refs=refs - {number},
        series=series,
    )
