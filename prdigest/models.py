"""The data prdigest passes around: pull requests, analyses, windows and reports.

A field a source cannot supply is ``None`` (unknown), never an empty list: an
empty list means "there were none". A git clone, for instance, knows nothing of
reviews, labels, forks or checks, and rules that need them must not fire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.dataclasses import dataclass

from prdigest import LANGS as LANGS  # the languages, and their type, are the package's
from prdigest import Lang as Lang

# The review flow's figures and what is open now live in model_base; their names stay importable here.
from prdigest.model_base import Attention as Attention
from prdigest.model_base import ChecksState as ChecksState
from prdigest.model_base import Dismissal as Dismissal
from prdigest.model_base import OpenPR as OpenPR
from prdigest.model_base import ReviewFlow as ReviewFlow
from prdigest.model_base import Snooze as Snooze
from prdigest.model_base import share_every_field
from prdigest.window import Window as Window  # the period and its helpers live in window.py
from prdigest.window import is_iso_week as is_iso_week
from prdigest.window import iso_week_label as iso_week_label
from prdigest.window import zone as zone

Platform = str  # a chat platform's name, one of subscription.PLATFORMS (open: an adapter may add one)
FileStatus = Literal["added", "modified", "removed", "renamed", "copied"]
RiskLevel = Literal["low", "medium", "high"]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

# Signals a source may be unable to supply; the report lists the missing ones.
OPTIONAL_SIGNALS = ("labels", "reviews", "review_threads", "comments", "checks", "is_fork", "merged_by",
                    "created_at", "diff_excerpt")  # fmt: skip


def as_lang(value: str) -> Lang:
    """``value`` as a language prdigest speaks; a ValueError for any other."""
    for lang in LANGS:
        if value == lang:
            return lang
    raise ValueError(f"unknown language {value!r} (zh or en)")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Many(_Model):
    """A model made by the ten thousand: its instances share one set of the fields given (model_base)."""

    def model_post_init(self, context: Any, /) -> None:
        share_every_field(self)


# Slotted, not a model: a large window holds 100,000s of them, ~100 B each (a model's dict: ~1 KB).
@dataclass(slots=True, config=ConfigDict(extra="forbid"))
class FileChange:
    path: str
    # None for a binary file: git reports no line counts for it.
    additions: int | None = Field(default=0, ge=0)
    deletions: int | None = Field(default=0, ge=0)
    status: FileStatus = "modified"
    previous_path: str | None = None

    @property
    def binary(self) -> bool:
        return self.additions is None


class OptionChanges(_Model):
    """What a PR changed of the options its files expose (sources/options): keys such as
    ``flag:--lr``, ``field:TrainConfig.lr``, ``env:NAME``, ``param:func.name``, ``key:<path>:a.b``,
    with their defaults as written."""

    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    changed: dict[str, tuple[str, str]] = {}
    paths: dict[str, str] = {}  # each key's file (a removed one's before the PR)
    # The classes, functions and files that lost an option and still stand ("param:train"): a parameter
    # removed from a function that stays is an interface change, one that went with its function is not.
    kept: list[str] = []

    @property
    def empty(self) -> bool:
        return not (self.removed or self.added or self.changed)

    @staticmethod
    def owner(key: str) -> str:
        """What holds an option: its class, function or config file (flags and variables: the project)."""
        kind, _, name = key.partition(":")
        if kind == "key":
            return f"key:{name.partition(':')[0]}"
        return f"{kind}:{name.rpartition('.')[0]}" if kind in ("field", "param") else kind


class Review(_Model):
    author: str
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
    body: str = ""
    submitted_at: datetime | None = None
    is_bot: bool = False


class ReviewThread(_Model):
    path: str | None = None
    is_resolved: bool
    is_outdated: bool = False
    author: str | None = None
    body: str = ""


class Comment(_Model):
    author: str
    body: str
    created_at: datetime | None = None
    is_bot: bool = False


class PullRequest(_Many):
    """One merged pull request, or a direct push when ``number`` is None."""

    repo: str
    number: int | None = Field(default=None, gt=0)
    sha: str | None = None
    title: str
    body: str = ""
    author: str
    author_association: str | None = None
    labels: list[str] | None = None
    created_at: datetime | None = None
    ready_at: datetime | None = None  # when a draft was last marked ready for review (not in content_hash)
    merged_at: datetime
    merged_by: str | None = None
    base_branch: str | None = None
    additions: int = Field(default=0, ge=0)
    deletions: int = Field(default=0, ge=0)
    files: list[FileChange] | None = None
    commits: int | None = None
    diff_excerpt: str | None = None
    reviews: list[Review] | None = None
    review_threads: list[ReviewThread] | None = None
    comments: list[Comment] | None = None
    checks: ChecksState | None = None
    is_fork: bool | None = None
    url: str | None = None
    co_authors: list[str] | None = None
    # The PR's own references to other PRs ("follow-up to #12").
    related: list[int] = []
    # What it changed of the options its files expose; None: its source could not read the files.
    options: OptionChanges | None = None
    source: str = "fixture"  # its source's kind, one of subscription.SOURCE_KINDS

    @field_validator("merged_at", "created_at", "ready_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("timestamps need a UTC offset, e.g. 2026-09-07T10:00:00+08:00")
        return value

    @property
    def uid(self) -> str:
        """Stable identity in the cache: ``owner/name#123`` or ``owner/name@sha`` for a direct push."""
        if self.number is not None:
            return f"{self.repo}#{self.number}"
        return f"{self.repo}@{(self.sha or '')[:12]}"

    @property
    def is_direct_push(self) -> bool:
        return self.number is None

    def content_hash(self) -> str:
        """Hash of everything an analysis reads; a changed PR is analysed again."""
        payload = self.model_dump_json(exclude={"source", "ready_at"})
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def numbered(prs: Iterable[PullRequest]) -> list[tuple[int, PullRequest]]:
    """The pull requests among ``prs`` (not the direct pushes), each with its number, in order."""
    return [(pr.number, pr) for pr in prs if pr.number is not None]


