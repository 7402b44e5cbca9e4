"""From a source to a Report: read, cache, analyse once, compute. The CLI, chat and scheduler call this."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prdigest.analysis import rules
from prdigest.analysis.report import build_report
from prdigest.config import Settings, Taxonomy
from prdigest.errors import SourceError
from prdigest.models import OPTIONAL_SIGNALS, PRAnalysis, PullRequest, Report, Window
from prdigest.storage import Store
from prdigest.storage.db import analysis_key

if TYPE_CHECKING:  # the LLM engine (and openai) is imported only when an LLM is configured
    from prdigest.analysis.llm import LLMEngine


class Source(Protocol):
    kind: str
    repo: str
    unavailable: tuple[str, ...]

    def fetch(self, window: Window) -> list[PullRequest]: ...


def open_source(
    settings: Settings, git: str | Path | None, fixture: str | Path | None, repo: str | None
) -> Source | None:
    """The source the options name: a clone, a fixture, or for --repo alone the repository's configured
    source (a clone in the settings, else GitHub when a token is set); None means "the cache only"."""
    if git and fixture:
        raise SourceError("choose one source: --git PATH or --fixture FILE")
    if git:
        from prdigest.sources.gitlog import GitSource

        return GitSource(git, repo=repo)
    if fixture:
        from prdigest.sources.fixture import FixtureSource

        return FixtureSource(fixture, repo=repo)
    if not repo:
        raise SourceError("name a source: --git PATH, --fixture FILE or --repo OWNER/NAME")
    return source_factory(settings)(repo)


def source_factory(settings: Settings, given: Source | None = None) -> Callable[[str], Source | None]:
    """Where each repository's PRs come from: the source the command was given, a clone named in
    the settings, GitHub when a token is set, else none (the cache only)."""

    def source_for(repo: str) -> Source | None:
        if given is not None and given.repo == repo:
            return given
        clone = settings.repo(repo).git
        if clone is not None:
            from prdigest.sources.gitlog import GitSource

            return GitSource(clone, repo=repo)
        if settings.github.token is not None:
            from prdigest.sources.github import make_client

            return make_client(settings).source(repo)
        return None

    return source_for


def read_window(store: Store, source: Source, window: Window) -> list[str]:
    """Bring the window into the cache from the source; returns warnings for the report (a partial sync)."""
    if source.kind != "github":
        store.upsert_prs(source.fetch(window))
        return []
    from prdigest.sources.sync import sync

    result = sync(store, source, window)  # type: ignore[arg-type]  # a GitHubSource
    return [result.describe()] if result.partial else []


def diff_loader(store: Store, source: Source | None) -> Callable[[PullRequest], str | None] | None:
    """Diffs for the LLM's evidence: a clone's PRs carry theirs; GitHub's are fetched once and cached.

    The loader runs on the engine's worker threads and shares the caller's store (it is thread-safe)."""
    if source is None or source.kind != "github":
        return None
    client = source.client  # type: ignore[attr-defined]  # a GitHubSource
    return lambda pr: client.fetch_diff(pr.repo, pr.number, store)


def analyse_prs(store: Store, prs: list[PullRequest], taxonomy: Taxonomy, lang: str) -> dict[int, PRAnalysis]:
    """The rules engine's analysis of every PR, each computed once and then read from the cache."""
    version = rules.rules_version(taxonomy)
    numbered = [pr for pr in prs if pr.number is not None]
    keys = {
        pr.number: analysis_key(pr.repo, pr.number, pr.content_hash(), "rules", None, version, lang)
        for pr in numbered
    }
    cached = store.get_analyses(list(keys.values()))
    fresh = [(pr, rules.analyse(pr, taxonomy, lang)) for pr in numbered if keys[pr.number] not in cached]
    if fresh:
        store.put_analyses(fresh, lang)
    out = {pr.number: cached.get(keys[pr.number]) for pr in numbered}
    out.update((pr.number, analysis) for pr, analysis in fresh)
    return out  # type: ignore[return-value]  # every PR has its analysis now


def analyse(
    settings: Settings,
    store: Store,
    source: Source | None,
    prs: list[PullRequest],
    taxonomy: Taxonomy,
    lang: str,
    *,
    use_llm: bool = True,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[dict[int, PRAnalysis], LLMEngine | None]:
    """Every PR's analysis: the rules engine's, then the LLM's where one is configured (each cached)."""
    analyses = analyse_prs(store, prs, taxonomy, lang)
    if settings.llm is None or not use_llm:
        return analyses, None
    from prdigest.analysis.llm import LLMEngine

    progress(f"asking {settings.llm.model} about {len(prs)} PRs")
    engine = LLMEngine(settings.llm, store)
    return engine.analyse(prs, analyses, taxonomy, lang, diff_loader(store, source)), engine


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
    progress: Callable[[str], None] = lambda _: None,
) -> Report:
    """Read the window from the source into the cache, analyse it, build the report from the cache."""
    name = repo or (source.repo if source else "")
    lang = lang or settings.report.language
    warnings: list[str] = []
    if source is not None:
        progress(f"reading {source.kind} source for {name}")
        warnings = read_window(store, source, window)
        unavailable: tuple[str, ...] = source.unavailable
    elif store.count_prs(name) == 0:
        raise SourceError(
            f"the cache holds no PRs of {name}; read them with --git PATH, "
            "or set GITHUB_TOKEN to sync them from GitHub"
        )
    prs = store.prs_in_window(name, window)
    if source is None:
        unavailable = tuple(s for s in OPTIONAL_SIGNALS if prs and all(getattr(p, s) is None for p in prs))
    progress(f"analysing {len(prs)} PRs")
    taxonomy = settings.repo(name).taxonomy
    analyses, engine = analyse(
        settings, store, source, prs, taxonomy, lang, use_llm=use_llm, progress=progress
    )
    progress("building the report")
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
        progress("writing the narrative")
        report = engine.narrate(report, analyses)
        report.llm_usage = engine.usage()
    report.history = store.week_figures(name, earlier_weeks(window, HISTORY_WEEKS))
    report.warnings = warnings
    if save:
        report.id = store.save_report(report)
    return report


HISTORY_WEEKS = 8


def earlier_weeks(window: Window, count: int) -> list[Window]:
    """The `count` windows of the same length before this one, oldest first."""
    span = window.until - window.since + timedelta(days=1)
    return [
        Window(since=window.since - span * k, until=window.until - span * k, tz=window.tz)
        for k in range(count, 0, -1)
    ]
