"""What one report asks of the LLM: its caps (``[llm] max_requests_per_report``, ``max_tokens_per_report``)
and its cost, the requests it sent and those that made the answers it reused from the cache.

Past a cap no request is sent; the caller's fallback (the rules) decides what is left, and the report
says so (``cap_note``). Thread-safe: the engine sends in parallel.
"""

from __future__ import annotations

import threading

from prdigest.analysis.llm.client import LLMUnavailable
from prdigest.config import LLMSettings
from prdigest.i18n import texts
from prdigest.models import LLMCost
from prdigest.storage import Store, llm_log

SPARE_REQUESTS = 20  # what a report may ask beyond one request per PR, when no cap is set
# The log's purposes as the footer names them; a repair is logged as one whatever it repairs.
PURPOSES = {"analyse_pr": "analysis", "narrate": "narrative", "followup": "follow-up", "route": "routing"}


class LLMReportCapped(LLMUnavailable):
    """The report has asked all its requests or tokens allow: the rules decide what is left."""


class ReportSpend:
    def __init__(self, settings: LLMSettings, store: Store, run_id: str):
        self.store = store
        self.run_id = run_id
        self.tokens_cap = settings.max_tokens_per_report
        self.request_cap = settings.max_requests_per_report  # None: set from the report's PRs (`for_prs`)
        self.capped = 0  # requests refused by a cap
        self._lock = threading.Lock()
        self._sent = 0
        self._tokens = 0
        self._reused: list[tuple[str, str]] = []  # (subject, prompt version) of answers read from the cache

    def for_prs(self, n: int) -> None:
        """Cap the requests at ``n`` PRs plus spare ones, unless the settings name a cap."""
        if self.request_cap is None:
            self.request_cap = n + SPARE_REQUESTS

    def check(self) -> None:
        """Raise LLMReportCapped once the report has sent its requests or tokens (a request's own retries
        and repair finish, so a report may end a request or two over)."""
        with self._lock:
            over = (self.request_cap is not None and self._sent >= self.request_cap) or (
                self._tokens >= self.tokens_cap
            )
            self.capped += over
        if over:
            raise LLMReportCapped(
                f"the report's cap of {self.request_cap} requests or {self.tokens_cap:,} tokens is reached"
            )

    def sent(self, tokens: int) -> None:
        with self._lock:
            self._sent += 1
            self._tokens += tokens

    def reused(self, subject: str, version: str) -> None:
        with self._lock:
            self._reused.append((subject, version))

    def by_purpose(self) -> tuple[dict[str, LLMCost], int]:
        """The report's cost by purpose, and how many of its requests this run sent."""
        run = llm_log.purpose_totals(self.store, self.run_id)
        with self._lock:
            reused = list(self._reused)
        by: dict[str, LLMCost] = {}
        for totals in (run, llm_log.built_cost(self.store, reused, self.run_id)):
            for purpose, (calls, tokens_in, tokens_out) in totals.items():
                name = PURPOSES.get(purpose, purpose)
                had = by.get(name, LLMCost())
                by[name] = LLMCost(
                    calls=had.calls + calls,
                    input_tokens=had.input_tokens + tokens_in,
                    output_tokens=had.output_tokens + tokens_out,
                )
        return dict(sorted(by.items())), sum(t.calls for t in run.values())

    def cap_note(self, lang: str) -> str | None:
        """What a report says when its own caps stopped requests, else None."""
        if not self.capped:
            return None
        return texts(lang)["llm_report_capped"].format(
            requests=self.request_cap, tokens=f"{self.tokens_cap:,}", n=self.capped
        )
