"""The review flow (`stats.review_flow`) in words, for every renderer and the `reviewers` chat command.

Platform-free plain text; PR numbers are written "#N" for each renderer to link as it links PRs, and the
reviewers' logins are left for the renderer to escape. The figures are the report's; nothing is computed
here beyond choosing which PRs to name.
"""

from __future__ import annotations

from prdigest.model_base import PRFlow, ReviewFlow
from prdigest.models import Report
from prdigest.render.week_words import change_text

CARD_PRS = 2  # PRs merged without review the card's line names
SLOWEST = 3  # PRs slowest to a first review a reply names
REVIEWERS = 5  # reviewers a line names, the busiest first


def hours(value: float | None, t: dict[str, str]) -> str:
    """ "27.8 h" / "27.8 小时"; "-" where no PR had the interval."""
    return t["rf_unknown"] if value is None else t["rf_hours"].format(h=f"{value:.1f}".removesuffix(".0"))


def unreviewed(flow: ReviewFlow) -> list[int]:
    """The PRs merged with no review by another person, in merge order."""
    return [row.number for row in flow.prs if not row.reviewed]


def slowest(flow: ReviewFlow, n: int = SLOWEST) -> list[PRFlow]:
    """The PRs that waited longest for a first review, the longest first."""
    waited = [row for row in flow.prs if row.first_review_hours is not None]
    return sorted(waited, key=lambda row: (-(row.first_review_hours or 0), row.number))[:n]


def cite(numbers: list[int], limit: int) -> str:
    return " ".join(f"#{n}" for n in numbers[:limit]) + (" …" if len(numbers) > limit else "")


def medians_words(report: Report, t: dict[str, str]) -> str:
    """The three medians (the first review's p90 too), with the first review's change week over week."""
    flow = report.stats.review_flow
    assert flow is not None
    text = t["rf_medians"].format(
        first=hours(flow.first_review_hours_median, t),
        first90=hours(flow.first_review_hours_p90, t),
        approval=hours(flow.approval_to_merge_hours_median, t),
        total=hours(flow.open_to_merge_hours_median, t),
    )
    trend = report.stats.trend.get("first_review_hours_median")
    if trend is not None and trend.change is not None and flow.first_review_hours_median is not None:
        text += t["rf_change"].format(change=change_text(trend, flow.first_review_hours_median, t))
    return text


def unreviewed_words(flow: ReviewFlow, t: dict[str, str], limit: int) -> str:
    """ "merged without review: 2 #3 #4", or that every PR was reviewed."""
    numbers = unreviewed(flow)
    if not numbers:
        return t["rf_unreviewed_none"]
    return f"{t['rf_unreviewed'].format(n=len(numbers))} {cite(numbers, limit)}"


def reviewers_words(flow: ReviewFlow, t: dict[str, str], limit: int = REVIEWERS) -> str:
    """ "Reviews by reviewer: bob 4, carol 1" (the busiest first); "" when no one reviewed."""
    busiest = list(flow.reviews_by_reviewer.items())[:limit]
    items = [t["rf_reviewer"].format(reviewer=who, n=n) for who, n in busiest]
    more = " …" if len(flow.reviews_by_reviewer) > limit else ""
    return t["rf_reviewers"].format(items=t["list_sep"].join(items) + more) if items else ""


def slowest_words(flow: ReviewFlow, t: dict[str, str], n: int = SLOWEST) -> str:
    """ "Longest to a first review: #12 65 h, #9 40 h"; "" when no PR was reviewed."""
    rows = slowest(flow, n)
    items = [f"#{row.number} {hours(row.first_review_hours, t)}" for row in rows]
    return t["rf_slowest"].format(items=t["list_sep"].join(items)) if items else ""


def flow_lines(report: Report, t: dict[str, str]) -> list[str]:
    """The review flow of the thread and the Markdown: the medians, the PRs merged without review, the
    reviews by reviewer, the slowest to a first review; [] where the source knows no reviews."""
    flow = report.stats.review_flow
    if flow is None or not flow.prs:
        return []
    lines = [medians_words(report, t), unreviewed_words(flow, t, 10)]
    return [line for line in (*lines, reviewers_words(flow, t), slowest_words(flow, t)) if line]


def card_words(report: Report, t: dict[str, str]) -> str:
    """The card's one line: the first review's median and the PRs merged without review (the first named);
    "" where the source knows no reviews."""
    flow = report.stats.review_flow
    if flow is None or not flow.prs:
        return ""
    first = hours(flow.first_review_hours_median, t)
    return t["rf_card"].format(first=first, unreviewed=unreviewed_words(flow, t, CARD_PRS))