class RiskLabel(_Model):
    label: str
    evidence: str
    # Where the evidence came from: diff, title, body, paths, reviews, checks, labels.
    evidence_source: str
    # The evidence shows users break this week (an option removed, a regression measured), not just a risk.
    breaks: bool = False
    # How far the evidence goes: a weak finding is a point to watch on its PR, not a risk of the week.
    strength: Literal["strong", "weak"] = "strong"
    # The rules' finding kept in a model's analysis: a fact, or a diff line the model was silent on.
    by_rules: bool = False


class PRAnalysis(_Many):
    repo: str
    number: int
    summary: str
    # The language the LLM wrote it in ("" for the rules': the report's), and its summary in the others.
    lang: str = ""
    translations: dict[str, str] = {}
    explanation: str = ""
    importance: float = Field(ge=0, le=10)
    insight: float = Field(ge=0, le=10)
    tags: list[str] = []
    risks: list[RiskLabel] = []  # the week's risks: strong findings
    weak_risks: list[RiskLabel] = []  # weak findings: told among the points to watch alone
    watch: list[str] = []
    unresolved: list[str] = []
    related: list[int] = []
    reasons: list[str] = []
    engine: Literal["rules", "llm"] = "rules"
    model: str | None = None
    version: str = ""


# --- the report -------------------------------------------------------------


class WindowOut(_Model):
    since: date
    until: date
    tz: str


class HotFile(_Model):
    path: str
    prs: list[int]


class Stats(_Model):
    merged_prs: int = 0
    key_prs: int = 0
    avg_importance: float | None = None
    avg_insight: float | None = None
    tags: dict[str, int] = {}
    authors: dict[str, int] = {}
    # Each author's share of the merged PRs, 0-1, largest first.
    author_share: dict[str, float] = {}
    hot_files: list[HotFile] = []
    hot_file_min_prs: int = 3
    risks: dict[str, int] = {}
    per_day: dict[date, int] = {}
    additions: int = 0
    deletions: int = 0
    files_changed: int = 0
    direct_pushes: int = 0
    # How many PRs each engine analysed.
    engines: dict[str, int] = {}
    review_flow: ReviewFlow | None = None  # how long PRs waited for reviews; None: the source knows none
    # Week over week: figure (merged_prs, key_prs, additions, deletions, authors, and each risk label's
    # count) -> its earlier values and the change; empty when no earlier period is known (see Trend).
    trend: dict[str, Trend] = {}


class Trend(_Model):
    """A figure against earlier periods: the four weeks before a one-week window, else the one period of
    the same length before it; ``change`` is the relative change against their mean (0.17: +17%), None
    when that mean is 0."""

    previous: list[float] = []  # oldest first
    change: float | None = None


class PeriodFigures(_Model):
    """One bar of the report's trend chart, from the cache: an earlier week (a month, for a long window)
    or the report's own period. A period the cache does not hold completely has no figures."""

    since: date
    until: date
    unit: Literal["week", "period", "month"]
    current: bool = False  # the report's own window, or one of its months
    complete: bool = True
    merged_prs: int | None = None
    additions: int | None = None
    deletions: int | None = None
    authors: int | None = None


