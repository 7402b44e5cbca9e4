"""GitHub's primary rate limits, for the local GitHub (fakes.github_api): a budget per credential (a token,
or a GitHub App's installation, whose tokens share one) and resource, refilled an hour after the window's
first request on a clock a test can set; and a GraphQL query's cost by GitHub's published formula
(https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api): the
requests its connections need, each connection's ``first``/``last`` multiplying the requests of those
nested in it, summed, divided by 100 and rounded, at least 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import graphql

TOKEN_LIMIT = 5000  # points an hour of a personal token
INSTALLATION_LIMIT = 12_500  # of a GitHub App's installation on an organization (GitHub Enterprise Cloud)
SEARCH_LIMIT = 30  # REST search requests a minute; kept for /rate_limit's shape
WINDOW = 3600  # seconds from a window's first request to its reset


def query_cost(document: graphql.DocumentNode, variables: dict[str, Any]) -> int:
    """The points GitHub charges for the document's (first) operation with these variables."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, graphql.FragmentDefinitionNode)
    }
    operation = next(d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode))

    def requests(selections: tuple[graphql.SelectionNode, ...], times: int) -> int:
        """Requests of the connections among ``selections``, reached ``times`` times each."""
        total = 0
        for node in selections:
            inner = times
            if isinstance(node, graphql.FieldNode):
                size = _page_size(node, variables)
                if size is not None:  # a connection: one request per parent, then ``size`` nodes each
                    total += times
                    inner = times * size
                chosen = node.selection_set
            elif isinstance(node, graphql.FragmentSpreadNode):
                chosen = fragments[node.name.value].selection_set
            else:
                assert isinstance(node, graphql.InlineFragmentNode)
                chosen = node.selection_set
            if chosen is not None:
                total += requests(chosen.selections, inner)
        return total

    return max(1, int(requests(operation.selection_set.selections, 1) / 100 + 0.5))


def _page_size(node: graphql.FieldNode, variables: dict[str, Any]) -> int | None:
    for argument in node.arguments or ():
        if argument.name.value in ("first", "last"):
            value = graphql.value_from_ast_untyped(argument.value, variables)
            return int(value) if value is not None else None
    return None


@dataclass
class Budget:
    """One credential's points left by resource in the current window."""

    limit: int
    reset_at: int  # epoch seconds
    window: int = WINDOW
    remaining: dict[str, int] = field(default_factory=dict)

    def refill(self, now: float) -> None:
        self.reset_at = int(now) + self.window
        self.remaining.update(core=self.limit, graphql=self.limit, search=SEARCH_LIMIT)

    def limit_of(self, resource: str) -> int:
        return SEARCH_LIMIT if resource == "search" else self.limit

    def headers(self, resource: str) -> dict[str, str]:
        """GitHub's x-ratelimit-* headers for an answer of ``resource``."""
        left = max(self.remaining[resource], 0)
        limit = self.limit_of(resource)
        return {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(left),
            "X-RateLimit-Used": str(limit - left),
            "X-RateLimit-Reset": str(self.reset_at),
            "X-RateLimit-Resource": resource,
        }


class RateLimits:
    """The budgets of every credential; the fake holds its lock around each call."""

    def __init__(self, limit: int, installation_limit: int, clock: Callable[[], float], window: int = WINDOW):
        self.window = window  # seconds a budget lasts: an hour, or less for a bench's scaled hour
        self.limit = limit
        self.installation_limit = installation_limit
        self.clock = clock
        self._budgets: dict[str | int, Budget] = {}

    def of(self, credential: str | int) -> Budget:
        """The budget of a token (str) or an installation (its id), refilled once its window is over."""
        budget = self._budgets.get(credential)
        now = self.clock()
        if budget is None:
            limit = self.installation_limit if isinstance(credential, int) else self.limit
            budget = self._budgets[credential] = Budget(limit, 0, self.window)
        if now >= budget.reset_at:
            budget.refill(now)
        return budget


@dataclass
class Meter:
    """What one request is charged to: its credential's budget, and the resource it spends."""

    budget: Budget
    resource: str

    def headers(self) -> dict[str, str]:
        return self.budget.headers(self.resource)
