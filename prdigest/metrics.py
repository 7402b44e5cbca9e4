"""prdigest's Prometheus metrics: deliveries, chat commands, LLM calls and GitHub requests.

The counting sites (the scheduler, the handlers, the LLM log, the GitHub client) run in the CLI as
well as in `prdigest serve`, so they count into the process's current `Metrics`, if any: `prdigest
serve` installs its own (``use``), whose registry its web app exposes at /metrics; the CLI installs
none, counts nothing and never loads prometheus_client. Each Metrics has a registry of its own,
never prometheus_client's global one, so two services (or tests) do not mix their counts. Counting is
cheap and never fails its caller: a broken count is logged and dropped.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import Any, Concatenate, ParamSpec

log = logging.getLogger("prdigest.metrics")

P = ParamSpec("P")

# A chat command takes milliseconds from the cache and up to minutes through the LLM.
COMMAND_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, float("inf"))


class Metrics:
    """The metric objects, registered in a registry of their own."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.deliveries = Counter(
            "prdigest_deliveries", "Weekly report runs by outcome (posted, already, failed, given_up, ...).",
            ["outcome"], registry=r,
        )  # fmt: skip
        self.commands = Counter(
            "prdigest_commands", "Chat commands answered, by command and outcome (ok, error).",
            ["command", "outcome"], registry=r,
        )  # fmt: skip
        self.command_seconds = Histogram(
            "prdigest_command_seconds", "Time to answer a chat command, by command.",
            ["command"], buckets=COMMAND_BUCKETS, registry=r,
        )  # fmt: skip
        self.llm_calls = Counter(
            "prdigest_llm_calls", "LLM requests by purpose and outcome.", ["purpose", "outcome"], registry=r
        )
        self.llm_tokens = Counter(
            "prdigest_llm_tokens", "LLM tokens by purpose, outcome and kind (input, output).",
            ["purpose", "outcome", "kind"], registry=r,
        )  # fmt: skip
        self.github_requests = Counter(
            "prdigest_github_requests", "GitHub API requests by purpose and outcome (ok, error).",
            ["purpose", "outcome"], registry=r,
        )  # fmt: skip
        self.github_points = Counter(
            "prdigest_github_points", "GitHub rate-limit points spent, by GraphQL query (rest: REST).",
            ["query"], registry=r,
        )  # fmt: skip
        self.github_remaining = Gauge(
            "prdigest_github_rate_limit_remaining", "GitHub's rate-limit points left, by resource.",
            ["resource"], registry=r,
        )  # fmt: skip

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        from prometheus_client.exposition import generate_latest

        return bytes(generate_latest(self.registry))

    def wsgi_app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """GET (and HEAD) /metrics."""
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        body = self.exposition()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
        return [body]


_current: Metrics | None = None


def current() -> Metrics | None:
    return _current


def use(metrics: Metrics | None) -> None:
    """Count into ``metrics`` from now on (None: count nothing)."""
    global _current
    _current = metrics


def _counter(count: Callable[Concatenate[Metrics, P], None]) -> Callable[P, None]:
    """``count`` on the current Metrics: nothing when there is none, and never an exception."""

    @functools.wraps(count)
    def safe(*args: P.args, **kwargs: P.kwargs) -> None:
        metrics = _current
        if metrics is None:
            return
        try:
            count(metrics, *args, **kwargs)
        except Exception:  # a metric must never cost the caller its work
            log.warning("could not count %s", count.__name__, exc_info=True)

    return safe


@_counter
def count_delivery(metrics: Metrics, outcome: str) -> None:
    metrics.deliveries.labels(outcome).inc()


@_counter
def observe_command(metrics: Metrics, command: str, outcome: str, seconds: float) -> None:
    metrics.commands.labels(command, outcome).inc()
    metrics.command_seconds.labels(command).observe(seconds)


@_counter
def count_llm_call(
    metrics: Metrics, purpose: str, outcome: str, input_tokens: int, output_tokens: int
) -> None:
    metrics.llm_calls.labels(purpose, outcome).inc()
    metrics.llm_tokens.labels(purpose, outcome, "input").inc(max(0, input_tokens))
    metrics.llm_tokens.labels(purpose, outcome, "output").inc(max(0, output_tokens))


@_counter
def count_github_request(metrics: Metrics, purpose: str, outcome: str) -> None:
    metrics.github_requests.labels(purpose, outcome).inc()


@_counter
def count_github_points(metrics: Metrics, query: str, points: int) -> None:
    metrics.github_points.labels(query).inc(max(0, points))


@_counter
def set_github_remaining(metrics: Metrics, resource: str, remaining: int) -> None:
    metrics.github_remaining.labels(resource).set(remaining)
