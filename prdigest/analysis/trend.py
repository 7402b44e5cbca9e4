"""Week over week: a report's figures against the same figures of the periods before it.

The figures are the merged PRs, key PRs, lines added and deleted, distinct authors, each risk label's
count and, where the source knows reviews, the review flow's medians and PRs merged without review
(`REVIEW_FIGURES`); `change` is relative to the mean of the earlier periods (None when that mean is 0:
"+inf%" says nothing). Only periods the cache holds completely are compared: a partial week would read as
a drop. A review figure is compared only when the report and every earlier period know it (a week
without a reviewed PR has no median: unknown, not 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from prdigest.analysis.review_flow import TREND_FIGURES, trend_figures
from prdigest.models import Stats, Trend

FIGURES = ("merged_prs", "key_prs", "additions", "deletions", "authors")
REVIEW_FIGURES = TREND_FIGURES
# The figures that are no risk label's count (week_words tells the risk labels apart by this).
NOT_RISKS = (*FIGURES, *REVIEW_FIGURES)

Figures = Mapping[str, float]


def stats_figures(stats: Stats) -> dict[str, float]:
    """The report's own figures, as its earlier periods' are counted (see `trend`)."""
    own = dict(
        merged_prs=stats.merged_prs,
        key_prs=stats.key_prs,
        additions=stats.additions,
        deletions=stats.deletions,
        authors=len(stats.authors),
    )
    return {**own, **stats.risks, **trend_figures(stats.review_flow)}


def trend(current: Figures, previous: Sequence[Figures]) -> dict[str, Trend]:
    """Each figure's earlier values (oldest first) and change against their mean; risk labels seen in
    any period count 0 where they did not fire, a review figure is left out unless every period knows
    it. Empty when no earlier period is known."""
    if not previous:
        return {}
    labels = sorted({k for figures in [current, *previous] for k in figures} - set(NOT_RISKS))
    known = [name for name in REVIEW_FIGURES if all(name in figures for figures in [current, *previous])]
    out = {}
    for name in (*FIGURES, *labels, *known):
        earlier = [float(figures.get(name, 0)) for figures in previous]
        mean = fmean(earlier)
        change = round((current.get(name, 0) - mean) / mean, 3) if mean else None
        out[name] = Trend(previous=earlier, change=change)
    return out
