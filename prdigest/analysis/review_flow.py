"""The review flow of a period's merged PRs: how long each waited for its first review, from its first
approval to its merge and from opening to merge; who gave the reviews; and the week's risk of one reviewer
carrying most of them (`review_concentration`).

A review counts when it was submitted (not pending) by someone other than the PR's author, and by no bot.
A PR whose reviews its source does not know (a git clone) has no flow: unknown, never "unreviewed".
Every figure here is computed from the PRs' timestamps; nothing is generated.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from statistics import median

from prdigest.i18n import texts
from prdigest.model_base import PRFlow, ReviewFlow
from prdigest.models import PRAnalysis, PullRequest, Review, RiskLabel

# review_concentration: one reviewer gave more than half the reviews of a week with at least this many
# PRs reviewed by another person (fewer say nothing of a team's habits).
CONCENTRATION_MIN_PRS = 10
CONCENTRATION_LABEL = "review_concentration"
HOURS = 3600.0

# The figures compared week over week (analysis/trend.py): the medians and the count.
TREND_FIGURES = (
    "first_review_hours_median",
    "approval_to_merge_hours_median",
    "open_to_merge_hours_median",
    "merged_without_review",
)


def counts(review: Review, author: str) -> bool:
    """Whether a review is one by another person: submitted, not by the PR's author, not by a bot."""
    return (
        review.state != "PENDING"
        and not review.is_bot
        and not review.author.endswith("[bot]")
        and (review.author != author)
    )


def reviewers_of(pr: PullRequest) -> list[Review]:
    """The PR's reviews by other people, the first submitted first (an undated one last); [] when none,
    also when its reviews are unknown."""
    found = [r for r in pr.reviews or [] if counts(r, pr.author)]
    return sorted(found, key=lambda r: (r.submitted_at is None, r.submitted_at or pr.merged_at))


def pr_flow(pr: PullRequest) -> PRFlow | None:
    """One PR's intervals, in hours; None when its reviews are unknown or it is a direct push."""
    if pr.reviews is None or pr.number is None:
        return None
    others = reviewers_of(pr)
    ready = pr.created_at
    if ready is not None and pr.ready_at is not None:
        ready = max(ready, pr.ready_at)  # a draft was asked for reviews once marked ready
    first = next((r.submitted_at for r in others if r.submitted_at is not None), None)
    approved = next((r.submitted_at for r in others if r.state == "APPROVED" and r.submitted_at), None)
    return PRFlow(
        number=pr.number,
        first_review_hours=_hours(ready, first),
        approval_to_merge_hours=_hours(approved, pr.merged_at),
        open_to_merge_hours=_hours(pr.created_at, pr.merged_at),
        reviewed=bool(others),
    )


def review_flow(prs: Iterable[PullRequest]) -> ReviewFlow:
    """The flow of the PRs whose reviews are known (direct pushes have none)."""
    known = [pr for pr in prs if pr.reviews is not None and pr.number is not None]
    rows = [row for pr in known if (row := pr_flow(pr)) is not None]
    given = Counter(r.author for pr in known for r in reviewers_of(pr))
    return summarise(rows, given)


def summarise(rows: Sequence[PRFlow], given: Counter[str]) -> ReviewFlow:
    """The period's figures from its PRs' rows and the reviews each reviewer gave (a team's: its
    repositories' rows together)."""

    def figure(name: str) -> tuple[float | None, float | None]:
        values = [v for row in rows if (v := getattr(row, name)) is not None]
        return (round(median(values), 2), percentile(values, 0.9)) if values else (None, None)

    first, approval, total = (
        figure("first_review_hours"),
        figure("approval_to_merge_hours"),
        figure("open_to_merge_hours"),
    )
    return ReviewFlow(
        first_review_hours_median=first[0], first_review_hours_p90=first[1],
        approval_to_merge_hours_median=approval[0], approval_to_merge_hours_p90=approval[1],
        open_to_merge_hours_median=total[0], open_to_merge_hours_p90=total[1],
        merged_without_review=sum(1 for row in rows if not row.reviewed),
        reviewed_prs=sum(1 for row in rows if row.reviewed),
        reviews_by_reviewer=dict(sorted(given.items(), key=lambda kv: (-kv[1], kv[0]))),
        prs=list(rows),
    )  # fmt: skip


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile: the smallest value at least ``share`` of the values do not exceed."""
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 2)


def trend_figures(flow: ReviewFlow | None) -> dict[str, float]:
    """The flow's figures compared week over week; those it does not know are left out (unknown)."""
    if flow is None:
        return {}
    return {name: float(v) for name in TREND_FIGURES if (v := getattr(flow, name)) is not None}


def concentration(flow: ReviewFlow | None) -> tuple[str, int, int] | None:
    """(reviewer, their reviews, every review) when one reviewer gave more than half the reviews of a
    period with at least CONCENTRATION_MIN_PRS reviewed PRs; else None."""
    if flow is None or flow.reviewed_prs < CONCENTRATION_MIN_PRS or not flow.reviews_by_reviewer:
        return None
    total = sum(flow.reviews_by_reviewer.values())
    reviewer, given = next(iter(flow.reviews_by_reviewer.items()))  # most first
    return (reviewer, given, total) if given * 2 > total else None


def week_risks(
    prs: Sequence[PullRequest], analyses: dict[int, PRAnalysis], lang: str
) -> dict[int, PRAnalysis]:
    """The analyses with the period's review risks added (a copy where one is): `review_concentration`
    on each PR the dominant reviewer reviewed, with the figures as evidence. A period whose reviews are
    unknown gets none."""
    if not any(pr.reviews is not None for pr in prs):
        return analyses
    flow = review_flow(prs)
    found = concentration(flow)
    if found is None:
        return analyses
    reviewer, given, total = found
    evidence = texts(lang)["ev_review_concentration"].format(
        reviewer=reviewer, n=given, total=total, share=f"{given / total:.0%}", prs=flow.reviewed_prs
    )
    risk = RiskLabel(label=CONCENTRATION_LABEL, evidence=evidence, evidence_source="reviews")
    out = dict(analyses)
    for pr in prs:
        analysis = analyses.get(pr.number or 0)
        if analysis is None or not any(r.author == reviewer for r in reviewers_of(pr)):
            continue
        if all(r.label != CONCENTRATION_LABEL for r in analysis.risks):
            out[analysis.number] = analysis.model_copy(update={"risks": [*analysis.risks, risk]})
    return out


def _hours(start: datetime | None, end: datetime | None) -> float | None:
    """Hours from ``start`` to ``end`` (0 for an end before the start: a draft reviewed before it was
    marked ready); None when either is unknown."""
    if start is None or end is None:
        return None
    return round(max(0.0, (end - start).total_seconds() / HOURS), 2)
