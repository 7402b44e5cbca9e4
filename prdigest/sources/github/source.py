"""Merged PRs from GitHub (or GitHub Enterprise): the GitHub source.

Three GraphQL shapes do the work (github_queries.py): a cheap search that lists the PRs merged in a
window (number, node id, updatedAt), a batch that reads up to 50 PRs in full by
node id, and follow-up pages for the few PRs whose files, reviews, threads or
comments overflow the first page. A diff is one REST request, capped and cached. What is open now (the
PRs that need someone, the default branch's checks, the repository's .prdigest.toml) is one more request
(github_open.py); an owner's repositories are listed a page of 100 at a time.

The client and its retries are in github_client.py (the one module that touches PyGithub), the mapping
of GraphQL nodes to models in github_models.py; the names tests and callers use are importable here.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from prdigest.models import Attention, PullRequest, Window
from prdigest.progress import progress
from prdigest.sources.base import BatchHook, Source
from prdigest.sources.github.budget import RateBudget
from prdigest.sources.github.client import (
    DIFF_MEDIA_TYPE,
    GITHUB_URL,
    TOO_LARGE,
    ClientOptions,
    GitHubClient,
    make_client,
)
from prdigest.sources.github.errors import (
    GitHubAuthError,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnavailable,
    errors_at,
    messages,
    raise_for_repository,
    split_repo,
)
from prdigest.sources.github.models import EPOCH, FetchOutcome, Reader, parse_time, stop, to_pull_request
from prdigest.sources.github.queries import (
    BATCH_QUERY,
    BATCH_SIZE,
    BATCH_SPLITS,
    CONNECTIONS,
    FOLLOW_UP_PAGE,
    FOLLOW_UPS_PER_REQUEST,
    LIST_QUERY,
    OWNER_REPOS_QUERY,
    PR_FRAGMENT,
    PR_QUERY,
    RATE_LIMIT,
    follow_up_query,
)
from prdigest.sources.prepared import in_prepared_report
from prdigest.storage import github_cache

if TYPE_CHECKING:
    from prdigest.config import Settings
    from prdigest.config.models import AttentionSettings
    from prdigest.sources.github.open_prs import OpenState
    from prdigest.storage import Store

__all__ = [
    "BATCH_QUERY",
    "BATCH_SIZE",
    "CONNECTIONS",
    "DIFF_MEDIA_TYPE",
    "FOLLOW_UPS_PER_REQUEST",
    "FOLLOW_UP_PAGE",
    "GITHUB_URL",
    "LIST_QUERY",
    "PR_FRAGMENT",
    "PR_QUERY",
    "RATE_LIMIT",
    "SEARCH_LIMIT",
    "TOO_LARGE",
    "ClientOptions",
    "FetchOutcome",
    "GitHubAuthError",
    "GitHubClient",
    "GitHubError",
    "GitHubNotFound",
    "GitHubRateLimited",
    "GitHubSource",
    "GitHubUnavailable",
    "Listed",
    "RateBudget",
    "follow_up_query",
    "make_client",
    "owner_repositories",
    "to_pull_request",
]

SEARCH_LIMIT = 1000  # the search API returns at most this many results per query
OWNER_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?")  # GitHub's logins


@dataclass(frozen=True)
class Listed:
    """A merged PR as the cheap search lists it."""

    number: int
    node_id: str
    updated_at: datetime
    merged_at: datetime


class GitHubSource(Source):
    """The merged PRs of one repository: the pipeline's Source, and what `sync` reads."""

    kind = "github"
    # Diffs cost one REST request per PR: they are fetched on demand (fetch_diff, add_diffs).
    unavailable: tuple[str, ...] = ("diff_excerpt",)
    # The request budget is kept for the report's window: the trend chart's earlier periods are not read.
    reads_history = False

    def __init__(self, client: GitHubClient, repo: str, base_branch: str | None = None):
        split_repo(repo)
        self.client = client
        self.repo = repo
        # The branch a PR must be merged into to count (None: the default branch, as GitHub names it):
        # a PR merged into a release branch is not a change of the project's main line.
        self.base_branch = base_branch
        self._open: OpenState | None = None  # what is open now: read once, by the first to ask

    def attention(self, thresholds: AttentionSettings, now: datetime) -> Attention | None:
        from prdigest.sources.github.open_prs import attention

        return attention(self._open_state(), thresholds, now)

    def repo_file(self) -> str | None:
        return self._open_state().repo_file

    def points_spent(self) -> int:
        return self.client.points

    def _open_state(self) -> OpenState:
        from prdigest.sources.github.open_prs import read_open

        if self._open is None:
            self._open = read_open(self.client, self.repo)
        return self._open

    def fetch_pr(self, number: int) -> PullRequest | None:
        return self.client.fetch_pr(self.repo, number)

    def diff(self, number: int, store: Store | None = None) -> str | None:
        if in_prepared_report():  # a report due now, of a prepared deployment: the prepare fetched the diffs
            return github_cache.get_diffs(store, self.repo, [number]).get(number) if store else None
        return self.client.fetch_diff(self.repo, number, store)

    def extent(self) -> tuple[datetime | None, datetime | None]:
        return None, None  # what GitHub lists is complete; `read_into` records what a partial sync lacks

    def read_into(self, store: Store, window: Window, each_batch: BatchHook | None = None) -> list[str]:
        """An incremental sync: only the PRs updated since they were cached are read; a partial sync
        (rate limit, outage) leaves the days of the PRs it could not read missing and says so. (Its PRs
        are analysed after the sync: ``each_batch`` is not called.)"""
        from prdigest.sources.github.sync import sync

        result = sync(store, self, window)
        return [result.describe()] if result.partial else []

    def fetch(self, window: Window) -> list[PullRequest]:
        """Every PR merged in the window, or an error: none goes missing (`sync` keeps partial reads)."""
        listed = self.list_merged(window)
        outcome = self.fetch_listed(listed.values())
        missing = sorted([*outcome.failed, *outcome.skipped])
        if missing:
            raise GitHubError(
                f"could not read {len(missing)} of {len(listed)} PRs of {self.repo} "
                f"(#{', #'.join(map(str, missing[:10]))}{' ...' if len(missing) > 10 else ''}): "
                f"{outcome.reason or next(iter(outcome.failed.values()))}; `prdigest sync` keeps what it read"
            )
        return sorted(outcome.prs, key=lambda pr: pr.merged_at)

    def list_merged(self, window: Window) -> dict[int, Listed]:
        """Number -> listing of every PR merged in the window, however many (the search caps at 1,000)."""
        found: dict[int, Listed] = {}
        # UTC: arithmetic on aware datetimes of one ZoneInfo ignores DST changes.
        self._list_range(window.start.astimezone(UTC), window.end.astimezone(UTC), window.zone, found)
        return {n: item for n, item in sorted(found.items()) if window.contains(item.merged_at)}

    def newest_merged(self) -> tuple[int, datetime] | None:
        """The number and merge time of the newest merged PR, among the 100 updated last (merging one
        updates it): one request, asked only when a period holds no PR."""
        search = self._search(f"repo:{self.repo} is:pr is:merged sort:updated-desc", None)
        merged = [
            (datetime.fromisoformat(n["mergedAt"]), n["number"])
            for n in search.get("nodes") or []
            if n and n.get("mergedAt")
        ]
        return max(merged)[::-1] if merged else None

    def _list_range(self, start: datetime, end: datetime, zone: ZoneInfo, found: dict[int, Listed]) -> None:
        """List [start, end); halve the range while the search counts more than it can return."""
        last = end - timedelta(seconds=1)
        merged = f"merged:{_stamp(start, zone)}..{_stamp(last, zone)}"
        query = f"repo:{self.repo} is:pr is:merged {merged} sort:created-asc"
        after: str | None = None
        while True:
            search = self._search(query, after)
            if search.get("issueCount", 0) > SEARCH_LIMIT and after is None:
                if last <= start:
                    raise GitHubError(f"more than {SEARCH_LIMIT} PRs of {self.repo} merged at {start}")
                middle = start + timedelta(seconds=(last - start).total_seconds() // 2 + 1)
                self._list_range(start, middle, zone, found)
                self._list_range(middle, end, zone, found)
                return
            base = self.base_branch or search.get("default_branch")
            for node in search.get("nodes") or []:
                if node and base and node.get("baseRefName") not in (None, base):
                    continue
                if node and node.get("number") and node.get("mergedAt"):
                    found[node["number"]] = Listed(
                        node["number"],
                        node["id"],
                        parse_time(node["updatedAt"]) or EPOCH,
                        datetime.fromisoformat(node["mergedAt"]),
                    )
            page = search.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                return
            after = page["endCursor"]

    def _search(self, query: str, after: str | None) -> dict[str, Any]:
        owner, name = split_repo(self.repo)
        variables = {"owner": owner, "name": name, "query": query, "after": after}
        data, errors = self.client.graphql(LIST_QUERY, variables)
        raise_for_repository(errors, self.repo, self.client.url)
        if errors or not data.get("search"):
            raise GitHubError(f"GitHub could not list the PRs of {self.repo}: {messages(errors)}")
        found: dict[str, Any] = data["search"]
        branch = ((data.get("repository") or {}).get("defaultBranchRef") or {}).get("name")
        return {**found, "default_branch": branch}

    def fetch_listed(self, listed: Iterable[Listed]) -> FetchOutcome:
        """Read the listed PRs in batches; what cannot be read is reported, never dropped."""
        items = list(listed)
        size = self.client.options.batch_size
        raw: dict[int, dict[str, Any]] = {}
        outcome = FetchOutcome()
        # (batch, how often it was halved), in listing order.
        work = deque((items[start : start + size], 0) for start in range(0, len(items), size))
        done, total = 0, len(work)
        while work:
            progress().count("batches synced", done, total)
            done += 1
            batch, splits = work.popleft()
            try:
                data, errors = self.client.graphql(BATCH_QUERY, {"ids": [item.node_id for item in batch]})
            except GitHubUnavailable as exc:
                if exc.overloaded and splits < BATCH_SPLITS and len(batch) > 1:
                    half = len(batch) // 2
                    work.extendleft([(batch[half:], splits + 1), (batch[:half], splits + 1)])
                    total += 1  # one batch became two
                    continue
                # Stop: GitHub is down. The batch asked for failed, the rest waits.
                stop(outcome, exc, {item.number for item in batch})
                outcome.skipped.extend(item.number for rest, _ in work for item in rest)
                break
            except GitHubRateLimited as exc:
                # Stop: the budget is spent. Nothing failed; all that is left waits for the next sync.
                stop(outcome, exc, set())
                remaining = [batch, *(rest for rest, _ in work)]
                outcome.skipped.extend(item.number for rest in remaining for item in rest)
                break
            nodes = data.get("nodes") or []
            for index, item in enumerate(batch):
                node = nodes[index] if index < len(nodes) else None
                problem = errors_at(errors, ["nodes", index])
                if node is None and not problem:
                    problem = messages(errors) if errors else "GitHub returned nothing for this PR"
                if node is None or problem:
                    outcome.failed[item.number] = problem or "GitHub returned nothing for this PR"
                else:
                    raw[item.number] = node
        progress().count("batches synced", done, total)
        completed = Reader(self.client, self.repo).complete(raw)
        outcome.prs = completed.prs
        outcome.updated_at = completed.updated_at
        outcome.failed.update(completed.failed)
        outcome.skipped.extend(completed.skipped)
        outcome.reason = outcome.reason or completed.reason
        return outcome


def owner_repositories(settings: Settings, owner: str) -> list[str]:
    """OWNER/NAME of every repository a user or organization owns, forks and archived ones left out,
    sorted by name."""
    if not OWNER_LOGIN.fullmatch(owner or ""):
        raise GitHubError(f"{owner!r} is not a GitHub user or organization name")
    client = make_client(settings, owner=owner)
    found: list[str] = []
    after: str | None = None
    while True:
        data, errors = client.graphql(OWNER_REPOS_QUERY, {"login": owner, "after": after}, purpose="owner")
        found_owner = data.get("repositoryOwner")
        if found_owner is None:
            if errors and any(e.get("type") != "NOT_FOUND" for e in errors):
                raise GitHubError(f"GitHub could not list the repositories of {owner}: {messages(errors)}")
            raise GitHubNotFound(
                f"GitHub has no user or organization {owner!r} at {client.url}, or the token cannot see it"
            )
        page = found_owner.get("repositories") or {}
        prefix = f"{found_owner.get('login') or owner}/".lower()
        found += [
            node["nameWithOwner"]
            for node in page.get("nodes") or []
            if node
            and not node.get("isFork")
            and not node.get("isArchived")
            # A user's list may hold repositories they only collaborate on.
            and node["nameWithOwner"].lower().startswith(prefix)
        ]
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            return sorted(found, key=str.lower)
        after = info["endCursor"]


def _stamp(moment: datetime, zone: ZoneInfo) -> str:
    """A search bound with an explicit offset: 2026-09-07T00:00:00+08:00."""
    return moment.astimezone(zone).replace(microsecond=0).isoformat()