class ReportPR(_Many):
    number: int
    title: str
    author: str
    url: str | None = None
    merged_at: datetime
    additions: int
    deletions: int
    files: int | None = None
    summary: str = ""
    importance: float | None = None
    insight: float | None = None
    tags: list[str] = []
    risks: list[str] = []  # the week's risks
    weak_risks: list[str] = []  # findings too weak to be one: the PR's points to watch tell them
    watch: list[str] = []
    key: bool = False
    related: list[int] = []


class DirectPush(_Model):
    sha: str
    title: str
    author: str
    merged_at: datetime


class Theme(_Model):
    title: str
    prs: list[int]
    story: str
    trend: str = ""
    # The theme's most important PRs, for the theme/trend table.
    representative: list[int] = []
    # Earlier PRs (of the previous weeks) the theme carries on from; None: a new theme.
    continues: list[int] | None = None


class RiskObservation(_Model):
    title: str
    prs: list[int]
    evidence: str
    label: str = ""


class RiskFollowup(_Model):
    """An observation or recommendation of an earlier week, followed until a later PR closes it."""

    label: str
    title: str
    prs: list[int]
    since: date  # the first day of the week it was made in
    status: Literal["open", "addressed", "reverted"]
    by: list[int] = []  # the later PRs that addressed or reverted it
    weeks_open: int = 0  # full weeks since it was made, while open


class Recommendation(_Model):
    text: str
    prs: list[int]


class LLMCost(_Model):
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class LLMUsage(_Model):
    """What the report's LLM answers cost, for its footer: the requests of this run, and those that made
    the answers it reused from the cache (so a report rebuilt from the cache shows what it cost)."""

    model: str
    calls: int = 0  # requests, rejected rungs and repairs included
    input_tokens: int = 0
    output_tokens: int = 0
    # By purpose: analysis, narrative, follow-up, repair, routing.
    by_purpose: dict[str, LLMCost] = {}
    run_calls: int = 0  # of them, sent by this run
    not_analysed: dict[str, int] = {}  # PRs the LLM did not analyse in this run, by why (timeout, ...)
    analysed: int = 0  # PRs the LLM analysed in this run
    cached: int = 0  # PR analyses read from the cache
    fallback: int = 0  # PRs the rules engine answered for after an LLM failure
    narrative: Literal["llm", "rules"] | None = None


class Report(_Model):
    """Everything a renderer lays out. Figures are computed in code, never generated."""

    # The row id in the cache once saved.
    id: int | None = None
    repo: str
    window: WindowOut
    engine: str
    lang: Lang = "zh"
    source: str
    generated_at: datetime
    stats: Stats
    prs: list[ReportPR] = []
    direct_pushes: list[DirectPush] = []
    themes: list[Theme] = []
    risk_observations: list[RiskObservation] = []
    recommendations: list[Recommendation] = []
    # The previous four weeks' risks and recommendations, followed (see RiskFollowup).
    risk_followups: list[RiskFollowup] = []
    summary: str = ""
    risk_level: RiskLevel = "low"
    # The label of the observation the level comes from: decided once, said alike everywhere.
    level_cause: str | None = None
    # The trend chart's periods, oldest first, ending with the report's own (see PeriodFigures).
    history: list[PeriodFigures] = []
    # What the reader must know about the data: e.g. a sync that could not read every PR.
    warnings: list[str] = []
    # How many key PRs a card lists (a subscription's top_n); None: as many as fit. Never changes a figure.
    card_prs: int | None = None
    # What the LLM engine spent on this report; None when the rules engine wrote it all.
    llm_usage: LLMUsage | None = None
    unavailable: list[str] = []
    # Open PRs that need attention; None when the source cannot tell (a clone: "open_prs" is unavailable).
    attention: Attention | None = None
    # The risk labels admins dismissed that this report leaves out, with who dismissed them.
    dismissed: list[Dismissal] = []
    # What people quieted from a card's buttons that this report leaves out: risk labels, open PRs.
    snoozed: list[Snooze] = []
    # GitHub login -> the delivering chat's mention of that person (built by its adapter), for the open
    # PRs' reviewers; empty unless [attention] mention_reviewers: logins are then written as plain names.
    mentions: dict[str, str] = {}
    # A team digest: each repository's own report, in the subscription's order. The team report's figures
    # are their sums (averages weighted by key PRs); its prs, themes and risks stay in the parts.
    parts: list[Report] = []
