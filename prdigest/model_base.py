"""What keeps the models made by the ten thousand small (models.py): a large window's PRs, their analyses,
the report's rows; and the review flow's figures, which the report's Stats holds (`ReviewFlow`)."""

from __future__ import annotations

from functools import cache

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
