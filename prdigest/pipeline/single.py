"""From a source to a Report: read, cache, analyse once, compute. The CLI, chat and scheduler call this."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ContextDecorator, nullcontext, suppress
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from prdigest.analysis.continuity import continue_themes
from prdigest.analysis.followups.track import follow_risks
from prdigest.analysis.history import chart_figures, chart_periods, earlier_figures, trend_periods
from prdigest.analysis.noise import Noise, file_left_out, noise_for
from prdigest.analysis.report import build_report
from prdigest.analysis.review_flow import week_risks
from prdigest.analysis.rules_cache import cached_analyses, window_analyses
from prdigest.analysis.trend import stats_figures, trend
from prdigest.clock import utc_now
from prdigest.config import Settings, Taxonomy
from prdigest.errors import SourceError
from prdigest.i18n import texts
from prdigest.models import (
    OPTIONAL_SIGNALS,
    Dismissal,
    PeriodFigures,
    PRAnalysis,
    PullRequest,
    Report,
    Snooze,
    Window,
    iso_week_label,
    numbered,
)
from prdigest.progress import progress
from prdigest.sources.attention import read_attention
from prdigest.sources.base import BatchHook, Source, read_span
from prdigest.sources.prepared import prepared_report, prepared_store
from prdigest.sources.repo_file import repo_settings
from prdigest.storage import Store, coverage
from prdigest.subscription import Subscription

if TYPE_CHECKING:  # the LLM engine (and openai) is imported only when an LLM is configured
    from prdigest.analysis.llm import LLMEngine


def read_window(
    store: Store, source: Source, window: Window, each_batch: BatchHook | None = None
) -> list[str]:
    """Bring the window into the cache from the source and record the days it read completely; returns
    warnings for the report (a partial sync). ``each_batch`` gets the PRs as they are stored (BatchHook)."""
    return source.read_into(store, window, each_batch)


def read_missing(
    store: Store,
    source: Source | None,
    repo: str,
    window: Window,
    now: datetime,
    each_batch: BatchHook | None = None,
) -> tuple[list[str], list[Window]]:
    """Read the days of the window the cache lacks from the source (a complete cache costs one query);
    returns the read's warnings and the runs of days still missing (no source, a partial sync)."""
    gaps = coverage.missing(store, repo, window, now)
    warnings: list[str] = []
    if gaps and source is not None:
        for gap in gaps:
            warnings += read_window(store, source, gap, each_batch)
        gaps = coverage.missing(store, repo, window, now)
    return warnings, gaps


def missing_text(gaps: list[Window], repo: str, lang: str) -> str:
    """The warning naming the days no source gave completely, in the report's language."""
    t = texts(lang)
    days = ", ".join(
        str(g.since) if g.since == g.until else t["days_range"].format(since=g.since, until=g.until)
        for g in gaps
    )
    return t["missing_days"].format(repo=repo, days=days)


def newest_merged(store: Store, source: Source | None, repo: str) -> tuple[str, int, datetime] | None:
    """Where the repository's newest PR is, its number and merge time: the source's (a clone or GitHub
    may be months ahead of the cache), else the cache's; for the hint of a period without PRs."""
    found = None
    if source is not None:
        with suppress(SourceError):  # a hint is not worth an error: the cache's newest stands in
            found = source.newest_merged()
    if source is not None and found is not None:
        return source.kind, *found
    cached = store.newest_prs(repo, limit=1)
    return ("cache", cached[0].number, cached[0].merged_at) if cached and cached[0].number else None


def newest_text(newest: tuple[str, int, datetime], repo: str, window: Window, lang: str) -> str:
    """Where to look instead, for a period without PRs: the newest PR, its day and ISO week."""
    where, number, merged_at = newest
    day = window.local_day(merged_at)
    t = texts(lang)
    return t["newest_pr"].format(
        where=t.get(f"src_{where}", where), repo=repo, number=number, date=day, week=iso_week_label(day)
    )


