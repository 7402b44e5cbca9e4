"""`prdigest worker` end to end: three worker processes on a real PostgreSQL, against local GitHub, LLM,
Slack and Lark, with 60 subscriptions due at once. One worker is SIGKILLed while it builds, another between
posting a card and recording it: every delivery key still ends with exactly one card and one thread,
none missing. And `prdigest worker` on SQLite is one clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest
from fakes.github_api import FakeGitHub
from fakes.lark_api import FakeLark
from fakes.openai_api import FakeOpenAI, prdigest_answers
from fakes.slack_api import FakeSlack
from serve_support import (
    add_week,
    github_env,
    lark_env,
    lark_weekly,
    llm_env,
    slack_env,
    slack_weekly,
    wait_until,
    write_config,
)

from prdigest.clock import utc_now
from prdigest.periods import last_complete_week
from prdigest.subscription import WEEKDAYS

pytestmark = pytest.mark.e2e

REPOS = [f"acme/svc{i}" for i in range(6)]
SUBSCRIBED = 60
TZ = "Asia/Shanghai"


@pytest.fixture
def fire() -> datetime:
    """A weekly time two minutes ago, to the minute: due now, well within the grace period."""
    return (utc_now() - timedelta(minutes=2)).astimezone(ZoneInfo(TZ)).replace(second=0, microsecond=0)


@pytest.fixture
def github(fire: datetime) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        for seed, repo in enumerate(REPOS, start=1):
            add_week(fake, repo, last_complete_week(fire, TZ), 12, seed=seed)
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI("strict", responder=prdigest_answers) as fake:
        yield fake


def platform(i: int) -> str:
    """Every third subscription posts to Lark, the others to Slack."""
    return "lark" if i % 3 == 2 else "slack"


def channel(i: int) -> str:
    return f"oc_{i:03d}" if platform(i) == "lark" else f"C{i:03d}"


class Workers:
    def __init__(self, env: dict[str, str], logs: Path):
        self.env, self.logs, self.procs = env, logs, []

    def start(self, n: int) -> None:
        for _ in range(n):
            log = (self.logs / f"worker-{len(self.procs)}.log").open("wb")
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "prdigest.cli", "worker"],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self.env,
                    start_new_session=True,
                )
            )

    def ids(self) -> dict[int, subprocess.Popen[bytes]]:
        return {p.pid: p for p in self.procs if p.poll() is None}

    def kill(self, pid: int) -> None:
        proc = self.ids()[pid]
        os.killpg(pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def logs_text(self) -> str:
        return "\n".join(
            f"--- {p.name} ---\n{p.read_text()[-2500:]}" for p in sorted(self.logs.glob("*.log"))
        )

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def claims(pg: str) -> list[tuple[str, str, str]]:
    """(key, status, claimed_by) of every delivery row."""
    with psycopg.connect(pg, autocommit=True) as conn:
        if not conn.execute("select to_regclass('deliveries')").fetchone()[0]:
            return []  # the first worker has not set the database up yet
        return conn.execute("select key, status, claimed_by from deliveries order by key").fetchall()


def holder(pg: str, workers: Workers, status: str) -> tuple[str, int] | None:
    """A delivery key in ``status`` claimed by a live worker, and that worker's pid."""
    live = workers.ids()
    for key, st, by in claims(pg):
        pid = int(by.rsplit(":", 1)[1]) if st == status and ":" in by else 0
        if pid in live:
            return key, pid
    return None


def posted_unrecorded(pg: str, workers: Workers, slack: FakeSlack) -> tuple[str, int] | None:
    """A key whose card is in its channel while its row is still claimed by a live worker."""
    live = workers.ids()
    rows = {key: by for key, st, by in claims(pg) if st == "claimed"}
    for i in range(0, SUBSCRIBED):
        if platform(i) != "slack":
            continue
        for card in slack_weekly(slack, channel(i)):
            key = ((card.metadata or {}).get("event_payload") or {}).get("key", "")
            pid = int(rows[key].rsplit(":", 1)[1]) if key in rows and ":" in rows[key] else 0
            if pid in live:
                return key, pid
    return None


@pytest.mark.timeout(360)
def test_workers_deliver_each_week_once_when_two_of_three_die(
    tmp_path: Path,
    pg_database: str,
    github: FakeGitHub,
    slack: FakeSlack,
    lark: FakeLark,
    llm: FakeOpenAI,
    fire: datetime,
) -> None:
    config = write_config(
        tmp_path / "prdigest.toml",
        [
            {
                "platform": platform(i),
                "chat_id": channel(i),
                "repo": REPOS[i % len(REPOS)],
                "tz": TZ,
                "day": WEEKDAYS[fire.weekday()],
                "time": fire.strftime("%H:%M"),
            }
            for i in range(SUBSCRIBED)
        ],
        storage={"url": pg_database},
        workers={"concurrency": 4, "lease_seconds": 6, "stalled_after_seconds": 5, "tick_seconds": 2},
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "PG", "GITHUB_"))},
        **github_env(github), **slack_env(slack, "http"), **lark_env(lark, "http"), **llm_env(llm),
        "PRDIGEST_CONFIG": str(config),
    }  # fmt: skip
    # Every post takes a moment: builds and posts overlap, and a worker can be caught between them.
    slack.slow("chat.postMessage", 0.4, times=10_000)
    workers = Workers(env, tmp_path)
    try:
        workers.start(3)
        # One worker dies while it holds a claim it has not posted.
        building = wait_until(lambda: holder(pg_database, workers, "claimed"), 90, "a claim in progress")
        workers.kill(building[1])
        # Another dies after posting a card it has not recorded yet.
        orphan = wait_until(
            lambda: posted_unrecorded(pg_database, workers, slack), 90, "a card posted, unrecorded"
        )
        workers.kill(orphan[1])
        done = wait_until(
            lambda: (rows := claims(pg_database)) and len(rows) == SUBSCRIBED
            and all(st == "posted" for _, st, _ in rows) and rows,
            150, "every week posted",
        )  # fmt: skip
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{workers.logs_text()}") from None
    finally:
        workers.stop()
    assert building[1] != orphan[1]
    orphan_row = next(row for row in done if row[0] == orphan[0])
    assert not orphan_row[2].endswith(f":{orphan[1]}")  # recorded by a worker that took it over
    said = "".join(p.read_text() for p in tmp_path.glob("worker-*.log"))
    assert f"delivery {orphan[0]}: recovered" in said  # its card found in the chat, not posted again
    for i in range(SUBSCRIBED):
        if platform(i) == "slack":
            cards = slack_weekly(slack, channel(i))
            assert len(cards) == 1, (channel(i), len(cards))
            texts = [m.all_text for m in slack.in_thread(channel(i), cards[0].ts)]
        else:
            cards = lark_weekly(lark, channel(i))
            assert len(cards) == 1, (channel(i), len(cards))
            texts = [m.text for m in lark.in_chat(channel(i)) if m.reply_to == cards[0].message_id]
        assert texts and len(texts) == len(set(texts)), (channel(i), texts)
    assert llm.requests  # the reports were written with the model


def test_a_worker_on_sqlite_is_one_clear_error(tmp_path: Path, run_cli) -> None:
    ran = run_cli("worker", "--db", str(tmp_path / "c.db"))
    assert ran.returncode == 1
    said = ran.stderr.strip()
    assert said.startswith("Error: prdigest worker runs jobs on a PostgreSQL store"), said
    assert "on SQLite `prdigest serve` delivers the weekly reports itself" in said and "\n" not in said
