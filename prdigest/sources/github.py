"""Merged PRs from GitHub (or GitHub Enterprise) through PyGithub.

Three GraphQL shapes do the work: a cheap search that lists the PRs merged in a
window (number, node id, updatedAt), a batch that reads up to 50 PRs in full by
node id, and follow-up pages for the few PRs whose files, reviews, threads or
comments overflow the first page. A diff is one REST request, capped and cached.

Every response updates the rate-limit budget; a request that would spend the
last of it is not sent (GitHubRateLimited) so that a sync can stop and report a
partial result instead of sleeping until the reset. 5xx answers, timeouts and
secondary rate limits are retried a bounded number of times by GithubRetry.

PyGithub is imported only when a client is made, so a git report never loads it.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from prdigest.config import REPO_NAME, GithubSettings, Settings
from prdigest.errors import SourceError
from prdigest.models import ChecksState, Comment, FileChange, PullRequest, Review, ReviewThread, Window
from prdigest.sources.diffs import excerpt
from prdigest.sources.gitlog import _REFERENCE
from prdigest.storage import github_cache

if TYPE_CHECKING:
    from github import GithubException
    from requests import RequestException

    from prdigest.storage import Store

GITHUB_URL = "https://api.github.com"
SEARCH_LIMIT = 1000  # the search API returns at most this many results per query
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
TOO_LARGE = "(GitHub does not serve this diff: it is too large)"

# --- errors -----------------------------------------------------------------------


class GitHubError(SourceError):
    """GitHub could not be read."""


class GitHubAuthError(GitHubError):
    """No token, a token GitHub rejects, or a token without access."""


class GitHubNotFound(GitHubError):
    """The repository or the pull request does not exist, or the token cannot see it."""


class GitHubRateLimited(GitHubError):
    """The rate-limit budget is spent, or would be by the next request."""


class GitHubUnavailable(GitHubError):
    """5xx answers or timeouts, still failing after the retries; ``overloaded`` when GitHub answered
    (5xx, or too late) rather than could not be reached, so that a lighter request may pass."""

    def __init__(self, message: str, *, overloaded: bool = False):
        super().__init__(message)
        self.overloaded = overloaded


# --- queries ----------------------------------------------------------------------

RATE_LIMIT = "rateLimit { cost remaining resetAt }"
_ACTOR = "author { __typename login }"
_PAGE = "totalCount pageInfo { hasNextPage endCursor }"

# A PR's paginated lists: page size in the batch query, and the fields of each node.
# Sizes keep a 50-PR batch near 24,000 nodes, far below GitHub's 500,000 per request.
CONNECTIONS: dict[str, tuple[int, str]] = {
    "labels": (50, "name"),
    "files": (100, "path additions deletions changeType"),
    "reviews": (50, f"state body submittedAt {_ACTOR}"),
    "reviewThreads": (50, f"isResolved isOutdated path comments(first: 1) {{ nodes {{ body {_ACTOR} }} }}"),
    "comments": (50, f"body createdAt {_ACTOR}"),
    "closingIssuesReferences": (25, "number"),
}
FOLLOW_UP_PAGE = 100  # nodes per follow-up page of an overflowing list
FOLLOW_UPS_PER_REQUEST = 25
BATCH_SIZE = 50  # PRs per batch request
# A batch GitHub answers with 5xx or a timeout may be too heavy (PRs with huge lists): it is halved,
# at most this many times (50 -> 25 -> 12), before the sync stops as for an outage.
BATCH_SPLITS = 2

# The merged head commit: its check runs and statuses. totalCount is the PR's commit count.
_CHECKS = (
    "lastCommit: commits(last: 1) { totalCount nodes { commit { statusCheckRollup { state "
    "contexts(first: 100) { nodes { __typename ... on CheckRun { name conclusion status } "
    "... on StatusContext { context state } } } } } } }"
)


def _connection(name: str, first: int, after: str | None = None) -> str:
    args = f"first: {first}" + (f", after: {after}" if after else "")
    return f"{name}({args}) {{ {_PAGE} nodes {{ {CONNECTIONS[name][1]} }} }}"


PR_FRAGMENT = (
    "\n  ".join(
        [
            "fragment PullRequestFields on PullRequest {",
            "id number title body url createdAt mergedAt updatedAt authorAssociation",
            "author { __typename login } mergedBy { __typename login } mergeCommit { oid }",
            "baseRefName additions deletions isCrossRepository headRepository { isFork }",
            _CHECKS,
            *(_connection(name, size) for name, (size, _) in CONNECTIONS.items()),
        ]
    )
    + "\n}"
)

LIST_QUERY = f"""query ListMerged($owner: String!, $name: String!, $query: String!, $after: String) {{
  {RATE_LIMIT}
  repository(owner: $owner, name: $name) {{ nameWithOwner }}
  search(query: $query, type: ISSUE, first: 100, after: $after) {{
    issueCount
    pageInfo {{ hasNextPage endCursor }}
    nodes {{ ... on PullRequest {{ id number updatedAt mergedAt }} }}
  }}
}}"""

BATCH_QUERY = f"""query PullRequests($ids: [ID!]!) {{
  {RATE_LIMIT}
  nodes(ids: $ids) {{ ...PullRequestFields }}
}}
{PR_FRAGMENT}"""

PR_QUERY = f"""query PullRequest($owner: String!, $name: String!, $number: Int!) {{
  {RATE_LIMIT}
  repository(owner: $owner, name: $name) {{ pullRequest(number: $number) {{ ...PullRequestFields }} }}
}}
{PR_FRAGMENT}"""


def follow_up_query(connections: Sequence[str]) -> str:
    """Next pages of several lists in one request: alias ``o{i}`` reads ``connections[i]`` of ``$id{i}``."""
    params = ", ".join(f"$id{i}: ID!, $after{i}: String" for i in range(len(connections)))
    pages = [_connection(name, FOLLOW_UP_PAGE, f"$after{i}") for i, name in enumerate(connections)]
    fields = "\n".join(
        f"  o{i}: node(id: $id{i}) {{ ... on PullRequest {{ {page} }} }}" for i, page in enumerate(pages)
    )
    return f"query FollowUp({params}) {{\n  {RATE_LIMIT}\n{fields}\n}}"


# --- the client -------------------------------------------------------------------


@dataclass(frozen=True)
class ClientOptions:
    """Network behaviour; tests shrink the waits to zero."""

    timeout: int = 15  # seconds per HTTP request (PyGithub takes whole seconds)
    retries: int = 3  # extra attempts after a 5xx, a timeout or a secondary rate limit
    backoff: float = 1.0  # urllib3 backoff factor: waits 0, 2, 4 ... seconds between attempts
    max_wait: int = 60  # longest wait for a rate limit (Retry-After, reset) before giving up
    secondary_wait: int = 60  # wait after a secondary rate limit that names no Retry-After
    reserve: int = 0  # rate-limit points a sync leaves unspent
    batch_size: int = BATCH_SIZE


@dataclass
class RateBudget:
    remaining: int
    limit: int | None = None
    reset_at: datetime | None = None

    def describe(self) -> str:
        left = f"{self.remaining} of {self.limit}" if self.limit else str(self.remaining)
        reset = f"; it resets at {self.reset_at:%Y-%m-%d %H:%M} UTC" if self.reset_at else ""
        return f"{left} points left{reset}"


def make_client(settings: Settings | GithubSettings, options: ClientOptions | None = None) -> GitHubClient:
    """The client for the settings' GitHub URL and token; a clear error when there is no token."""
    github = settings.github if isinstance(settings, Settings) else settings
    token = github.token.get_secret_value().strip() if github.token else ""
    if not token:
        raise GitHubAuthError(
            "no GitHub token: set GITHUB_TOKEN (or PRDIGEST_GITHUB_TOKEN) to a token that can read "
            "the repository, or read a local clone with --git PATH"
        )
    return GitHubClient(token, github.url, options)


