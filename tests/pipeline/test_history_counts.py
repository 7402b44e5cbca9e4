"""The history chart's earlier periods that the trend does not compare are counted from a lighter read of
the source (a clone: no patch, no options) and not kept: their bars are the figures a full read gives, and
the cache holds neither their PRs nor a record of having read them. On the six-week clone of test_trend
(W32..W37; a W37 report compares W33..W36 and charts W32 too)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path

import pytest
from test_trend import NOW, REPO, WEEK, build_clone, utc_settings

from prdigest.models import PeriodFigures, PullRequest, Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store, coverage
from prdigest.subscription import Subscription, SubscriptionFilters

W32 = Window(since="2026-08-03", until="2026-08-09", tz="UTC")  # the clone's first week: charted only


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("counts") / "app")


class Counting(GitSource):
    """The clone, recording which windows it was asked to read for counts and to read whole."""

    def __init__(self, path: Path, light: bool = True) -> None:
        super().__init__(path, repo=REPO)
        self.light = light
        self.counted: list[Window] = []
        self.read: list[Window] = []

    def read_for_counts(self, window: Window) -> Iterable[PullRequest] | None:
        self.counted.append(window)
        return super().read_for_counts(window) if self.light else None

    def stream(self, window: Window, left_out=None):  # type: ignore[no-untyped-def]
        self.read.append(window)
        return super().stream(window, left_out)


def report(
    store: Store, source: GitSource | None, window: Window, authors: list[str] | None = None
) -> Report:
    sub = Subscription(
        platform="console", chat_id="c", repo=REPO, filters=SubscriptionFilters(authors=authors or [])
    )
    return make_report(
        utc_settings(), store, source, window, repo=REPO, lang="en", save=False, use_llm=False, now=NOW,
        subscription=sub,
    )  # fmt: skip


def bar(history: list[PeriodFigures], since: date) -> tuple[object, ...]:
    found = next(h for h in history if h.since == since)
    return found.complete, found.merged_prs, found.additions, found.deletions, found.authors


def own(r: Report) -> tuple[object, ...]:
    s = r.stats
    return True, s.merged_prs, s.additions, s.deletions, len(s.authors)


@pytest.mark.parametrize("authors", [None, ["Ann", "Cai"]])
def test_a_charted_week_is_counted_as_its_own_report_counts_it_and_not_kept(
    clone: Path, tmp_path: Path, authors: list[str] | None
) -> None:
    source = Counting(clone)
    store = Store(tmp_path / "cache.db")
    try:
        week = report(store, source, WEEK, authors)
        assert source.counted == [W32]  # W33..W36 were read whole for the trend, before the chart
        assert all(w.since > W32.until for w in source.read)
        assert store.prs_in_window(REPO, W32) == []  # counted, not kept
        assert coverage.missing(store, REPO, W32, NOW) == [W32]  # nor recorded as read
        # A cache-only report of the week charts W32 as not read; the clone's own report counts it.
        assert bar(report(store, None, WEEK, authors).history, W32.since) == (False, None, None, None, None)
    finally:
        store.close()
    alone = Store(tmp_path / "alone.db")
    try:
        first = report(alone, GitSource(clone, repo=REPO), W32, authors)
    finally:
        alone.close()
    assert first.stats.merged_prs == (2 if authors is None else 1)  # the filter counts fewer PRs
    assert bar(week.history, W32.since) == own(first)


def test_a_source_without_a_lighter_read_reads_the_charted_week_into_the_cache(
    clone: Path, tmp_path: Path
) -> None:
    light, whole = Counting(clone), Counting(clone, light=False)
    bars = {}
    for name, source in (("light", light), ("whole", whole)):
        store = Store(tmp_path / f"{name}.db")
        try:
            bars[name] = report(store, source, WEEK).history
            kept = store.prs_in_window(REPO, W32)
        finally:
            store.close()
        assert len(kept) == (0 if source is light else 2)
    assert whole.counted == [W32] and W32 in whole.read
    assert bars["light"] == bars["whole"]


def test_a_partly_cached_charted_week_counts_the_cache_and_the_read_once(clone: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "cache.db")
    try:
        # One of W32's PRs reaches the cache without a complete read (e.g. `explain #1`).
        store.upsert_prs(p for p in GitSource(clone, repo=REPO).fetch(W32) if p.number == 1)
        source = Counting(clone)
        week = report(store, source, WEEK)
    finally:
        store.close()
    assert source.counted == [W32]
    assert bar(week.history, W32.since)[:2] == (True, 2)  # the cached PR and the counted one of its number
