"""What keeps the models made by the ten thousand small (models.py): a large window's PRs, their analyses,
the report's rows; the review flow's figures, which the report's Stats holds (`ReviewFlow`); and what is
open now and what people quieted (`Attention`, `Dismissal`, `Snooze`), which a report carries beside its
window."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict


def share_every_field(model: BaseModel) -> None:
    """Give the instance the set of "the fields given" its class's instances share, holding every field.

    pydantic keeps one such set per instance (0.7-2 KB; ~80 MB for a 20,000-PR report). prdigest never
    asks which fields were given (no ``exclude_unset``), and adding a field to a set that holds them all
    changes nothing."""
    object.__setattr__(model, "__pydantic_fields_set__", _every_field(type(model)))


@cache
def _every_field(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PRFlow(_Figures):
    """One merged PR's review flow, in hours; None where it had no such interval.

    A review counts when someone other than the PR's author and no bot submitted it; the wait for the
    first one starts when the PR was opened, or when a draft was marked ready for review (when the source
    knows it)."""

    number: int
    first_review_hours: float | None = None  # opened (or ready) -> the first review by another person
    approval_to_merge_hours: float | None = None  # the first approval by another person -> merged
    open_to_merge_hours: float | None = None  # opened -> merged
    reviewed: bool = False  # someone other than its author (and no bot) reviewed it


class ReviewFlow(_Figures):
    """How long a period's merged PRs waited for reviews, and who gave them (analysis/review_flow.py).

    The medians and 90th percentiles are over the PRs that have the interval, None when none has;
    the whole is None on a report whose source knows no reviews (a git clone): unknown, not zero."""

    first_review_hours_median: float | None = None
    first_review_hours_p90: float | None = None
    approval_to_merge_hours_median: float | None = None
    approval_to_merge_hours_p90: float | None = None
    open_to_merge_hours_median: float | None = None
    open_to_merge_hours_p90: float | None = None
    merged_without_review: int = 0  # no review by another person (approved by its author alone counts)
    reviewed_prs: int = 0  # PRs reviewed by another person
    # Submitted reviews of any state per reviewer, most first; PRs' authors and bots left out.
    reviews_by_reviewer: dict[str, int] = {}
    prs: list[PRFlow] = []  # the PRs whose reviews are known, in merge order


class ChecksState(_Figures):
    state: Literal["SUCCESS", "FAILURE", "ERROR", "PENDING", "EXPECTED", "NEUTRAL"]
    failing: list[str] = []
    skipped: list[str] = []


# Why an open PR needs someone: waiting for a first review, approved and not merged, large and unreviewed.
OpenReason = Literal["waiting_review", "approved_not_merged", "large_unreviewed"]


class OpenPR(_Figures):
    """An open pull request that needs someone: waiting for review, approved but not merged, or large
    and unreviewed (the thresholds are [attention] settings)."""

    number: int
    title: str
    author: str
    url: str | None = None
    created_at: datetime
    additions: int = 0
    deletions: int = 0
    is_draft: bool = False
    reason: OpenReason
    waiting_days: int = 0  # days since it was opened (waiting_review, large_unreviewed) or approved
    # Who was asked: the reviewers GitHub says were requested (logins; a team as "org/team"), and the
    # CODEOWNERS owners of its changed files at the default branch (same forms), each in GitHub's order.
    requested: list[str] = []
    owners: list[str] = []

    @property
    def asked(self) -> list[str]:
        """Whom a nudge names: the requested reviewers, else the files' code owners."""
        return self.requested or self.owners


class Attention(_Figures):
    """What is open and needs someone now, read when the report is made (not part of the window)."""

    open_prs: list[OpenPR] = []
    default_branch: str | None = None
    # The default branch's newest commit's checks: FAILURE or ERROR is a red main line. None: unknown.
    default_branch_checks: ChecksState | None = None
    read_at: datetime | None = None


class Dismissal(_Figures):
    """An admin's word that one PR's risk label is not a risk: the label is left out of every later report."""

    repo: str
    number: int
    label: str
    by: str
    at: datetime


class Snooze(_Figures):
    """A card button's word, with who said it and when: a risk label of the repository quiet until
    ``until`` ("snooze a week"); an open PR quiet until ``until``, or acknowledged (``until`` None) for as
    long as it waits for the same reason (``label``: that reason; "" for a snooze)."""

    repo: str
    kind: Literal["risk", "open"]
    number: int  # the open PR's; 0 for a risk label
    label: str
    until: datetime | None = None
    by: str
    at: datetime