class GitHubClient:
    """One token on one GitHub host. Counts its requests by purpose and tracks the rate limits."""

    def __init__(self, token: str, url: str = GITHUB_URL, options: ClientOptions | None = None):
        from github import Auth, Github, GithubRetry

        self.url = url.rstrip("/")
        if urlparse(self.url).scheme not in ("http", "https") or not urlparse(self.url).hostname:
            raise GitHubError(
                f"GitHub URL {url!r} is not http(s)://HOST[/api/v3] (set PRDIGEST_GITHUB_URL; "
                "GitHub Enterprise is https://HOST/api/v3)"
            )
        self.options = options or ClientOptions()
        o = self.options
        retry = GithubRetry(
            total=o.retries,
            backoff_factor=o.backoff,
            backoff_max=o.max_wait,
            retry_after_max=o.max_wait,
            secondary_rate_wait=o.secondary_wait,
            max_rate_limit_wait=o.max_wait,
            # The last failed answer reaches PyGithub, which raises its own exception for it.
            raise_on_status=False,
        )
        self._github = Github(
            base_url=self.url,
            auth=Auth.Token(token),
            retry=retry,
            timeout=o.timeout,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self.requests: Counter[str] = Counter()  # requests sent, by purpose ("sync", "diff")
        self.budgets: dict[str, RateBudget] = {}  # by resource: "graphql", "core"
        self._costs: dict[str, int] = {}  # last cost GitHub charged for each query

    def source(self, repo: str) -> GitHubSource:
        return GitHubSource(self, repo)

    # --- requests -------------------------------------------------------------

    def graphql(
        self, query: str, variables: dict[str, Any], *, purpose: str = "sync"
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The data and the per-field errors of one request; a failure of the whole request raises."""
        self._check_budget("graphql", self._costs.get(query, 1))
        _, body = self._send(
            purpose, "graphql", lambda: self._github.requester.graphql_query(query, variables)
        )
        data = body.get("data") or {}
        errors = body.get("errors") or []
        if isinstance(data.get("rateLimit"), dict):
            self._note_rate_limit(query, data["rateLimit"])
        if any(e.get("type") == "RATE_LIMITED" for e in errors):
            raise GitHubRateLimited(f"GitHub's GraphQL rate limit is spent: {self._budget_text('graphql')}")
        return data, errors

    def _send(
        self, purpose: str, resource: str, call: Callable[[], tuple[dict[str, Any], Any]]
    ) -> tuple[dict[str, Any], Any]:
        from github import GithubException
        from requests import RequestException

        self.requests[purpose] += 1
        try:
            headers, body = call()
        except GithubException as exc:
            self._note_headers(exc.headers or {}, resource)
            if isinstance(exc.data, dict) and "errors" in exc.data and exc.status in (400, 404):
                # A GraphQL answer with errors: PyGithub raises, the caller sorts partial data from failure.
                return exc.headers or {}, exc.data
            raise self._error(exc) from None
        except RequestException as exc:
            raise self._transport_error(exc) from None
        self._note_headers(headers, resource)
        return headers, body

    def _check_budget(self, resource: str, cost: int) -> None:
        budget = self.budgets.get(resource)
        if budget is None or (budget.reset_at is not None and budget.reset_at <= datetime.now(UTC)):
            return  # unknown, or renewed since: GitHub will tell
        if budget.remaining - cost < self.options.reserve:
            raise GitHubRateLimited(
                f"stopped before GitHub's {resource} rate limit runs out ({budget.describe()})"
            )

    def _note_headers(self, headers: dict[str, Any], resource: str) -> None:
        if "x-ratelimit-remaining" not in headers:
            return
        resource = headers.get("x-ratelimit-resource", resource)
        reset = headers.get("x-ratelimit-reset")
        self.budgets[resource] = RateBudget(
            remaining=int(float(headers["x-ratelimit-remaining"])),
            limit=int(float(headers["x-ratelimit-limit"])) if "x-ratelimit-limit" in headers else None,
            reset_at=datetime.fromtimestamp(int(float(reset)), UTC) if reset else None,
        )

    def _note_rate_limit(self, query: str, rate: dict[str, Any]) -> None:
        if isinstance(rate.get("cost"), int):
            self._costs[query] = rate["cost"]
        if isinstance(rate.get("remaining"), int):
            known = self.budgets.get("graphql")
            self.budgets["graphql"] = RateBudget(
                remaining=rate["remaining"],
                limit=known.limit if known else None,
                reset_at=_time(rate.get("resetAt")) or (known.reset_at if known else None),
            )

    def _budget_text(self, resource: str) -> str:
        budget = self.budgets.get(resource)
        return budget.describe() if budget else "no budget left"

    def _error(self, exc: GithubException) -> GitHubError:
        from github import BadCredentialsException, RateLimitExceededException, UnknownObjectException

        attempts = self.options.retries + 1
        message = exc.message or (exc.data.get("message") if isinstance(exc.data, dict) else None) or ""
        if isinstance(exc, BadCredentialsException) or exc.status == 401:
            return GitHubAuthError(
                f"GitHub at {self.url} rejected the token (401 {message or 'Bad credentials'}): "
                "check GITHUB_TOKEN or PRDIGEST_GITHUB_TOKEN"
            )
        if isinstance(exc, RateLimitExceededException):
            if "secondary" in message.lower():
                return GitHubRateLimited(
                    f"GitHub's secondary rate limit stopped the requests after {attempts} attempts; "
                    "wait a few minutes and try again"
                )
            resource = (exc.headers or {}).get("x-ratelimit-resource", "core")
            return GitHubRateLimited(
                f"GitHub's {resource} rate limit is spent ({self._budget_text(resource)})"
            )
        if isinstance(exc, UnknownObjectException) or exc.status == 404:
            return GitHubNotFound(
                f"GitHub at {self.url} answered 404 Not Found; for GitHub Enterprise set "
                "PRDIGEST_GITHUB_URL to https://HOST/api/v3"
            )
        if exc.status >= 500:
            return GitHubUnavailable(
                f"GitHub at {self.url} answered {exc.status} {attempts} times in a row; try again later",
                overloaded=True,
            )
        if exc.status == 403:
            return GitHubAuthError(f"GitHub refused access (403 {message}): check the token's scopes")
        return GitHubError(f"GitHub answered {exc.status}: {message or exc.data}")

    def _transport_error(self, exc: RequestException) -> GitHubError:
        from requests import Timeout

        attempts = self.options.retries + 1
        if isinstance(exc, Timeout) or "timed out" in str(exc).lower():
            return GitHubUnavailable(
                f"GitHub at {self.url} did not answer within {self.options.timeout} s ({attempts} attempts)",
                overloaded=True,
            )
        return GitHubUnavailable(f"cannot reach GitHub at {self.url}: {type(exc).__name__}")

    # --- one PR -----------------------------------------------------------------

    def fetch_pr(self, repo: str, number: int) -> PullRequest | None:
        """One merged PR by number in one request (plus follow-ups for overflowing lists); None when
        the repository has no such PR, as for GitSource.fetch_pr."""
        owner, name = _split(repo)
        data, errors = self.graphql(PR_QUERY, {"owner": owner, "name": name, "number": number})
        _raise_for_repository(errors, repo, self.url)
        node = (data.get("repository") or {}).get("pullRequest")
        if node is None:
            if any(e.get("type") != "NOT_FOUND" for e in errors):
                raise GitHubError(f"cannot read {repo}#{number}: {_messages(errors)}")
            return None
        if not node.get("mergedAt"):
            raise GitHubError(f"{repo}#{number} is not merged")
        outcome = _Reader(self, repo).complete({number: node})
        if number in outcome.failed:
            raise GitHubError(f"cannot read {repo}#{number}: {outcome.failed[number]}")
        return outcome.prs[0]

    def fetch_diff(self, repo: str, number: int, store: Store | None = None) -> str:
        """The PR's diff as evidence: file headers and +/- lines, capped; cached for good in ``store``."""
        if store is not None:
            cached = github_cache.get_diffs(store, repo, [number])
            if number in cached:
                return cached[number]
        excerpt = self._diff_excerpt(repo, number)
        if store is not None:
            github_cache.put_diff(store, repo, number, excerpt)
        return excerpt

    def _diff_excerpt(self, repo: str, number: int) -> str:
        _split(repo)
        requester = self._github.requester
        self._check_budget("core", 1)

        def call() -> tuple[dict[str, Any], str | None]:
            status, headers, text = requester.requestJson(
                "GET", f"/repos/{repo}/pulls/{number}", headers={"Accept": DIFF_MEDIA_TYPE}
            )
            if status == 406:  # over 20,000 lines or 300 files: GitHub never serves it
                return headers, None
            if status >= 400:
                raise requester.createException(status, headers, _json_object(text))
            return headers, text

        try:
            _, text = self._send("diff", "core", call)
        except GitHubNotFound:
            raise GitHubNotFound(
                f"{repo} has no pull request #{number}, or the token cannot read it"
            ) from None
        return excerpt(text) if text is not None else TOO_LARGE


# --- the source ---------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """A merged PR as the cheap search lists it."""

    number: int
    node_id: str
    updated_at: datetime
    merged_at: datetime


@dataclass
class FetchOutcome:
    prs: list[PullRequest] = field(default_factory=list)
    updated_at: dict[int, datetime] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)  # number -> why it could not be read
    skipped: list[int] = field(default_factory=list)  # not asked for: the budget ran out or GitHub is down
    reason: str | None = None  # why the fetch stopped early


class GitHubSource:
    """The merged PRs of one repository: the pipeline's Source, and what `sync` reads."""

    kind = "github"
    # Diffs cost one REST request per PR: they are fetched on demand (fetch_diff, add_diffs).
    unavailable: tuple[str, ...] = ("diff_excerpt",)

    def __init__(self, client: GitHubClient, repo: str):
        _split(repo)
        self.client = client
        self.repo = repo

    def fetch_pr(self, number: int) -> PullRequest | None:
        return self.client.fetch_pr(self.repo, number)

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
            (_time(n["mergedAt"]), n["number"]) for n in search.get("nodes") or [] if n and n.get("mergedAt")
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
            for node in search.get("nodes") or []:
                if node and node.get("number") and node.get("mergedAt"):
                    found[node["number"]] = Listed(
                        node["number"],
                        node["id"],
                        _time(node["updatedAt"]) or _EPOCH,
                        _time(node["mergedAt"]),
                    )
            page = search.get("pageInfo") or {}
            if not page.get("hasNextPage"):
                return
            after = page["endCursor"]

    def _search(self, query: str, after: str | None) -> dict[str, Any]:
        owner, name = _split(self.repo)
        variables = {"owner": owner, "name": name, "query": query, "after": after}
        data, errors = self.client.graphql(LIST_QUERY, variables)
        _raise_for_repository(errors, self.repo, self.client.url)
        if errors or not data.get("search"):
            raise GitHubError(f"GitHub could not list the PRs of {self.repo}: {_messages(errors)}")
        return data["search"]

    def fetch_listed(self, listed: Iterable[Listed]) -> FetchOutcome:
        """Read the listed PRs in batches; what cannot be read is reported, never dropped."""
        items = list(listed)
        size = self.client.options.batch_size
        raw: dict[int, dict[str, Any]] = {}
        outcome = FetchOutcome()
        # (batch, how often it was halved), in listing order.
        work = deque((items[start : start + size], 0) for start in range(0, len(items), size))
        while work:
            batch, splits = work.popleft()
            try:
                data, errors = self.client.graphql(BATCH_QUERY, {"ids": [item.node_id for item in batch]})
            except GitHubUnavailable as exc:
                if exc.overloaded and splits < BATCH_SPLITS and len(batch) > 1:
                    half = len(batch) // 2
                    work.extendleft([(batch[half:], splits + 1), (batch[:half], splits + 1)])
                    continue
                # Stop: GitHub is down. The batch asked for failed, the rest waits.
                _stop(outcome, exc, {item.number for item in batch})
                outcome.skipped.extend(item.number for rest, _ in work for item in rest)
                break
            except GitHubRateLimited as exc:
                # Stop: the budget is spent. Nothing failed; all that is left waits for the next sync.
                _stop(outcome, exc, set())
                remaining = [batch, *(rest for rest, _ in work)]
                outcome.skipped.extend(item.number for rest in remaining for item in rest)
                break
            nodes = data.get("nodes") or []
            for index, item in enumerate(batch):
                node = nodes[index] if index < len(nodes) else None
                problem = _errors_at(errors, ["nodes", index])
                if node is None and not problem:
                    problem = _messages(errors) if errors else "GitHub returned nothing for this PR"
                if problem:
                    outcome.failed[item.number] = problem
                else:
                    raw[item.number] = node
        completed = _Reader(self.client, self.repo).complete(raw)
        outcome.prs = completed.prs
        outcome.updated_at = completed.updated_at
        outcome.failed.update(completed.failed)
        outcome.skipped.extend(completed.skipped)
        outcome.reason = outcome.reason or completed.reason
        return outcome


class _Reader:
    """Completes raw PR nodes with the follow-up pages of their overflowing lists, then converts them."""

    def __init__(self, client: GitHubClient, repo: str):
        self.client = client
        self.repo = repo

    def complete(self, raw: dict[int, dict[str, Any]]) -> FetchOutcome:
        outcome = FetchOutcome()
        pending = _overflowing(raw)
        while pending and outcome.reason is None:
            for start in range(0, len(pending), FOLLOW_UPS_PER_REQUEST):
                chunk = [(n, name) for n, name in pending[start : start + FOLLOW_UPS_PER_REQUEST] if n in raw]
                try:
                    self._follow_up(chunk, raw, outcome)
                except (GitHubRateLimited, GitHubUnavailable) as exc:
                    failed = {n for n, _ in chunk} if isinstance(exc, GitHubUnavailable) else set()
                    _stop(outcome, exc, failed)
                    break
            pending = _overflowing(raw)
        # A PR whose lists are still incomplete is not stored truncated: the next sync reads it again.
        unfinished = sorted({n for n, _ in pending} - set(outcome.failed))
        outcome.skipped.extend(unfinished)
        for number in [*unfinished, *outcome.failed]:
            raw.pop(number, None)
        for number, node in sorted(raw.items()):
            try:
                pr = to_pull_request(self.repo, node)
            except (ValidationError, KeyError, TypeError, ValueError) as exc:
                outcome.failed[number] = f"unreadable answer from GitHub: {_short(exc)}"
                continue
            outcome.prs.append(pr)
            outcome.updated_at[number] = _time(node.get("updatedAt")) or _EPOCH
        return outcome

    def _follow_up(
        self, chunk: list[tuple[int, str]], raw: dict[int, dict[str, Any]], outcome: FetchOutcome
    ) -> None:
        variables: dict[str, Any] = {}
        for i, (number, name) in enumerate(chunk):
            variables[f"id{i}"] = raw[number]["id"]
            variables[f"after{i}"] = raw[number][name]["pageInfo"]["endCursor"]
        data, errors = self.client.graphql(follow_up_query([name for _, name in chunk]), variables)
        for i, (number, name) in enumerate(chunk):
            if number not in raw:
                continue  # an earlier list of this PR failed
            page = (data.get(f"o{i}") or {}).get(name) or {}
            problem = _errors_at(errors, [f"o{i}"])
            if not problem and not page.get("nodes"):
                # Also guards against a page that promises more and brings nothing: no endless loop.
                problem = _messages(errors) if errors else "GitHub returned an empty follow-up page"
            if problem:
                outcome.failed[number] = problem
                del raw[number]
                continue
            known = raw[number][name]
            known["nodes"] = [*(known.get("nodes") or []), *(page.get("nodes") or [])]
            known["pageInfo"] = page["pageInfo"]


def _overflowing(raw: dict[int, dict[str, Any]]) -> list[tuple[int, str]]:
    return [
        (number, name)
        for number, node in sorted(raw.items())
        for name in CONNECTIONS
        if ((node.get(name) or {}).get("pageInfo") or {}).get("hasNextPage")
    ]


def _stop(outcome: FetchOutcome, exc: GitHubError, failed: Iterable[int]) -> None:
    outcome.reason = str(exc)
    for number in failed:
        outcome.failed[number] = str(exc)


# --- from GraphQL nodes to models ----------------------------------------------------

_CHANGE = {"ADDED": "added", "DELETED": "removed", "RENAMED": "renamed", "COPIED": "copied"}
_FAILING = {"FAILURE", "TIMED_OUT", "CANCELLED", "ACTION_REQUIRED", "STARTUP_FAILURE", "ERROR"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_pull_request(repo: str, node: dict[str, Any]) -> PullRequest:
    number = int(node["number"])
    title = node.get("title") or ""
    body = node.get("body") or ""
    closing = {int(issue["number"]) for issue in _nodes(node, "closingIssuesReferences")}
    mentioned = {int(n) for n in _REFERENCE.findall(f"{title}\n{body}")}
    last_commit = node.get("lastCommit") or {}
    return PullRequest(
        repo=repo,
        number=number,
        sha=(node.get("mergeCommit") or {}).get("oid"),
        title=title,
        body=body,
        author=_login(node.get("author")),
        author_association=node.get("authorAssociation"),
        labels=_listed(node, "labels", lambda label: label["name"]),
        created_at=_time(node.get("createdAt")),
        merged_at=_time(node["mergedAt"]),
        # Asked and null: a deleted account; not asked: unknown.
        merged_by=_login(node["mergedBy"]) if "mergedBy" in node else None,
        base_branch=node.get("baseRefName"),
        additions=node.get("additions") or 0,
        deletions=node.get("deletions") or 0,
        files=_listed(node, "files", _file),
        commits=last_commit.get("totalCount"),
        reviews=_listed(node, "reviews", _review),
        review_threads=_listed(node, "reviewThreads", _thread),
        comments=_listed(node, "comments", _comment),
        checks=_checks(last_commit),
        is_fork=_is_fork(node),
        url=node.get("url"),
        related=sorted((closing | mentioned) - {number}),
        source="github",
    )


def _nodes(parent: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [n for n in ((parent.get(name) or {}).get("nodes") or []) if n]


def _listed(node: dict[str, Any], name: str, convert: Callable[[dict[str, Any]], Any]) -> list[Any] | None:
    """A list GitHub answered (possibly empty), or None where it gave none (unknown)."""
    if node.get(name) is None:
        return None
    return [convert(item) for item in _nodes(node, name)]


def _login(actor: dict[str, Any] | None) -> str:
    """The actor's login; "ghost" for a deleted account; bots as GitHub's REST API names them."""
    login = (actor or {}).get("login") or "ghost"
    if (actor or {}).get("__typename") == "Bot" and not login.endswith("[bot]"):
        return f"{login}[bot]"
    return login


def _is_bot(actor: dict[str, Any] | None) -> bool:
    return _login(actor).endswith("[bot]")


def _file(node: dict[str, Any]) -> FileChange:
    return FileChange(
        path=node["path"],
        additions=node.get("additions") or 0,
        deletions=node.get("deletions") or 0,
        status=_CHANGE.get(node.get("changeType") or "", "modified"),
    )


def _review(node: dict[str, Any]) -> Review:
    return Review(
        author=_login(node.get("author")),
        state=node["state"],
        body=node.get("body") or "",
        submitted_at=_time(node.get("submittedAt")),
        is_bot=_is_bot(node.get("author")),
    )


def _thread(node: dict[str, Any]) -> ReviewThread:
    first = next(iter(_nodes(node, "comments")), None)
    return ReviewThread(
        path=node.get("path"),
        is_resolved=bool(node.get("isResolved")),
        is_outdated=bool(node.get("isOutdated")),
        author=_login(first.get("author")) if first else None,
        body=(first or {}).get("body") or "",
    )


def _comment(node: dict[str, Any]) -> Comment:
    return Comment(
        author=_login(node.get("author")),
        body=node.get("body") or "",
        created_at=_time(node.get("createdAt")),
        is_bot=_is_bot(node.get("author")),
    )


def _checks(last_commit: dict[str, Any]) -> ChecksState | None:
    """The check runs and statuses of the merged head commit; None when GitHub reports none."""
    commits = [n for n in (last_commit.get("nodes") or []) if n]
    rollup = ((commits[-1] if commits else {}).get("commit") or {}).get("statusCheckRollup")
    if not rollup or not rollup.get("state"):
        return None
    failing, skipped = [], []
    for context in _nodes(rollup, "contexts"):
        if context.get("__typename") == "CheckRun":
            if context.get("conclusion") in _FAILING:
                failing.append(context.get("name") or "?")
            elif context.get("conclusion") == "SKIPPED":
                skipped.append(context.get("name") or "?")
        elif context.get("state") in _FAILING:
            failing.append(context.get("context") or "?")
    return ChecksState(state=rollup["state"], failing=failing, skipped=skipped)


def _is_fork(node: dict[str, Any]) -> bool | None:
    # A PR from another repository is a PR from a fork, even when that fork was deleted since.
    if node.get("isCrossRepository") is not None:
        return bool(node["isCrossRepository"])
    head = node.get("headRepository")
    return bool(head["isFork"]) if head and head.get("isFork") is not None else None


# --- small helpers -----------------------------------------------------------------


def _split(repo: str) -> tuple[str, str]:
    if not REPO_NAME.fullmatch(repo or ""):
        raise GitHubError(f"{repo!r} is not a GitHub repository name (OWNER/NAME)")
    owner, name = repo.split("/")
    return owner, name


def _stamp(moment: datetime, zone: ZoneInfo) -> str:
    """A search bound with an explicit offset: 2026-09-07T00:00:00+08:00."""
    return moment.astimezone(zone).replace(microsecond=0).isoformat()


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _errors_at(errors: list[dict[str, Any]], prefix: list[Any]) -> str | None:
    """The messages of the errors whose path starts with ``prefix``."""
    hits = [e for e in errors if list(e.get("path") or [])[: len(prefix)] == prefix]
    return _messages(hits) if hits else None


def _messages(errors: list[dict[str, Any]]) -> str:
    return (
        "; ".join(str(e.get("message") or e.get("type") or "unknown error") for e in errors[:3]) or "no data"
    )


def _raise_for_repository(errors: list[dict[str, Any]], repo: str, url: str) -> None:
    if any(e.get("type") == "NOT_FOUND" and e.get("path") == ["repository"] for e in errors):
        raise GitHubNotFound(f"GitHub repository {repo} was not found at {url}, or the token cannot read it")


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"message": text[:200]}
    return value if isinstance(value, dict) else {"message": str(value)[:200]}


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return f"{type(exc).__name__}: {exc}"
