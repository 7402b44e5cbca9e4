"""Prepare ahead, report on time: each subscribed repository's recent PRs synced and analysed before
any report is due.

A weekly report due at 09:00 on Monday for 2,000 repositories cannot read and analyse a week of PRs in
its hour: the LLM's rate and GitHub's budget do not grow with machines. ``prepare`` runs daily (serve's
scheduler on SQLite, a procrastinate task per repository on PostgreSQL, or `prdigest prepare` from
cron): an incremental sync of the last days, then every analysis a report will ask for (the rules', the
LLM's with the diffs its evidence needs), all kept in the cache under the keys the report reads. A
report then pays only for the PRs merged since the last prepare, and its diffs come from the cache
(``prepared_report``): none is fetched while reports are due.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from prdigest.analysis.history import TREND_WEEKS
from prdigest.clock import machine_utc_now
from prdigest.config import Settings
from prdigest.errors import PrdigestError, SourceError
from prdigest.models import Window
from prdigest.pipeline.single import analyse_prs, ask_llm, read_missing, read_window
from prdigest.pipeline.team import OwnerLister, github_owner, team_repos
from prdigest.sources.base import Source
from prdigest.sources.registry import source_factory
from prdigest.sources.repo_file import repo_settings
from prdigest.storage import Store
from prdigest.storage.repo_files import load_repo_file
from prdigest.storage.subscriptions import list_subscriptions

log = logging.getLogger("prdigest.prepare")

# The days a prepare reads: a weekly report's seven, and one more for the timezones ahead of UTC.
DAYS = 8
EARLIER = timedelta(weeks=TREND_WEEKS)  # before those: the weeks a report's trend compares with
THREADS = 4  # repositories prepared at once; each one's LLM requests run on the engine's own threads
RATE_LIMIT_ROUNDS = 3  # times the repositories GitHub's rate limit stopped are prepared again
MAX_WAIT = timedelta(hours=1, minutes=5)  # longest wait for GitHub's budget to be renewed


@dataclass
class Prepared:
    """What one repository's prepare did: the PRs it holds, the LLM's fresh analyses, its problems."""

    repo: str
    prs: int = 0
    llm_analysed: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    retry_at: datetime | None = None  # stopped by GitHub's rate limit: its budget is renewed then

    def describe(self) -> str:
        if self.error:
            return f"{self.repo}: not prepared: {self.error}"
        text = f"{self.repo}: {self.prs} PRs ready, {self.llm_analysed} analysed by the LLM"
        return text + "".join(f"; {w}" for w in self.warnings)


def prepare_window(now: datetime) -> Window:
    """The days a prepare at ``now`` reads: the last ``DAYS`` (UTC) through today."""
    today = now.date()
    return Window(since=today - timedelta(days=DAYS - 1), until=today, tz="UTC")


def prepare_repo(
    settings: Settings, store: Store, repo: str, source: Source | None, now: datetime
) -> Prepared:
    """Sync the repository's last days into the cache and analyse every PR in them, as a report in the
    settings' language will ask (the same analysis keys: the repository's own file layered in)."""
    done = Prepared(repo)
    lang = settings.report.language
    window = prepare_window(now)
    try:
        if source is None and store.count_prs(repo) == 0:
            raise SourceError(f"no source gives {repo} (a [[repos]] git clone, or a GitHub token)")
        # The repository's file as last read (by a report, which reads it with what is open): reading it
        # here would cost GitHub 4 points a repository a day. None kept yet: the source's.
        kept = load_repo_file(store, repo) is not None
        settings, done.warnings = repo_settings(settings, store, None if kept else source, repo, lang)
        if source is not None:
            done.warnings += read_window(store, source, window)
            # The weeks a report compares with, read once (the cache keeps them): not on Monday.
            earlier = Window(since=window.since - EARLIER, until=window.since - timedelta(days=1), tz="UTC")
            done.warnings += read_missing(store, source, repo, earlier, now)[0]
        prs = [pr for pr in store.prs_in_window(repo, window) if pr.number is not None]
        done.prs = len(prs)
        taxonomy = settings.repo(repo).taxonomy
        analyses = analyse_prs(store, prs, taxonomy, lang)
        if settings.llm is not None and prs:
            _, engine = ask_llm(settings, store, source, prs, analyses, taxonomy, lang)
            done.llm_analysed = engine.usage().analysed
    except PrdigestError as exc:  # one repository's failure leaves the others prepared
        done.error = str(exc)
        done.retry_at = getattr(exc, "retry_at", None)
    return done


def subscribed_repos(settings: Settings, store: Store, list_owner: OwnerLister | None = None) -> list[str]:
    """Every repository a subscription reports (a team's each, an owner's as GitHub lists them)."""
    lister = list_owner or partial(github_owner, settings)
    repos: list[str] = []
    for sub in list_subscriptions(store):
        try:
            repos += team_repos(settings, sub, lister)
        except PrdigestError as exc:  # GitHub could not list the owner's: its configured ones still count
            log.warning("prepare: the repositories of %s: %s", sub.repo, exc)
            repos += team_repos(settings, sub)
    return list(dict.fromkeys(repos))


def prepare_all(
    settings: Settings,
    store: Store,
    now: datetime,
    repos: Iterable[str] | None = None,
    source_for: Callable[[str], Source | None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Prepared]:
    """Prepare ``repos`` (default: every subscribed one), ``THREADS`` at a time; one line each in the log.

    An organisation's repositories may need more of GitHub's budget than an hour holds: those GitHub's
    rate limit stopped are prepared again once it is renewed (``sleep`` waits), up to ``RATE_LIMIT_ROUNDS``
    times and ``MAX_WAIT`` each; the prepare is not due anywhere, the reports are."""
    source_for = source_for or source_factory(settings)
    wanted = list(repos) if repos is not None else subscribed_repos(settings, store)

    def one(repo: str) -> Prepared:
        done = prepare_repo(settings, store, repo, source_for(repo), now)
        log.info("prepare %s", done.describe())
        return done

    results: dict[str, Prepared] = {}
    with ThreadPoolExecutor(THREADS, thread_name_prefix="prdigest-prepare") as pool:
        for round_ in range(RATE_LIMIT_ROUNDS + 1):
            results.update(zip(wanted, pool.map(one, wanted), strict=True))
            stopped = [d for d in results.values() if d.retry_at is not None]
            renewed = max((d.retry_at for d in stopped if d.retry_at), default=None)
            wait = (renewed - machine_utc_now()).total_seconds() + 1 if renewed else None  # GitHub's clock
            if round_ == RATE_LIMIT_ROUNDS or wait is None or wait > MAX_WAIT.total_seconds():
                break
            log.info("prepare: %d repositories wait %.0f s for GitHub's rate limit", len(stopped), wait)
            sleep(max(wait, 0.0))
            wanted = [d.repo for d in stopped]
    return list(results.values())
