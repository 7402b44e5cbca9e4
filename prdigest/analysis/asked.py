"""What a question asks of a period's PRs, read from its structure before its words: the people it names
(matched to the PRs' authors), the risks (to their labels), the paths or subsystems (to the files the PRs
changed) and a ranking ("riskiest", "biggest", "最重要"). The PRs that answer it are found by those fields;
the full-text search is for the questions that name none of them."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from prdigest.models import PullRequest, ReportPR

Rank = Literal["risk", "size", "importance"]

# A risk named in words, each to its label.
# fmt: off
_RISK_PHRASES = (
    ("tests_removed", r"\b(?:remov|delet|drop)\w*\s+(?:\w+\s+)?tests?\b"
                      r"|\btests?\s+(?:were\s+)?(?:removed|deleted|dropped)\b|(?:删除|删掉|移除|去掉)了?.{0,4}测试"),
    ("no_tests", r"\bwithout\s+(?:any\s+)?tests?\b|\bno\s+tests?\b|\buntested\b"
                 r"|没有测试|缺少测试|没(?:写|加)测试"),
    ("security_sensitive", r"\bsecurity\b|\bvulnerab\w*|安全"),
    ("perf_regression", r"\bperformance\s+regressions?\b|\bslow(?:er|down)\b|性能(?:回退|下降)"),
    ("config_breaking", r"\bbreaking\b|\bconfig(?:uration)?\s+changes?\b|破坏性|配置变更"),
    ("dependency_change", r"\bdependenc(?:y|ies)\b|\bdeps\b|依赖"),
    ("unresolved_threads", r"\bunresolved\b|未解决"),
    ("failing_checks", r"\bfailing\s+(?:checks|ci|tests)\b|\bred\s+ci\b|检查(?:失败|未通过)"),
    ("large_low_review", r"\b(?:little|light|no)\s+reviews?\b|\bunreviewed\b|缺少评审|没人评审"),
)
_RISK_WORDS = tuple((label, re.compile(words, re.I)) for label, words in _RISK_PHRASES)
# "The riskiest PR" asks for one PR ranked by its risks (the chat reads it so, not as the week's risks).
RISKIEST = re.compile(r"\briskiest\b|\bmost\s+(?:risky|dangerous)\b|风险最(?:大|高)|最危险", re.I)
_RANKS: tuple[tuple[Rank, re.Pattern[str]], ...] = (
    ("risk", RISKIEST),
    ("size", re.compile(r"\b(?:biggest|largest)\b|\bmost\s+(?:lines|code)\b|最大|改动最多", re.I)),
    ("importance", re.compile(r"\bmost\s+important\b|\bmost\s+significant\b|最重要", re.I)),
)
# fmt: on
# A word of a question, with the hyphens and dots names keep ("Shi-Dong", "rollout.py").
_TOKEN = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")
# A search starts only where a name starts, and never takes a run back: linear time on any text.
_PATHISH = re.compile(
    r"(?<![\w.-])[\w.-]++/[\w./-]*+|(?<![\w.-])[\w-]++\.(?:py|rs|go|ts|js|cpp|cu|h|md|toml|ya?ml|json|sh)\b"
)
# Words too common to name a person or a part of the code.
# fmt: off
_COMMON = frozenset({
    "what", "which", "who", "whom", "when", "where", "why", "how", "did", "does", "do", "the", "this", "that",
    "work", "worked", "working", "on", "in", "of", "for", "and", "or", "any", "all", "prs", "pr", "pull",
    "requests", "request", "merged", "merge", "week", "last", "changed", "change", "changes", "touched",
    "touch", "file", "files", "code", "test", "tests", "was", "were", "is", "are", "by", "from", "with",
    "about", "show", "me", "list", "give", "tell", "there", "have", "has", "been", "get", "got", "new",
    "fix", "fixes", "fixed", "add", "added", "update", "updated", "main", "src", "lib", "init", "utils",
})
# fmt: on
MIN_NAME = 3  # a shorter word names no one and no directory


@dataclass(frozen=True)
class Asked:
    """The structure of a question: all empty when it names none of it."""

    people: frozenset[str] = frozenset()  # authors as the PRs write them
    labels: frozenset[str] = frozenset()
    paths: tuple[str, ...] = ()  # path fragments, as written, lower case
    rank: Rank | None = None

    @property
    def named(self) -> bool:
        return bool(self.people or self.labels or self.paths or self.rank)


def fold(text: str) -> str:
    """A name as compared: no case, no accents, letters and digits only ("Shi-Dong" is "shidong")."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.casefold())


