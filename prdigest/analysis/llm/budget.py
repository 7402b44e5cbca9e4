"""An endpoint's monthly token budget (``[llm] monthly_token_budget``), as one run spends it.

The budget is per endpoint (the base URL), not per model: it caps what one account or server is
asked for, and a change of model mid-month must not open a fresh budget. The month's usage is
read once per run, at its first request, then counted in memory as answers come back. Requests
already in flight when the budget runs out still finish: a month may end up to
``[llm] concurrency`` requests over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from urllib.parse import urlsplit

from prdigest.analysis.llm.client import LLMUnavailable
from prdigest.clock import utc_now
from prdigest.i18n import texts
from prdigest.storage import Store, llm_budget

log = logging.getLogger("prdigest.llm")


class LLMBudgetSpent(LLMUnavailable):
    """The endpoint's monthly token budget is spent: no request is sent until the month ends."""

    def __init__(self, endpoint: str, budget: int):
        super().__init__(f"the monthly token budget of {shown_endpoint(endpoint)} ({budget} tokens) is spent")
        self.endpoint = shown_endpoint(endpoint)
        self.budget = budget


class MonthlyBudget:
    """One run's view of an endpoint's monthly budget. Thread-safe: the engine sends in parallel."""

    def __init__(
        self,
        store: Store,
        endpoint: str,
        budget: int | None,
        now: Callable[[], datetime] = utc_now,
    ):
        self.store = store
        self.endpoint = endpoint
        self.budget = budget
        self._now = now
        self._lock = threading.Lock()
        self._used: int | None = None  # read at the first request
        self.spent = False  # a request was refused for the budget in this run

    def check(self) -> None:
        """Raise LLMBudgetSpent when the month's tokens have reached the budget (one log line per run)."""
        if self.budget is None:
            return
        with self._lock:
            if self._used is None:
                self._used = llm_budget.month_tokens(self.store, self.endpoint, self._now())
            if self._used < self.budget:
                return
            first, self.spent = not self.spent, True
            used = self._used
        if first:
            log.warning(
                "the monthly token budget of %s is spent (%d of %d tokens this month, UTC): "
                "no more LLM requests this run; the rules engine answers instead",
                shown_endpoint(self.endpoint),
                used,
                self.budget,
            )
        raise LLMBudgetSpent(self.endpoint, self.budget)

    def note(self, lang: str, over_budget: int) -> str | None:
        """What a report says when the budget stopped this run's requests (``over_budget`` PRs left to
        the rules), else None."""
        if not self.spent:
            return None
        t = texts(lang)
        endpoint, budget = shown_endpoint(self.endpoint), f"{self.budget:,}"
        if over_budget:
            return t["llm_budget_spent"].format(endpoint=endpoint, budget=budget, n=over_budget)
        return t["llm_budget_spent_narrative"].format(endpoint=endpoint, budget=budget)

    def add(self, tokens: int) -> None:
        """Count the tokens of a request that came back."""
        with self._lock:
            if self._used is not None:
                self._used += tokens


def shown_endpoint(endpoint: str) -> str:
    """The endpoint as a report or log may name it: host and path, without credentials or query."""
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path}" if host else endpoint
