"""The periods a report is compared with: the trend chart's (the same span before a short window, months
for a long one) and its figures' (`trend_periods`).

A quarter charted as "one earlier quarter" says nothing; by month it shows the trend within it too.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Literal

from prdigest.analysis.noise import Noise, period_figures
from prdigest.analysis.report import key_numbers, risk_counts
from prdigest.analysis.review_flow import review_flow, trend_figures, week_risks
from prdigest.analysis.rules_cache import window_analyses
from prdigest.analysis.trend import Figures
from prdigest.config import Settings
from prdigest.models import PullRequest, Window
from prdigest.storage import Store
from prdigest.window import FIRST_DAY

Unit = Literal["week", "period", "month"]
EARLIER_SPANS = 8
EARLIER_MONTHS = 6
MONTHLY_OVER_DAYS = 28  # windows longer than four weeks chart by month
TREND_WEEKS = 4  # a week's figures are compared with the mean of the four before it


def chart_periods(window: Window) -> tuple[Unit, list[tuple[Window, bool]]]:
    """The chart's unit and its periods, oldest first, each with whether it is (part of) the window."""
    span = window.until - window.since + timedelta(days=1)
    if span.days > MONTHLY_OVER_DAYS:
        first = _month_start(window.since)
        starts = [_shift(first, -k) for k in range(EARLIER_MONTHS, 0, -1)]
        earlier = [_month(start, window.tz) for start in starts if start >= FIRST_DAY]
        own, start = [], window.since
        while start <= window.until:
            month = _month(start, window.tz)
            own.append(Window(since=start, until=min(month.until, window.until), tz=window.tz))
            start = month.until + timedelta(days=1)
        return "month", [(w, False) for w in earlier] + [(w, True) for w in own]
    earlier = _spans_before(window, span, EARLIER_SPANS)
    unit: Unit = "week" if span.days == 7 else "period"
    return unit, [(w, False) for w in earlier] + [(window, True)]


def trend_periods(window: Window) -> list[Window]:
    """The periods a report's figures are compared with, oldest first: the four weeks before a one-week
    window, else the one period of the same length before it."""
    span = window.until - window.since + timedelta(days=1)
    return _spans_before(window, span, TREND_WEEKS if span.days == 7 else 1)


def chart_figures(
    store: Store, repo: str, periods: list[Window], noise: Noise, counted: list[PullRequest] | None = None
) -> list[tuple[int, int, int, int]]:
    """Each period's merged PRs, additions, deletions and authors, of the PRs the ``noise`` filters count:
    the cache's (`noise.period_figures`), or with the PRs a source read to be counted and did not keep
    (``counted``), each in place of the cache's PR of its uid as storing it would have put it: what
    `noise.period_figures` gives once they are stored."""
    if counted is None:
        return [figures for figures, _ in period_figures(store, repo, periods, noise)]
    span = Window(since=periods[0].since, until=periods[-1].until, tz=periods[0].tz)
    by_uid = {pr.uid: pr for pr in store.prs_in_window(repo, span, excerpts=False)}
    by_uid.update((pr.uid, pr) for pr in counted)
    prs = noise.keep(by_uid.values())
    out = []
    for period in periods:
        # As noise.period_figures counts: a number (SQL's "is not null"; the filters' "if number").
        merged = [p for p in prs if (p.number if noise.narrows else p.number is not None)]
        merged = [p for p in merged if period.contains(p.merged_at)]
        counts = (len(merged), sum(p.additions for p in merged), sum(p.deletions for p in merged))
        out.append((*counts, len({p.author for p in merged})))
    return out


def earlier_figures(
    store: Store,
    repo: str,
    periods: list[Window],
    read: list[list[PullRequest]],
    settings: Settings,
    lang: str,
    noise: Noise,
) -> list[Figures]:
    """Each period's figures: the counts in SQL (from the PRs the ``noise`` filters count, when they
    narrow), key PRs and risks from the rules engine's (cached) analyses, by the report's own rules, and
    the review flow of its PRs (``read``: each period's, as the filters keep them) where they know
    reviews (a period without PRs has no review median, and none merged without review)."""
    taxonomy = settings.repo(repo).taxonomy
    out: list[Figures] = []
    for period, prs_read, ((prs, additions, deletions, authors), counted) in zip(
        periods, read, period_figures(store, repo, periods, noise), strict=True
    ):
        analyses = week_risks(prs_read, window_analyses(store, repo, period, taxonomy, lang), lang)
        analyses, _ = noise.quiet(analyses, counted)
        key = key_numbers(analyses, analyses, settings.report)
        counts = dict(
            merged_prs=prs, key_prs=len(key), additions=additions, deletions=deletions, authors=authors
        )
        merged = [p for p in prs_read if p.number is not None]
        known = not merged or any(p.reviews is not None for p in merged)
        flow = trend_figures(review_flow(merged)) if known else {}
        out.append({**counts, **risk_counts(analyses.values()), **flow})
    return out


def _spans_before(window: Window, span: timedelta, count: int) -> list[Window]:
    """Up to ``count`` periods of ``span`` before the window, oldest first: none begins before the first
    day a window may hold (a long window's earlier periods would, and no commit is that old)."""
    return [
        Window(since=window.since - span * k, until=window.until - span * k, tz=window.tz)
        for k in range(count, 0, -1)
        if span * k <= window.since - FIRST_DAY
    ]


def _month_start(day: date) -> date:
    return day.replace(day=1)


def _shift(first: date, months: int) -> date:
    index = first.year * 12 + first.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _month(day: date, tz: str) -> Window:
    """The calendar month of ``day``."""
    first = _month_start(day)
    return Window(since=first, until=_shift(first, 1) - timedelta(days=1), tz=tz)
