"""The workers' jobs, run in process: a failed delivery retried with the scheduler's backoff, a week given
up once its next try would fall past the grace period (and never dispatched again), on both stores."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from prdigest import clock
from prdigest.bot.scheduler import GRACE
from prdigest.bot.workers import Runtime, build_jobs, due_deliveries
from prdigest.config import load_settings
from prdigest.storage import Store
from prdigest.storage.deliveries import get_delivery
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

FIRED = datetime(2026, 9, 14, 9, 0, tzinfo=UTC)  # a Monday, 09:00 UTC


class Deferred:
    """A task's configure().defer() as the dispatch calls it, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def configure(self, *, lock: str, queueing_lock: str) -> Any:
        assert lock == queueing_lock
        return SimpleNamespace(defer=lambda **kwargs: self.calls.append((lock, kwargs)))


@pytest.fixture
def sub(any_store: Store) -> Subscription:
    return save_subscription(
        any_store,
        Subscription(platform="slack", chat_id="C1", repo="acme/app", day="mon", time="09:00", tz="UTC"),
    )


def run_deliver(any_store: Store, sub: Subscription, attempts: int) -> str:
    """The deliver task's function, as a worker runs it, after ``attempts`` earlier tries; Slack is not
    configured here, so the delivery fails."""
    settings = load_settings(env={})
    jobs = build_jobs(settings)
    jobs.runtime["rt"] = Runtime(settings, any_store, deliverers={})
    context = SimpleNamespace(job=SimpleNamespace(attempts=attempts))
    result: str = jobs.deliver.func(context, subscription_id=sub.id, fired=FIRED.isoformat())
    return result


def test_a_failed_delivery_is_retried_with_backoff_then_given_up_past_its_grace(
    any_store: Store, sub: Subscription, caplog: pytest.LogCaptureFixture
) -> None:
    key = f"prdigest:{sub.id}:2026-W37"
    strategy = build_jobs(load_settings(env={})).deliver.retry_strategy
    waits = [
        strategy.get_retry_decision(exception=RuntimeError(), job=SimpleNamespace(attempts=n))
        for n in (0, 1, 6)
    ]
    # procrastinate counts the wait from its own (the machine's) clock.
    in_s = [round((w.retry_at - datetime.now(UTC)).total_seconds() / 10) * 10 for w in waits]
    assert in_s == [60, 120, 1800]
    clock.set_now(FIRED + timedelta(hours=5))  # the next try (in 4 minutes) is within the grace period
    with pytest.raises(Exception, match="not configured"):
        run_deliver(any_store, sub, attempts=2)
    assert get_delivery(any_store, key) is None
    clock.set_now(FIRED + GRACE - timedelta(minutes=2))  # the next try would come after it
    with caplog.at_level(logging.ERROR, logger="prdigest.scheduler"):
        assert run_deliver(any_store, sub, attempts=2) == "given_up"
    given_up = get_delivery(any_store, key)
    assert given_up is not None and given_up.status == "given_up"
    assert any("giving up" in r.getMessage() for r in caplog.records)
    # Dispatch, still within the grace period, leaves the week alone.
    deferred = Deferred()
    rt = Runtime(load_settings(env={}), any_store, deliverers={})
    assert due_deliveries(rt, deferred, FIRED + GRACE - timedelta(minutes=1)) == []
    assert deferred.calls == []


def test_dispatch_defers_each_due_week_once_per_tick_and_none_past_the_grace(
    any_store: Store, sub: Subscription
) -> None:
    rt = Runtime(load_settings(env={}), any_store, deliverers={})
    deferred = Deferred()
    assert due_deliveries(rt, deferred, FIRED + timedelta(minutes=3)) == [f"prdigest:{sub.id}:2026-W37"]
    assert deferred.calls == [
        (f"prdigest:{sub.id}:2026-W37", {"subscription_id": sub.id, "fired": FIRED.isoformat()})
    ]
    assert due_deliveries(rt, Deferred(), FIRED + GRACE + timedelta(minutes=1)) == []  # too late
    assert due_deliveries(rt, Deferred(), FIRED - timedelta(minutes=1)) == []  # last week's, long past


def test_dispatch_leaves_a_week_alone_while_a_worker_holds_it_and_takes_it_when_the_lease_runs_out(
    any_store: Store, sub: Subscription
) -> None:
    from prdigest.storage.deliveries import claim

    settings = load_settings(env={})
    rt = Runtime(settings, any_store, deliverers={})
    key = f"prdigest:{sub.id}:2026-W37"
    assert sub.id is not None
    clock.set_now(FIRED + timedelta(minutes=1))
    claim(any_store, key, sub.id, "2026-W37", "host:1", settings.workers.lease)
    assert due_deliveries(rt, Deferred(), FIRED + timedelta(minutes=5)) == []  # being delivered
    later = FIRED + timedelta(minutes=1) + settings.workers.lease + timedelta(seconds=1)
    assert due_deliveries(rt, Deferred(), later) == [key]  # its worker went silent


def test_a_worker_runs_as_many_sync_jobs_at_once_as_its_concurrency() -> None:
    """More than the 32 threads of asyncio's default executor at most: every job waits for all the
    others, so a worker with fewer threads than its concurrency would break the barrier."""
    import threading

    import procrastinate
    from procrastinate.testing import InMemoryConnector

    from prdigest.bot.workers import work_on

    jobs = 40
    barrier = threading.Barrier(jobs, timeout=10)
    app: Any = procrastinate.App(connector=InMemoryConnector())
    met: list[int] = []

    def wait_for_the_others(n: int) -> None:
        barrier.wait()
        met.append(n)

    task = app.task(name="wait", queue="q")(wait_for_the_others)
    with app.open():
        for n in range(jobs):
            task.defer(n=n)
    work_on(app, jobs, queues=["q"], wait=False, install_signal_handlers=False)
    assert sorted(met) == list(range(jobs))