def history(
    store: Store, source: Source | None, repo: str, window: Window, now: datetime, noise: Noise
) -> list[PeriodFigures]:
    """The trend chart's periods with their figures (of the PRs the ``noise`` filters count); a period the
    cache lacks days of has none.

    A local source (a clone) counts the earlier periods the cache lacks in a moment (`counted_missing`);
    GitHub's request budget is kept for the window itself, so there they are marked missing."""
    unit, periods = chart_periods(window)
    periods = [(p, current) for p, current in periods if current or not _before_history(source, p)]
    first, windows = periods[0][0].since, [p for p, _ in periods]
    counted: list[PullRequest] = []
    read: list[tuple[datetime, datetime]] = []
    if source is not None and source.reads_history and first < window.since:
        before = Window(since=first, until=window.since - timedelta(days=1), tz=window.tz)
        counted, read = counted_missing(store, source, repo, before, now)
    span = Window(since=first, until=window.until, tz=window.tz)
    lacking = {day for gap in coverage.missing(store, repo, span, now, also=read) for day in gap.days()}
    figured = chart_figures(store, repo, windows, noise, counted if read else None)
    out = []
    for (period, current), (prs, additions, deletions, authors) in zip(periods, figured, strict=True):
        complete = lacking.isdisjoint(period.days())
        figures = dict(merged_prs=prs, additions=additions, deletions=deletions, authors=authors)
        out.append(
            PeriodFigures(
                since=period.since, until=period.until, unit=unit, current=current, complete=complete,
                **(figures if complete else {}),
            )
        )  # fmt: skip
    return out


def counted_missing(
    store: Store, source: Source, repo: str, window: Window, now: datetime
) -> tuple[list[PullRequest], list[tuple[datetime, datetime]]]:
    """The PRs of the days of the window the cache lacks, read to be counted where the source reads them
    at less cost (`Source.read_for_counts`: not kept), with the spans those reads covered; where it does
    not, the days are read into the cache (no spans)."""
    counted: list[PullRequest] = []
    read: list[tuple[datetime, datetime]] = []
    for gap in coverage.missing(store, repo, window, now):
        read_at = utc_now()
        prs = source.read_for_counts(gap)
        if prs is None:
            read_window(store, source, gap)
            continue
        counted += prs
        read.append(read_span(source, gap, read_at))
    return counted, read


def earlier_periods(
    store: Store, source: Source | None, repo: str, window: Window, now: datetime
) -> list[Window]:
    """The periods the report's figures are compared with (`trend_periods`) that the cache holds wholly
    once the source has read what it lacked, GitHub too: a period still partial is left out, never
    compared as if complete."""
    periods = [p for p in trend_periods(window) if not _before_history(source, p)]
    if not periods:  # none after the repository's first commit, or after the first day a window holds
        return []
    span = Window(since=periods[0].since, until=periods[-1].until, tz=window.tz)
    with suppress(SourceError):  # an earlier week the source cannot give is left out; the report stands
        read_missing(store, source, repo, span, now)
    lacking = {day for gap in coverage.missing(store, repo, span, now) for day in gap.days()}
    return [p for p in periods if lacking.isdisjoint(p.days())]


def _before_history(source: Source | None, period: Window) -> bool:
    """Whether the period ended before the repository's first commit: the repository did not exist then,
    so its zero PRs are no figure to compare with (the week of the first commit is the first one)."""
    begins = source.begins() if source is not None else None
    return begins is not None and period.end <= begins


def reading_ahead(
    store: Store, source: Source | None, repo: str, window: Window, now: datetime
) -> AbstractContextManager[object]:
    """What `earlier_periods` will read whole (the trend's days the cache lacks) and `history` count (the
    chart's other days it lacks), read ahead by the source (`Source.reading_ahead`): a clone walks each
    as the walks before it end, on the other core, while Python analyses and stores what came before."""
    if source is None:
        return nullcontext()
    trend = [p for p in trend_periods(window) if not _before_history(source, p)]
    span = Window(since=trend[0].since, until=trend[-1].until, tz=window.tz) if trend else None
    whole = coverage.missing(store, repo, span, now) if span else []
    chart = [p for p, current in chart_periods(window)[1] if not current and not _before_history(source, p)]
    counted: list[Window] = []
    if chart and source.reads_history:
        taken = {day for gap in whole for day in gap.days()}
        before = Window(since=chart[0].since, until=window.since - timedelta(days=1), tz=window.tz)
        days = [day for gap in coverage.missing(store, repo, before, now) for day in gap.days()]
        counted = coverage.runs([day for day in days if day not in taken], window.tz)
    return source.reading_ahead(whole, counted)


def diff_loader(store: Store, source: Source | None) -> Callable[[PullRequest], str | None] | None:
    """Diffs for the LLM's evidence of PRs that carry none: GitHub's are fetched once and cached. Run on the
    engine's threads, with the caller's store (thread-safe) and ``prepared_report`` (not inherited)."""
    if source is None:
        return None
    prepared = prepared_store()

    def load(pr: PullRequest) -> str | None:
        with prepared_report(prepared) if prepared else nullcontext():
            return source.diff(pr.number, store) if pr.number is not None else None

    return load


