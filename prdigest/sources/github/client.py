"""The GitHub client, through PyGithub: GraphQL and REST requests, their retries, and the rate-limit budget.

Every response updates the rate-limit budget, which every client of the same token or App
installation shares in the process (budget.py), as they share a bound on their requests in flight; a
request that would spend the last of it is not sent (GitHubRateLimited) so that a sync can stop and
report a partial result instead of sleeping until the reset. Each GraphQL query's cost is logged
(logger "prdigest.github") and counted by kind. 5xx answers, timeouts and secondary rate limits are
retried a bounded number of times by GithubRetry.

PyGithub is imported only when a client is made, so a git report never loads it; this is the one
module that touches it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from prdigest.config import GithubSettings, Settings
from prdigest.config.github import MAX_IN_FLIGHT
from prdigest.metrics import count_github_points, count_github_request, set_github_remaining
from prdigest.models import PullRequest
from prdigest.sources.github.budget import RateBudget, SharedBudget, shared_budget, token_identity
from prdigest.sources.github.errors import (
    GitHubAuthError,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnavailable,
    json_object,
    messages,
    raise_for_repository,
    split_repo,
)
from prdigest.sources.github.models import Reader, parse_time
from prdigest.sources.github.queries import BATCH_SIZE, PR_QUERY, operation_name
from prdigest.sources.parsing import excerpt
from prdigest.storage import github_cache

if TYPE_CHECKING:
    from github import GithubException, GithubRetry
    from requests import RequestException

    from prdigest.sources.github.app_auth import InstallationAuth
    from prdigest.storage import Store

log = logging.getLogger("prdigest.github")

GITHUB_URL = "https://api.github.com"
DIFF_MEDIA_TYPE = "application/vnd.github.diff"
TOO_LARGE = "(GitHub does not serve this diff: it is too large)"


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
    token_renewal: float = 300  # seconds before its expiry a GitHub App's installation token is renewed
    # Requests of one credential in flight at once, over all its clients in the process ([github]).
    max_in_flight: int = MAX_IN_FLIGHT


def make_client(
    settings: Settings | GithubSettings, options: ClientOptions | None = None, *, owner: str | None = None
) -> GitHubClient:
    """The client for the settings' GitHub URL, signed in as their GitHub App's installation on ``owner``
    (the App wins over a token), else with their token; a clear error when it has neither."""
    github = settings.github if isinstance(settings, Settings) else settings
    options = replace(options or ClientOptions(), max_in_flight=github.max_in_flight)
    if github.app_id is not None:
        from prdigest.sources.github.app_auth import InstallationAuth, github_app

        app = github_app(github, timeout=options.timeout, retry=github_retry(options))
        auth = InstallationAuth(app, owner, github.installation_id, options.token_renewal)
        return GitHubClient(auth, github.url, options)
    token = github.token.get_secret_value().strip() if github.token else ""
    if not token:
        raise GitHubAuthError(
            "no GitHub token: set GITHUB_TOKEN (or PRDIGEST_GITHUB_TOKEN) to a token that can read "
            "the repository, or read a local clone with --git PATH"
        )
    return GitHubClient(token, github.url, options)


def github_retry(o: ClientOptions) -> GithubRetry:
    """PyGithub's retries of 5xx answers, timeouts and rate limits, bounded by the options."""
    from github import GithubRetry

    return GithubRetry(
        total=o.retries,
        backoff_factor=o.backoff,
        backoff_max=o.max_wait,
        retry_after_max=o.max_wait,
        secondary_rate_wait=o.secondary_wait,
        max_rate_limit_wait=o.max_wait,
        # The last failed answer reaches PyGithub, which raises its own exception for it.
        raise_on_status=False,
    )


