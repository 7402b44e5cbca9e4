"""Several processes on one SQLite file: they set a new file up one at a time (setup_lock.py), and two
`prdigest deliver` runs and a `prdigest report` side by side all succeed, one card per delivery key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.github_api import FakeGitHub
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack
from serve_support import add_week, github_env, lark_env, lark_weekly, slack_env, slack_weekly, write_config

from prdigest.bot.service import sync_config_subscriptions
from prdigest.config import load_settings
from prdigest.errors import StorageError
from prdigest.models import Window
from prdigest.storage import Store
from prdigest.storage.setup_lock import setup_lock

WEEK = "2026-W37"
TZ = "Asia/Shanghai"
REPO = "acme/rocket"
# Ten new files, each opened by every process at about the same moment: ten races at setting one up.
OPENS = (
    "from prdigest.storage import Store\n"
    "for i in range(10):\n"
    "    Store(f'{folder}/shared-{{i}}.db').close()\n"
)


def run_all(commands: list[list[str]], env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    """The commands at once, each in its own process; every one killed if it outlives the test."""
    pipe = subprocess.PIPE
    children = [
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=pipe, stderr=pipe, text=True, env=env)
        for command in commands
    ]
    done = []
    try:
        for child in children:
            out, err = child.communicate(timeout=120)
            done.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return done


@pytest.mark.timeout(180)
def test_processes_that_open_a_new_file_at_once_set_it_up_in_turn(tmp_path: Path) -> None:
    results = run_all([[sys.executable, "-c", OPENS.format(folder=tmp_path)]] * 3, dict(os.environ))
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr[-500:] for r in results]
    for i in range(10):
        store = Store(tmp_path / f"shared-{i}.db")
        with store.reading() as tx:
            assert tx.rows("pragma journal_mode") == [{"journal_mode": "wal"}]
        store.close()


def test_a_setup_held_too_long_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "held.db"
    error = rf"held\.db: process {os.getpid()} has been setting"
    with setup_lock(db), pytest.raises(StorageError, match=error), setup_lock(db, wait=0.2):
        pass


@pytest.mark.timeout(240)
def test_two_deliveries_and_a_report_side_by_side_all_succeed(
    slack: FakeSlack, lark: FakeLark, tmp_path: Path, clean_env: Path
) -> None:
    with FakeGitHub() as github:
        add_week(github, REPO, Window.iso_week(2026, 37, TZ), 40)
        chats = {"slack": "C0SHARED", "lark": "oc_shared"}
        config = write_config(
            tmp_path / "prdigest.toml",
            [{"platform": p, "chat_id": c, "repo": REPO, "tz": TZ, "lang": "en"} for p, c in chats.items()],
        )
        env = {**os.environ, **github_env(github), **slack_env(slack), **lark_env(lark), "COLUMNS": "200"}
        store = Store(clean_env)
        ids = [sub.id for sub in sync_config_subscriptions(load_settings(config, env=env), store)]
        store.close()
        cli = [sys.executable, "-m", "prdigest.cli"]
        deliveries = [[*cli, "deliver", "--subscription", str(i), "--week", WEEK] for i in ids]
        report = [*cli, "report", "--repo", REPO, "--week", WEEK, "--tz", TZ]
        results = run_all([[*command, "--config", str(config)] for command in [*deliveries, report]], env)
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr[-800:] for r in results]
    assert len(slack_weekly(slack, chats["slack"])) == 1 and len(lark_weekly(lark, chats["lark"])) == 1
    assert "40" in results[2].stdout