def analyse_prs(store: Store, prs: list[PullRequest], taxonomy: Taxonomy, lang: str) -> dict[int, PRAnalysis]:
    """The rules engine's analysis of every PR, each computed once and then read from the cache."""
    by_uid = {pr.uid: pr for pr in prs}

    def given(uids: list[str]) -> Iterator[list[PullRequest]]:
        yield [by_uid[uid] for uid in uids]

    keys = [(pr.uid, n, pr.content_hash()) for n, pr in numbered(prs)]
    return cached_analyses(store, prs[0].repo if prs else "", keys, given, taxonomy, lang)


def analyse_window(
    store: Store, repo: str, window: Window, taxonomy: Taxonomy, lang: str
) -> dict[int, PRAnalysis]:
    """The rules engine's analysis of every PR of the window in the cache: the cached ones read back, the
    others read from the cache (diffs and all) a batch at a time, analysed and kept."""
    return window_analyses(store, repo, window, taxonomy, lang)


def analyse(
    settings: Settings,
    store: Store,
    source: Source | None,
    prs: list[PullRequest],
    taxonomy: Taxonomy,
    lang: str,
    *,
    use_llm: bool = True,
) -> tuple[dict[int, PRAnalysis], LLMEngine | None]:
    """Every PR's analysis: the rules engine's, then the LLM's where one is configured (each cached)."""
    analyses = analyse_prs(store, prs, taxonomy, lang)
    if settings.llm is None or not use_llm:
        return analyses, None
    return ask_llm(settings, store, source, prs, analyses, taxonomy, lang)


def ask_llm(
    settings: Settings,
    store: Store,
    source: Source | None,
    prs: list[PullRequest],
    analyses: dict[int, PRAnalysis],
    taxonomy: Taxonomy,
    lang: str,
) -> tuple[dict[int, PRAnalysis], LLMEngine]:
    """The LLM's analyses of ``prs`` (with their diffs) over the rules engine's ``analyses``."""
    from prdigest.analysis.llm import LLMEngine

    assert settings.llm is not None  # the callers ask only when one is configured
    progress().phase(f"asking {settings.llm.model} about {len(prs)} PRs")
    engine = LLMEngine(settings.llm, store)
    shown = progress()  # the engine's worker threads report to the caller's progress
    analysed = engine.analyse(
        prs, analyses, taxonomy, lang, diff_loader(store, source),
        on_done=lambda done, total: shown.count("PRs analysed", done, total),
        instructions=settings.repo(prs[0].repo).extra_instructions if prs else "",
        written_in=settings.report.language,  # one analysis per PR, whatever the report's language
    )  # fmt: skip
    return analysed, engine