class GitHubClient:
    """One token (or a GitHub App's installation) on one GitHub host. Counts its requests by purpose and
    the points they spent; the rate limits and the requests in flight are its credential's, shared."""

    def __init__(
        self, token: str | InstallationAuth, url: str = GITHUB_URL, options: ClientOptions | None = None
    ):
        from github import Auth, Github

        self.url = url.rstrip("/")
        if urlparse(self.url).scheme not in ("http", "https") or not urlparse(self.url).hostname:
            raise GitHubError(
                f"GitHub URL {url!r} is not http(s)://HOST[/api/v3] (set PRDIGEST_GITHUB_URL; "
                "GitHub Enterprise is https://HOST/api/v3)"
            )
        self.options = options or ClientOptions()
        self._app = None if isinstance(token, str) else token
        self._github = Github(
            base_url=self.url,
            auth=Auth.Token(token) if isinstance(token, str) else token.for_pygithub(),
            retry=github_retry(self.options),
            timeout=self.options.timeout,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )
        self.requests: Counter[str] = Counter()  # requests sent, by purpose ("sync", "diff")
        self.points = 0  # rate-limit points spent: each query's GraphQL cost, one a REST request
        # An App's installation is known at its first request (finding it may take one).
        self._shared: SharedBudget | None = (
            shared_budget(self.url, token_identity(token)) if isinstance(token, str) else None
        )

    @property
    def shared(self) -> SharedBudget:
        """The budget and the requests in flight of this client's credential, shared in the process."""
        if self._shared is None:
            assert self._app is not None
            self._shared = shared_budget(self.url, f"installation {self._app.installation()}")
        return self._shared

    @property
    def budgets(self) -> dict[str, RateBudget]:
        """The credential's rate-limit budgets by resource ("graphql", "core"), as last answered."""
        return self._shared.budgets if self._shared is not None else {}

    # --- requests -------------------------------------------------------------

    def graphql(
        self, query: str, variables: dict[str, Any], *, purpose: str = "sync"
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The data and the per-field errors of one request; a failure of the whole request raises."""
        _, body = self._send(
            purpose,
            "graphql",
            lambda: self._github.requester.graphql_query(query, variables),
            self.shared.cost(query),
        )
        data = body.get("data") or {}
        errors = body.get("errors") or []
        rate = data.get("rateLimit")
        if isinstance(rate, dict):
            self._note_rate_limit(query, rate)
        cost = rate["cost"] if isinstance(rate, dict) and isinstance(rate.get("cost"), int) else 1
        self.points += cost
        kind = operation_name(query)
        count_github_points(kind, cost)
        left = self.shared.describe("graphql")
        log.debug("GitHub GraphQL %s (%s): cost %d, %s", kind, purpose, cost, left)
        if any(e.get("type") == "RATE_LIMITED" for e in errors):
            raise GitHubRateLimited(
                f"GitHub's GraphQL rate limit is spent: {left}", retry_at=self.shared.reset_at("graphql")
            )
        return data, errors

    def _send(
        self, purpose: str, resource: str, call: Callable[[], tuple[dict[str, Any], Any]], cost: int = 1
    ) -> tuple[dict[str, Any], Any]:
        """One request, once its credential's budget and bound on requests in flight let it go."""
        from github import GithubException
        from requests import RequestException

        o = self.options
        with self.shared.request(resource, cost, o.reserve, o.max_in_flight):
            self.requests[purpose] += 1
            try:
                headers, body = call()
            except GithubException as exc:
                return self._failed(purpose, resource, exc)
            except RequestException as exc:
                count_github_request(purpose, "unreachable")
                raise self._transport_error(exc) from None
        count_github_request(purpose, "ok")
        if resource != "graphql":  # a GraphQL query's cost is in its answer
            self.points += 1
            count_github_points("rest", 1)
        self._note_headers(headers, resource)
        return headers, body

    def _failed(self, purpose: str, resource: str, exc: GithubException) -> tuple[dict[str, Any], Any]:
        count_github_request(purpose, "error")
        self._note_headers(exc.headers or {}, resource)
        if isinstance(exc.data, dict) and "errors" in exc.data and exc.status in (400, 404):
            # A GraphQL answer with errors: PyGithub raises, the caller sorts partial data from failure.
            return exc.headers or {}, exc.data
        raise self._error(exc) from None

    def _note_headers(self, headers: dict[str, Any], resource: str) -> None:
        if "x-ratelimit-remaining" not in headers:
            return
        resource = headers.get("x-ratelimit-resource", resource)
        reset = headers.get("x-ratelimit-reset")
        remaining = int(float(headers["x-ratelimit-remaining"]))
        self.shared.note(
            resource,
            remaining,
            limit=int(float(headers["x-ratelimit-limit"])) if "x-ratelimit-limit" in headers else None,
            reset_at=datetime.fromtimestamp(int(float(reset)), UTC) if reset else None,
        )
        set_github_remaining(resource, remaining)

    def _note_rate_limit(self, query: str, rate: dict[str, Any]) -> None:
        if isinstance(rate.get("cost"), int):
            self.shared.note_cost(query, rate["cost"])
        if isinstance(rate.get("remaining"), int):
            limit = rate.get("limit")
            self.shared.note(
                "graphql",
                rate["remaining"],
                limit=limit if isinstance(limit, int) else None,
                reset_at=parse_time(rate.get("resetAt")),
            )
            set_github_remaining("graphql", rate["remaining"])

    def _error(self, exc: GithubException) -> GitHubError:
        from github import BadCredentialsException, RateLimitExceededException, UnknownObjectException

        attempts = self.options.retries + 1
        message = exc.message or (exc.data.get("message") if isinstance(exc.data, dict) else None) or ""
        if (isinstance(exc, BadCredentialsException) or exc.status == 401) and self._app is not None:
            self._app.rejected()
            return GitHubAuthError(
                f"GitHub at {self.url} rejected GitHub App {self._app.app.app_id}'s installation token "
                f"(401 {message or 'Bad credentials'}); the next request asks for a new one"
            )
        if isinstance(exc, BadCredentialsException) or exc.status == 401:
            return GitHubAuthError(
                f"GitHub at {self.url} rejected the token (401 {message or 'Bad credentials'}): "
                "check GITHUB_TOKEN or PRDIGEST_GITHUB_TOKEN"
            )
        headers = exc.headers or {}  # PyGithub's, with lower-case names (as `_note_headers` reads them)
        # GitHub answers a spent budget with 403 or 429 and x-ratelimit-remaining 0; when PyGithub's retries
        # ran out on it, the last answer reaches us without its message (GithubRetry read the body).
        spent = exc.status == 403 and headers.get("x-ratelimit-remaining") == "0"
        if isinstance(exc, RateLimitExceededException) or exc.status == 429 or spent:
            if "secondary" in message.lower():
                return GitHubRateLimited(
                    f"GitHub's secondary rate limit stopped the requests after {attempts} attempts; "
                    "wait a few minutes and try again"
                )
            resource = headers.get("x-ratelimit-resource", "core")
            return GitHubRateLimited(
                f"GitHub's {resource} rate limit is spent ({self.shared.describe(resource)})",
                retry_at=self.shared.reset_at(resource),
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
            scopes = "the token's scopes" if self._app is None else "the GitHub App's permissions"
            return GitHubAuthError(f"GitHub refused access (403 {message}): check {scopes}")
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
        owner, name = split_repo(repo)
        data, errors = self.graphql(PR_QUERY, {"owner": owner, "name": name, "number": number})
        raise_for_repository(errors, repo, self.url)
        node = (data.get("repository") or {}).get("pullRequest")
        if node is None:
            if any(e.get("type") != "NOT_FOUND" for e in errors):
                raise GitHubError(f"cannot read {repo}#{number}: {messages(errors)}")
            return None
        if not node.get("mergedAt"):
            raise GitHubError(f"{repo}#{number} is not merged")
        outcome = Reader(self, repo).complete({number: node})
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
        split_repo(repo)
        requester = self._github.requester

        def call() -> tuple[dict[str, Any], str | None]:
            status, headers, text = requester.requestJson(
                "GET", f"/repos/{repo}/pulls/{number}", headers={"Accept": DIFF_MEDIA_TYPE}
            )
            if status == 406:  # over 20,000 lines or 300 files: GitHub never serves it
                return headers, None
            if status >= 400:
                raise requester.createException(status, headers, json_object(text))
            return headers, text

        try:
            _, text = self._send("diff", "core", call)
        except GitHubNotFound:
            raise GitHubNotFound(
                f"{repo} has no pull request #{number}, or the token cannot read it"
            ) from None
        return excerpt(text) if text is not None else TOO_LARGE