def read_asked(question: str, prs: Sequence[PullRequest], authors: Sequence[str] = ()) -> Asked:
    """The people (among the PRs' authors and ``authors``), risks, paths and ranking ``question`` names."""
    paths = [p.lower().strip("./") for p in _PATHISH.findall(question)]
    tokens = [t for t in _TOKEN.findall(_PATHISH.sub(" ", question)) if t.casefold() not in _COMMON]
    people = _people(tokens, {a for pr in prs for a in [pr.author, *(pr.co_authors or [])]} | set(authors))
    named = {fold(p) for p in people} | {fold(part) for p in people for part in re.split(r"[\s()]+", p)}
    components = _components(prs)
    paths += [t.lower() for t in tokens if t.lower() in components and fold(t) not in named]
    return Asked(
        people=frozenset(people),
        labels=frozenset(label for label, words in _RISK_WORDS if words.search(question)),
        paths=tuple(dict.fromkeys(paths)),
        rank=next((rank for rank, words in _RANKS if words.search(question)), None),
    )


def _people(tokens: list[str], authors: set[str]) -> set[str]:
    """The authors a question names: by their login, a part of their name ("Jiajun" of "Jiajun Li") or their
    email's local part."""
    found: set[str] = set()
    for token in tokens:
        key = fold(token)
        if len(key) < MIN_NAME:
            continue
        for author in authors:
            # "Jiajun Li <jiajun.li@example.com>" (a co-author): its name's parts and its email's local part
            parts = {fold(p.partition("@")[0]) for p in re.split(r"[\s()<>]+", author) if p}
            if key == fold(author) or key in parts:
                found.add(author)
    return found


def _components(prs: Sequence[PullRequest]) -> set[str]:
    """The directory names and file stems of the PRs' files: what "the scheduler" may name."""
    found: set[str] = set()
    for pr in prs:
        for change in pr.files or []:
            parts = change.path.lower().split("/")
            found.update(parts[:-1])
            found.add(posixpath.splitext(parts[-1])[0])
    return {c for c in found if len(c) >= MIN_NAME and c not in _COMMON}


def select(asked: Asked, prs: Sequence[PullRequest], report: Sequence[ReportPR]) -> list[int]:
    """The numbers of the PRs that answer ``asked``, best first: those that match every field it names,
    ranked as it asks (else by importance); a ranking alone is its top three."""
    analysed = {p.number: p for p in report}
    chosen = [pr for pr in prs if pr.number is not None and _matches(asked, pr, analysed.get(pr.number))]
    ranked = sorted(chosen, key=lambda pr: _score(asked.rank, pr, analysed.get(pr.number or 0)), reverse=True)
    numbers = [pr.number for pr in ranked if pr.number is not None]
    only_ranked = asked.rank is not None and not (asked.people or asked.labels or asked.paths)
    return numbers[:3] if only_ranked else numbers


def _matches(asked: Asked, pr: PullRequest, analysed: ReportPR | None) -> bool:
    if asked.people and not asked.people & {pr.author, *(pr.co_authors or [])}:
        return False
    found = set(analysed.risks + analysed.weak_risks) if analysed is not None else set()
    if asked.labels and not asked.labels & found:
        return False
    files = [f.path.lower() for f in pr.files or []]
    return not asked.paths or any(_touches(path, files) for path in asked.paths)


def _touches(fragment: str, files: list[str]) -> bool:
    """Whether a file is, or lies under, the fragment ("scheduler" names miles/scheduler.py and a
    scheduler/ directory; "rollout/engine.py" the file)."""
    for path in files:
        parts = path.split("/")
        stems = {*parts[:-1], posixpath.splitext(parts[-1])[0], parts[-1]}
        if fragment in stems or path.endswith(fragment) or f"/{fragment}/" in f"/{path}":
            return True
    return False


def _score(rank: Rank | None, pr: PullRequest, analysed: ReportPR | None) -> float:
    if rank == "size":
        return pr.additions + pr.deletions
    if rank == "risk":
        return len(analysed.risks) * 10 + (analysed.importance or 0) if analysed else 0
    return analysed.importance or 0 if analysed else 0
