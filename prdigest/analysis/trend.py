"""Week over week: a report's figures against the same figures of the periods before it.

The figures are the merged PRs, key PRs, lines added and deleted, distinct authors and each risk label's
count; `change` is relative to the mean of the earlier periods (None when that mean is 0: "+inf%" says
nothing). Only periods the cache holds completely are compared: a partial week would read as a drop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from prdigest.models import Stats, Trend

FIGURES = ("merged_prs", "key_prs", "additions", "deletions", "authors")

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
    return {**own, **stats.risks}


def trend(current: Figures, previous: Sequence[Figures]) -> dict[str, Trend]:
    """Each figure's earlier values (oldest first) and change against their mean; risk labels seen in
    any period count 0 where they did not fire. Empty when no earlier period is known."""
    if not previous:
        return {}
    labels = sorted({k for figures in [current, *previous] for k in figures} - set(FIGURES))
    out = {}
    for name in (*FIGURES, *labels):
        earlier = [float(figures.get(name, 0)) for figures in previous]
        mean = fmean(earlier)
        change = round((current.get(name, 0) - mean) / mean, 3) if mean else None
        out[name] = Trend(previous=earlier, change=change)
    return out
