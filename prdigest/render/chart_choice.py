"""Which of a report's figures earn a chart: a chart only where it tells more than one line of text.

Pure rules over `Stats`, so that the page and the cards decide alike.
"""

from __future__ import annotations

from prdigest.models import Stats

# A tag on at least this share of the merged PRs says the week by itself: "22 of 30 PRs are testing".
DOMINANT_SHARE = 0.5
# Below this many tags a chart has too few bars to compare: a line of text names them all.
MIN_TAGS_FOR_CHART = 3


def dominant_tag(stats: Stats) -> tuple[str, int] | None:
    """The most frequent tag and its PR count when it dominates: it is on >= DOMINANT_SHARE of the merged
    PRs, or there are fewer than MIN_TAGS_FOR_CHART tags. None when the tags need a chart, or are none."""
    if not stats.tags or not stats.merged_prs:
        return None
    tag, n = max(stats.tags.items(), key=lambda kv: kv[1])  # first of equals: stats list ties in order
    if n >= DOMINANT_SHARE * stats.merged_prs or len(stats.tags) < MIN_TAGS_FOR_CHART:
        return tag, n
    return None


def tag_chart_worth(stats: Stats) -> bool:
    return bool(stats.tags) and dominant_tag(stats) is None


def merge_days(stats: Stats) -> int:
    """Days of the window on which at least one PR was merged."""
    return sum(1 for n in stats.per_day.values() if n)


def per_day_chart_worth(stats: Stats) -> bool:
    """A chart of merges by day compares days: it needs at least two days with merges."""
    return merge_days(stats) > 1
