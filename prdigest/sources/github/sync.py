"""Incremental sync of a window from GitHub into the cache, and diffs on demand.

A re-sync of an unchanged window costs one cheap search per 100 PRs: a PR is read
in full only when GitHub's updatedAt for it is newer than the cached one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from prdigest.clock import utc_now
from prdigest.models import PullRequest, Window, numbered
from prdigest.sources.github.client import GitHubClient
from prdigest.sources.github.errors import GitHubError, GitHubRateLimited
from prdigest.storage import Store, coverage, github_cache

if TYPE_CHECKING:
    from prdigest.sources.github.source import GitHubSource


@dataclass
class SyncResult:
    repo: str
    window: Window
    fetched: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)  # number -> why GitHub could not give it
    skipped: list[int] = field(default_factory=list)  # not read: the sync stopped early (see reason)
    reason: str | None = None
    requests: int = 0  # requests sent (urllib3's retries of one request are not counted)
    rate_limit_remaining: int | None = None
    rate_limit_reset: datetime | None = None

    @property
    def partial(self) -> bool:
        return bool(self.failed or self.skipped)

    @property
    def not_fetched(self) -> int:
        return len(self.failed) + len(self.skipped)

    def describe(self) -> str:
        """One line for a person: what was read, what was not and why."""
        text = (
            f"{self.repo} {self.window.since}..{self.window.until}: {len(self.fetched)} fetched, "
            f"{len(self.unchanged)} unchanged, {self.requests} requests"
        )
        if self.rate_limit_remaining is not None:
            text += f", {self.rate_limit_remaining} rate-limit points left"
        if self.partial:
            text += f"; partial: {self.not_fetched} PRs not read"
            text += f" ({self.reason})" if self.reason else f" (#{', #'.join(map(str, sorted(self.failed)))})"
        return text


def sync(store: Store, source: GitHubSource, window: Window) -> SyncResult:
    """Bring the cache up to date with the PRs GitHub says were merged in the window; record the days
    it read completely (a partial sync leaves the days of the PRs it could not read missing)."""
    client = source.client
    read_at = utc_now()
    before = client.requests["sync"]
    listed = source.list_merged(window)
    cached = github_cache.updated_at(store, source.repo, listed)
    stale = [item for n, item in listed.items() if n not in cached or item.updated_at > cached[n]]
    outcome = source.fetch_listed(stale)
    prs = _with_cached_diffs(store, source.repo, outcome.prs)
    store.upsert_prs(prs)
    fetched = [n for n, _ in numbered(prs)]  # a PR read from GitHub always has its number
    github_cache.record_updates(store, source.repo, {n: outcome.updated_at[n] for n in fetched})
    lacking = [listed[n].merged_at for n in [*outcome.failed, *outcome.skipped]]
    coverage.record_window(store, source.repo, source.kind, window, read_at, lacking)
    budget = client.budgets.get("graphql")
    return SyncResult(
        repo=source.repo,
        window=window,
        fetched=sorted(fetched),
        unchanged=sorted(set(listed) - {item.number for item in stale}),
        failed=dict(sorted(outcome.failed.items())),
        skipped=sorted(outcome.skipped),
        reason=outcome.reason,
        requests=client.requests["sync"] - before,
        rate_limit_remaining=budget.remaining if budget else None,
        rate_limit_reset=budget.reset_at if budget else None,
    )


def add_diffs(
    store: Store, client: GitHubClient, prs: Iterable[PullRequest]
) -> tuple[list[PullRequest], dict[int, str]]:
    """The PRs with their diff excerpts (cached ones cost nothing), stored back; and number -> error.

    Diff requests are counted apart from sync requests (``client.requests["diff"]``).
    Stops at a rate limit: the PRs not reached are reported with that reason.
    """
    done: list[PullRequest] = []
    failed: dict[int, str] = {}
    stopped: str | None = None
    for pr in prs:
        if pr.number is None:
            continue
        if stopped:
            failed[pr.number] = stopped
            continue
        try:
            excerpt = client.fetch_diff(pr.repo, pr.number, store)
        except GitHubRateLimited as exc:
            stopped = failed[pr.number] = str(exc)
            continue
        except GitHubError as exc:
            failed[pr.number] = str(exc)
            continue
        done.append(pr.model_copy(update={"diff_excerpt": excerpt}))
    store.upsert_prs(done)
    return done, failed


def _with_cached_diffs(store: Store, repo: str, prs: list[PullRequest]) -> list[PullRequest]:
    """A merged PR's diff does not change: a PR read again keeps the excerpt fetched before."""
    diffs = github_cache.get_diffs(store, repo, [pr.number for pr in prs if pr.number is not None])
    return [
        pr.model_copy(update={"diff_excerpt": diffs[pr.number]}) if pr.number in diffs else pr for pr in prs
    ]
