"""/metrics: Prometheus' text format, each service with its own registry; deliveries, chat commands,
LLM calls and GitHub requests counted where they happen, and a broken count never fails its caller."""

from __future__ import annotations

import logging
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes.github_api import TOKEN, FakeGitHub
from prometheus_client.parser import text_string_to_metric_families
from serve_support import add_week

from prdigest import metrics
from prdigest.bot.app import Inbound
from prdigest.bot.service import Service
from prdigest.config import load_settings
from prdigest.handlers import Reply
from prdigest.metrics import Metrics
from prdigest.periods import last_complete_week
from prdigest.sources.github.client import ClientOptions, GitHubClient
from prdigest.storage import Store
from prdigest.storage.llm_log import LLMCall, record_call
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

# Monday 2026-09-14 09:30 in Shanghai: the demo week (in demo_store) just ended.
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(autouse=True)
def own_metrics() -> Iterator[None]:
    """Whatever a test installs, the process counts into its previous Metrics afterwards."""
    before = metrics.current()
    yield
    metrics.use(before)


def samples(text: str) -> Samples:
    """Every sample of an exposition, by name and labels."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def scrape(base: str) -> tuple[str, Samples]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base}/metrics", timeout=5) as answer:
        text = answer.read().decode()
        return answer.headers["Content-Type"], samples(text)


def test_a_delivery_and_a_chat_command_move_their_counters_by_one(demo_store: Store, tmp_path: Path) -> None:
    settings = load_settings(env={"PRDIGEST_DB": str(tmp_path / "unused.db")})
    sub = save_subscription(
        demo_store, Subscription(platform="console", chat_id="local", repo="acme-ml/trainer", lang="en")
    )
    service = Service(settings, demo_store)
    service.scheduler.clock = lambda: FIRE
    host, port = service.web.start("127.0.0.1", 0)
    base = f"http://{host}:{port}"
    try:
        content_type, before = scrape(base)
        assert content_type.startswith("text/plain; version=")

        assert sub.id is not None
        outcome = service.scheduler.run(sub.id)
        assert outcome is not None and outcome.status == "posted"
        inbound = Inbound(platform="slack", event_id="Ev1", chat_id="C1", user_id="U1", text="help")
        replies: list[Reply] = []
        done = service.core.submit(inbound, replies.append)
        assert done is not None
        done.result(timeout=20)
        assert [reply.kind for reply in replies] == ["help"]

        _, after = scrape(base)
        deliveries = "prdigest_deliveries_total"
        assert value(after, deliveries, outcome="posted") - value(before, deliveries, outcome="posted") == 1
        commands = "prdigest_commands_total"
        assert value(after, commands, command="help", outcome="ok") - value(
            before, commands, command="help", outcome="ok"
        ) == 1  # fmt: skip
        assert value(after, "prdigest_command_seconds_count", command="help") == 1
        assert value(after, "prdigest_command_seconds_sum", command="help") > 0
    finally:
        service.stop()


def test_each_service_counts_in_its_own_registry(demo_store: Store, tmp_path: Path) -> None:
    settings = load_settings(env={"PRDIGEST_DB": str(tmp_path / "unused.db")})
    first = Service(settings, demo_store)
    metrics.count_delivery("posted")
    second = Service(settings, demo_store)
    metrics.count_delivery("failed")
    try:
        one, two = samples(first.metrics.exposition().decode()), samples(second.metrics.exposition().decode())
        assert value(one, "prdigest_deliveries_total", outcome="posted") == 1
        assert value(one, "prdigest_deliveries_total", outcome="failed") == 0
        assert value(two, "prdigest_deliveries_total", outcome="posted") == 0
        assert value(two, "prdigest_deliveries_total", outcome="failed") == 1
    finally:
        first.stop()
        second.stop()


def test_llm_calls_and_tokens_are_counted_where_every_call_is_logged(tmp_path: Path) -> None:
    counted = Metrics()
    metrics.use(counted)
    store = Store(tmp_path / "llm.db")
    try:
        for outcome, tokens in (("ok", (120, 30)), ("ok", (80, 20)), ("timeout", (100, 0))):
            call = LLMCall(
                "run-1", "analyse_pr", "acme/x#1", "m", "v1", "h", "json_schema", *tokens, 5, outcome
            )
            record_call(store, call)
    finally:
        store.close()
    found = samples(counted.exposition().decode())
    assert value(found, "prdigest_llm_calls_total", purpose="analyse_pr", outcome="ok") == 2
    assert value(found, "prdigest_llm_calls_total", purpose="analyse_pr", outcome="timeout") == 1
    tokens = "prdigest_llm_tokens_total"
    assert value(found, tokens, purpose="analyse_pr", outcome="ok", kind="input") == 200
    assert value(found, tokens, purpose="analyse_pr", outcome="ok", kind="output") == 50


def test_github_requests_and_the_rate_limit_left_are_counted() -> None:
    counted = Metrics()
    metrics.use(counted)
    with FakeGitHub() as fake:
        window = last_complete_week(FIRE, "UTC")
        repo = add_week(fake, "acme/rocket", window, 3)
        client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, backoff=0, max_wait=0))
        number = next(iter(repo.prs))
        assert client.fetch_pr("acme/rocket", number) is not None
    found = samples(counted.exposition().decode())
    sent = sum(client.requests.values())
    assert value(found, "prdigest_github_requests_total", purpose="sync", outcome="ok") == sent >= 1
    budget = client.budgets["graphql"]
    assert value(found, "prdigest_github_rate_limit_remaining", resource="graphql") == budget.remaining


def test_a_broken_count_is_logged_and_never_fails_the_caller(caplog: pytest.LogCaptureFixture) -> None:
    broken = Metrics()
    metrics.use(broken)
    broken.registry.unregister(broken.deliveries)
    broken.deliveries = None  # type: ignore[assignment]
    with caplog.at_level(logging.WARNING, logger="prdigest.metrics"):
        metrics.count_delivery("posted")
    assert "could not count count_delivery" in caplog.text


def test_without_a_service_nothing_is_counted_and_prometheus_client_is_not_loaded() -> None:
    code = (
        "import sys\n"
        "from prdigest import metrics\n"
        "import prdigest.handlers.dispatch, prdigest.sources.github.client, prdigest.storage.llm_log\n"
        "metrics.count_delivery('posted'); metrics.observe_command('help', 'ok', 0.1)\n"
        "assert metrics.current() is None and 'prometheus_client' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
