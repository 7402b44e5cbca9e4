"""The workers' daily prepare: a job per subscribed repository, the repository its lock and queueing lock
(two workers never prepare one at once, and one waits at most), at ``[schedule] prepare_at`` (UTC)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from procrastinate.exceptions import AlreadyEnqueued

from prdigest.bot.workers import Runtime, build_jobs, defer_prepares
from prdigest.config import load_settings
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription


class Queue:
    """A task's configure().defer(), with procrastinate's queueing lock: one job waiting per lock."""

    def __init__(self) -> None:
        self.waiting: dict[str, dict[str, Any]] = {}

    def configure(self, *, lock: str, queueing_lock: str) -> Any:
        assert lock == queueing_lock

        def defer(**kwargs: Any) -> None:
            if queueing_lock in self.waiting:
                raise AlreadyEnqueued("one is waiting")
            self.waiting[queueing_lock] = kwargs

        return SimpleNamespace(defer=defer)


def test_every_subscribed_repository_is_prepared_once_whatever_its_subscriptions(any_store: Store) -> None:
    for chat, lang in (("C1", "zh"), ("C2", "en")):  # one repository, two languages
        save_subscription(any_store, Subscription(platform="slack", chat_id=chat, repo="acme/app", lang=lang))
    save_subscription(any_store, Subscription(platform="slack", chat_id="C3", repos=["acme/app", "acme/web"]))
    rt = Runtime(load_settings(env={}), any_store, deliverers={})
    queue = Queue()
    assert defer_prepares(rt, queue) == ["acme/app", "acme/web"]
    assert queue.waiting == {
        "prepare:acme/app": {"repo": "acme/app"},
        "prepare:acme/web": {"repo": "acme/web"},
    }
    assert defer_prepares(rt, queue) == []  # both still waiting: none deferred twice


@pytest.mark.parametrize(("prepare_at", "cron"), [("03:15", "15 3 * * *"), ("off", None)])
def test_the_prepare_dispatch_runs_daily_at_the_configured_time(prepare_at: str, cron: str | None) -> None:
    jobs = build_jobs(load_settings(env={"PRDIGEST_SCHEDULE__PREPARE_AT": prepare_at}))
    periodic = jobs.app.periodic_registry.periodic_tasks
    found = periodic.get(("prdigest.dispatch_prepares", "prepare"))
    assert (found.cron if found else None) == cron
    assert jobs.prepare.name == "prdigest.prepare"