class _CollectorPause(ContextDecorator):
    """The cyclic garbage collector paused while any report is built, resumed after the last one.

    A report of a large window makes hundreds of MB of long-lived objects (PRs, analyses) and few
    cycles, and every full collection walks them all (at 20,000 PRs, `build_report` took 2.3-3.3 s with
    the collector on, 1.2 s without). Concurrent builds (the bot's threads) share one pause."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._builds = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._builds == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._builds += 1

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self._builds -= 1
            if self._builds == 0 and self._was_enabled:
                gc.enable()


collector_paused = _CollectorPause()


def _compute(
    settings: Settings,
    store: Store,
    source: Source | None,
    name: str,
    window: Window,
    lang: str,
    use_llm: bool,
    earlier: list[Window],
    noise: Noise,
) -> Report:
    """The report of the window in the cache, compared with the ``earlier`` periods (complete in the
    cache), of the PRs the ``noise`` filters count, without its muted and dismissed labels; its PRs and
    analyses are dropped on return (a large window's are hundreds of MB, and the report is saved and
    rendered next)."""
    taxonomy = settings.repo(name).taxonomy
    # The report shows no diff: its PRs are read without them (a large window's are hundreds of MB).
    prs = noise.keep(store.prs_in_window(name, window, excerpts=False))
    counted = {p.number for p in prs if p.number is not None}
    if source is not None:
        unavailable = source.unavailable
    else:
        known = store.signals_known(name, window, OPTIONAL_SIGNALS)
        unavailable = tuple(s for s in OPTIONAL_SIGNALS if prs and s not in known)
    progress().phase(f"analysing {len(prs)} PRs")
    analyses = analyse_window(store, name, window, taxonomy, lang)
    engine = None
    if settings.llm is not None and use_llm:
        full = noise.keep(store.prs_in_window(name, window))  # the model reads the diffs
        analyses, engine = ask_llm(settings, store, source, full, analyses, taxonomy, lang)
    analyses = week_risks(prs, analyses, lang)  # the week's own: one reviewer carrying the reviews
    analyses, quieted = noise.quiet(analyses, counted if noise.narrows else None)
    progress().phase("building the report")
    report = build_report(
        name,
        window,
        prs,
        source=source.kind if source else "cache",
        unavailable=unavailable,
        settings=settings.report,
        analyses=analyses,
        taxonomy=taxonomy,
        lang=lang,
    )
    if engine is not None:
        progress().phase("writing the narrative")
        report = engine.narrate(report, analyses, instructions=settings.repo(name).extra_instructions)
    report.dismissed = [d for d in quieted if isinstance(d, Dismissal)]
    report.snoozed = [s for s in quieted if isinstance(s, Snooze)]
    if earlier:
        read = [noise.keep(store.prs_in_window(name, period, excerpts=False)) for period in earlier]
        report.stats.trend = trend(
            stats_figures(report.stats), earlier_figures(store, name, earlier, read, settings, lang, noise)
        )
        before = [p for period_prs in read for p in period_prs]
        continue_themes(report.themes, prs, before)
        # The model judges what the rules found addressed, within the report's caps.
        followed = follow_risks(store, name, window, earlier, taxonomy, lang, settings.report, engine)
        report.risk_followups, snoozed = noise.followups(
            followed, counted | {p.number for p in before if p.number}
        )
        report.snoozed += [s for s in snoozed if s not in report.snoozed]
    if engine is not None:  # every request of the report counted, the follow-ups' too
        report.llm_usage = engine.usage()
        note = engine.spend.cap_note(lang)
        report.warnings += [note] if note else []
    return report


@collector_paused
def make_report(
    settings: Settings,
    store: Store,
    source: Source | None,
    window: Window,
    *,
    repo: str | None = None,
    lang: str | None = None,
    save: bool = True,
    use_llm: bool = True,
    refresh: bool = True,
    now: datetime | None = None,
    subscription: Subscription | None = None,
) -> Report:
    """Read the window from the source into the cache (all of it when ``refresh``, else only the days the
    cache lacks), analyse it, build the report from the cache; days no source gave are named.

    A ``subscription``'s filters and muted rules shape the report it is sent (never the cache)."""
    name = repo or (source.repo if source else "")
    lang = lang or settings.report.language
    now = now or utc_now()
    # The repository's own .prdigest.toml under its [[repos]] entry; one that cannot be used is named.
    given = settings
    settings, warnings = repo_settings(settings, store, source, name, lang)
    taxonomy = settings.repo(name).taxonomy
    read = 0

    def analyse_batch(batch: list[PullRequest]) -> dict[str, str]:
        # The rules analyse each batch as it is stored, while the source reads on (git runs meanwhile),
        # with its diffs in hand: no PR is read back from the cache for its diff.
        nonlocal read
        analyses = analyse_prs(store, batch, taxonomy, lang)
        read += len(batch)
        progress().count("PRs read", read)
        return {pr.uid: analyses[pr.number].summary for pr in batch if pr.number in analyses}

    with reading_ahead(store, source, name, window, now):
        if source is not None:
            if refresh:
                progress().phase(f"reading the {source.kind} source for {name}")
                warnings += read_window(store, source, window, analyse_batch)
        elif store.count_prs(name) == 0:
            raise SourceError(
                f"the cache holds no PRs of {name}; read them with --git PATH, "
                "or set GITHUB_TOKEN to sync them from GitHub"
            )
        if source is not None and refresh:  # read once: a partial sync is not tried again at once
            gaps = coverage.missing(store, name, window, now)
        else:
            missed, gaps = read_missing(store, source, name, window, now, analyse_batch)
            warnings += missed
        warnings += [missing_text(gaps, name, lang)] if gaps else []
        earlier = earlier_periods(store, source, name, window, now)
        noise = noise_for(settings, store, name, subscription, now)
        warnings += file_left_out(store, name, window, given, settings, lang)
        report = _compute(settings, store, source, name, window, lang, use_llm, earlier, noise)
        report.history = history(store, source, name, window, now, noise)
    report.attention, untold, unread = read_attention(settings.attention, source, window, now, lang)
    if report.attention is not None:
        report.attention, snoozed = noise.quiet_open(report.attention)
        report.snoozed += snoozed
    report.unavailable += ["open_prs"] if untold else []
    warnings += unread
    empty = report.stats.merged_prs == 0 and report.stats.direct_pushes == 0
    # A prepared report's cache is as new as the source (which would cost a query).
    newest = newest_merged(store, None if prepared_store() else source, name) if empty else None
    if newest is not None and not window.contains(newest[2]):
        warnings.append(newest_text(newest, name, window, lang))
    report.warnings = [*warnings, *report.warnings]  # the engine's own (a spent token budget) after
    if save:
        report.id = store.save_report(report)
    return report
