"""GitHub's rate-limit budget and the requests in flight, per credential, for the whole process.

GitHub meters a token (5,000 points an hour) or a GitHub App's installation (12,500) whichever client
spends it, and asks for few concurrent requests (its secondary limits). A deployment makes many clients
of one credential (a report, a repository, a chat thread each), so they share one ``SharedBudget``: each
answer's budget (x-ratelimit-* headers, GraphQL's ``rateLimit``) is noted there, a request is let through
only when what is left, less what requests in flight may spend, keeps the reserve, and at most
``max_in_flight`` requests of the credential are in flight at once.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from prdigest.clock import machine_utc_now
from prdigest.sources.github.errors import GitHubRateLimited

log = logging.getLogger("prdigest.github")


@dataclass
class RateBudget:
    remaining: int
    limit: int | None = None
    reset_at: datetime | None = None

    def describe(self) -> str:
        left = f"{self.remaining} of {self.limit}" if self.limit else str(self.remaining)
        reset = f"; it resets at {self.reset_at:%Y-%m-%d %H:%M} UTC" if self.reset_at else ""
        return f"{left} points left{reset}"


def token_identity(token: str) -> str:
    """A token's name in the process's budgets and in logs: a hash, never the token."""
    return "token " + hashlib.sha256(token.encode()).hexdigest()[:12]


class SharedBudget:
    """One credential's budget by resource ("core", "graphql"), the last cost of each query, and its
    requests in flight. Thread-safe."""

    def __init__(self, identity: str):
        self.identity = identity  # "token 1a2b…" or "installation 42": no secret
        self._changed = threading.Condition()
        self._budgets: dict[str, RateBudget] = {}
        self._costs: dict[str, int] = {}
        self._pending: Counter[str] = Counter()  # points requests in flight may spend, by resource
        self._in_flight = 0
        self._waiting = 0

    @property
    def budgets(self) -> dict[str, RateBudget]:
        with self._changed:
            return dict(self._budgets)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot."""
        with self._changed:
            return self._waiting

    def cost(self, query: str) -> int:
        """What GitHub last charged for ``query``; 1 before it has said."""
        with self._changed:
            return self._costs.get(query, 1)

    @contextmanager
    def request(self, resource: str, cost: int, reserve: int, max_in_flight: int) -> Iterator[None]:
        """A slot for one request, once fewer than ``max_in_flight`` are in flight; GitHubRateLimited
        instead when it would leave less than ``reserve`` points of ``resource``."""
        with self._changed:
            if self._in_flight >= max_in_flight:
                self._waiting += 1
                log.debug("%s: %d GitHub requests in flight, %d waiting", self.identity, self._in_flight,
                          self._waiting)  # fmt: skip
                try:
                    self._changed.wait_for(lambda: self._in_flight < max_in_flight)
                finally:
                    self._waiting -= 1
            self._refuse_below(resource, cost, reserve)  # after the wait: others may have spent meanwhile
            self._in_flight += 1
            self._pending[resource] += cost
        try:
            yield
        finally:
            with self._changed:
                self._in_flight -= 1
                self._pending[resource] -= cost
                self._changed.notify()

    def _refuse_below(self, resource: str, cost: int, reserve: int) -> None:
        budget = self._budgets.get(resource)
        if budget is None or (budget.reset_at is not None and budget.reset_at <= machine_utc_now()):
            return  # unknown, or renewed since: GitHub will tell
        if budget.remaining - self._pending[resource] - cost < reserve:
            raise GitHubRateLimited(
                f"stopped before GitHub's {resource} rate limit runs out ({budget.describe()})",
                retry_at=budget.reset_at,
            )

    def note(
        self, resource: str, remaining: int, limit: int | None = None, reset_at: datetime | None = None
    ) -> None:
        """An answer's budget; a limit or reset it does not name stays as known."""
        with self._changed:
            known = self._budgets.get(resource)
            self._budgets[resource] = RateBudget(
                remaining=remaining,
                limit=limit if limit is not None else known.limit if known else None,
                reset_at=reset_at or (known.reset_at if known else None),
            )

    def note_cost(self, query: str, cost: int) -> None:
        with self._changed:
            self._costs[query] = cost

    def describe(self, resource: str) -> str:
        budget = self.budgets.get(resource)
        return budget.describe() if budget else "no budget left"

    def reset_at(self, resource: str) -> datetime | None:
        budget = self.budgets.get(resource)
        return budget.reset_at if budget else None


_shared: dict[tuple[str, str], SharedBudget] = {}
_shared_lock = threading.Lock()


def shared_budget(url: str, identity: str) -> SharedBudget:
    """The process's budget of the credential ``identity`` on the GitHub at ``url``."""
    with _shared_lock:
        found = _shared.get((url, identity))
        if found is None:
            found = _shared[url, identity] = SharedBudget(identity)
        return found


def forget(url: str) -> None:
    """Drop the budgets known of the GitHub at ``url``: a new server there (a test's local GitHub on a
    port an earlier one used) has budgets of its own."""
    with _shared_lock:
        for key in [key for key in _shared if key[0] == url.rstrip("/")]:
            del _shared[key]
