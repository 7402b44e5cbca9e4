"""Fenced delivery claims: each claim of a key takes the next fence; a heartbeat renews the lease while a
build runs; a worker whose claim was taken over posts nothing and its completion is refused."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from test_delivery import DEMO, FIRE, Recorder, settings

import prdigest.bot.delivery as delivery
from prdigest.bot.delivery import deliver_subscription, delivery_key
from prdigest.periods import last_complete_week
from prdigest.storage import Store
from prdigest.storage.deliveries import StaleClaim, claim, complete, get_delivery, owns, renew
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

SHORT = timedelta(seconds=1)  # the lease, shortened: a build of a few seconds outlasts it


@pytest.fixture
def sub(demo_store: Store) -> Subscription:
    return save_subscription(demo_store, Subscription(platform="slack", chat_id="C1", repo=DEMO.repo))


def run(store: Store, sub: Subscription, slack: Recorder, worker: str) -> Any:
    """The delivery as replica ``worker`` runs it."""
    return deliver_subscription(settings(), store, sub, {"slack": slack}, now=FIRE, worker=worker)


def slow_build(monkeypatch: pytest.MonkeyPatch, seconds: float) -> threading.Event:
    """Each build takes ``seconds`` longer; the event is set once the first has started."""
    started = threading.Event()
    build = delivery._build

    def slow(*args: Any) -> Any:
        started.set()
        time.sleep(seconds)
        return build(*args)

    monkeypatch.setattr(delivery, "_build", slow)
    return started


def test_a_stale_claim_can_neither_renew_nor_complete(demo_store: Store, sub: Subscription) -> None:
    key = "prdigest:1:2026-W37"
    first = claim(demo_store, key, 1, "2026-W37", "a:1", SHORT)
    assert first.before is None and first.fence == 1 and renew(demo_store, key, 1)
    time.sleep(1.1)  # a's lease runs out: b takes the key over
    second = claim(demo_store, key, 1, "2026-W37", "b:2", SHORT)
    assert second.before is not None and second.fence == 2
    assert not renew(demo_store, key, 1) and not owns(demo_store, key, 1) and owns(demo_store, key, 2)
    with pytest.raises(StaleClaim):
        complete(demo_store, key, "posted", "msg-a", None, 1)
    complete(demo_store, key, "posted", "msg-b", None, 2)
    row = get_delivery(demo_store, key)
    assert row is not None and (row.status, row.message_id) == ("posted", "msg-b")


@pytest.mark.timeout(60)
def test_a_build_that_outlasts_the_lease_keeps_its_claim(
    demo_store: Store, sub: Subscription, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery, "LEASE", SHORT)  # renewed every third of a second
    started = slow_build(monkeypatch, 3.0)
    slack = Recorder()
    outcomes: list[Any] = []
    first = threading.Thread(target=lambda: outcomes.append(run(demo_store, sub, slack, "a:1")), daemon=True)
    first.start()
    assert started.wait(10)
    time.sleep(1.5)  # past the lease: without the heartbeat the claim would be free to take
    second = run(demo_store, sub, slack, "b:2")
    first.join(30)
    assert second.status == "busy" and [o.status for o in outcomes] == ["posted"]
    assert len(slack.posted) == 1


@pytest.mark.timeout(60)
def test_a_worker_whose_claim_was_taken_over_posts_nothing(
    demo_store: Store, sub: Subscription, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery, "LEASE", SHORT)
    monkeypatch.setattr(delivery, "renew", lambda *_: True)  # a worker stalled: its lease is not renewed
    build = delivery._build
    started = slow_build(monkeypatch, 2.5)
    slack = Recorder()
    outcomes: list[Any] = []
    stalled = threading.Thread(target=lambda: outcomes.append(run(demo_store, sub, slack, "a:1")))
    stalled.daemon = True
    stalled.start()
    assert started.wait(10)
    time.sleep(1.2)  # its lease has run out: another worker takes the week over and posts it
    monkeypatch.setattr(delivery, "_build", build)
    taken = run(demo_store, sub, slack, "b:2")
    stalled.join(30)
    assert taken.status == "posted" and [o.status for o in outcomes] == ["busy"]
    assert len(slack.posted) == 1
    key = delivery_key(sub, last_complete_week(FIRE, sub.tz))
    row = get_delivery(demo_store, key)
    assert row is not None and row.status == "posted" and row.fence == 2
