"""Two `prdigest serve --no-scheduler` replicas on one PostgreSQL, Slack's events over HTTP: an event
sent to both is answered once, and an event left claimed by a replica that died before answering (killed
with SIGKILL while it worked on it) is answered by the other when Slack sends it again."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from fakes.slack_api import FakeSlack, event_callback, event_id, mention, post, signed_event
from serve_support import Served, serving, slack_env, wait_until, write_config

from prdigest.clock import utc_now

pytestmark = pytest.mark.e2e

CHANNEL = "C0REPLICA"


@pytest.fixture
def replicas(tmp_path: Path, pg_database: str) -> Iterator[tuple[Served, Served, FakeSlack]]:
    config = write_config(
        tmp_path / "prdigest.toml",
        storage={"url": pg_database},
        web={"host": "127.0.0.1", "port": 0},
        access={"open": True},
    )
    with FakeSlack() as slack, ExitStack() as stack:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "PG", "GITHUB_"))},
            **slack_env(slack, "http"), "PRDIGEST_CONFIG": str(config),
        }  # fmt: skip
        command = [sys.executable, "-m", "prdigest.cli", "serve", "--no-scheduler"]
        a = stack.enter_context(serving(command, env, tmp_path / "a.log", timeout=60))
        b = stack.enter_context(serving(command, env, tmp_path / "b.log", timeout=60))
        yield a, b, slack


def answers(slack: FakeSlack, ts: str) -> list[str]:
    return [m.all_text for m in slack.in_thread(CHANNEL, ts)]


def test_an_event_sent_to_both_replicas_is_answered_once(replicas: tuple[Served, Served, FakeSlack]) -> None:
    a, b, slack = replicas
    ts = f"{time.time():.6f}"
    body = signed_event(event_callback(mention("help", channel=CHANNEL, ts=ts), event_id()))
    statuses: list[int] = []
    sends = [
        threading.Thread(target=lambda s=served: statuses.append(post(f"{s.address}/slack/events", body)[0]),
                         daemon=True)
        for served in (a, b)
    ]  # fmt: skip
    for send in sends:
        send.start()
    for send in sends:
        send.join(timeout=20)
    assert statuses == [200, 200]  # both acknowledge: the platform sees no failure
    wait_until(lambda: answers(slack, ts), 30, "an answer in the thread")
    time.sleep(1.5)  # room for a second answer, were there one
    assert len(answers(slack, ts)) == 1
    # Neither replica runs the weekly scheduler: /readyz says nothing of it.
    status, ready = a.get("/readyz")
    assert status == 200 and "scheduler" not in json.loads(ready)["parts"]


def test_an_event_whose_replica_died_unanswered_is_answered_on_slacks_retry(
    replicas: tuple[Served, Served, FakeSlack], pg_database: str
) -> None:
    a, b, slack = replicas
    ts, event = f"{time.time():.6f}", event_id()
    body = signed_event(event_callback(mention("show risks", channel=CHANNEL, ts=ts), event))
    with psycopg.connect(pg_database) as holder:
        # The chat's subscriptions held: replica a claims the event, then waits to read them.
        holder.execute("lock table subscriptions in access exclusive mode")
        threading.Thread(target=lambda: post(f"{a.address}/slack/events", body), daemon=True).start()

        def claim() -> tuple[object, ...] | None:
            with psycopg.connect(pg_database, autocommit=True) as conn:
                return conn.execute(
                    "select status, claimed_by, fence from events where event_id = %s", [event]
                ).fetchone()

        claimed = a.wait_for(claim, 30, "replica a's claim")
        assert claimed[0] == "claimed" and str(claimed[1]).endswith(f":{a.proc.pid}")
        os.kill(a.proc.pid, signal.SIGKILL)  # while it works on the event
        a.proc.wait(timeout=10)
        holder.rollback()
    assert answers(slack, ts) == []
    # Slack sends it again (after 1 minute, then 5): by the second, the claim's lease has run out.
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(
            "update events set claimed_at = %s where event_id = %s",
            [(utc_now() - timedelta(minutes=10)).isoformat(), event],
        )
    retry = {"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"}
    assert post(f"{b.address}/slack/events", body, retry)[0] == 200
    wait_until(lambda: answers(slack, ts), 30, "the retry answered")
    with psycopg.connect(pg_database, autocommit=True) as conn:
        row = conn.execute(
            "select status, fence, claimed_by from events where event_id = %s", [event]
        ).fetchone()
    assert row is not None and row[:2] == ("answered", 2) and str(row[2]).endswith(f":{b.proc.pid}")
    assert len(answers(slack, ts)) == 1
