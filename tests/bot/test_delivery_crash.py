"""A weekly delivery killed with SIGKILL, then run again: exactly one report in the chat.

Real processes: a driver (written here, run in a child) imports prdigest and runs what
`prdigest deliver` runs, killing itself at the chosen point — after the claim but before the
post, or after the post but before the completion is recorded. Then the real `prdigest
deliver` runs once the dead worker's lease has run out. Slack recovers through the delivery key
in the message metadata, Lark through the key in the card, found in the chat's history (past
Lark's one-hour uuid window too).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from fakes.github_api import FakeGitHub
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack
from serve_support import add_week, github_env, lark_env, lark_weekly, slack_env, slack_weekly, write_config

from prdigest.bot.delivery import LEASE
from prdigest.bot.service import sync_config_subscriptions
from prdigest.clock import utc_now
from prdigest.config import load_settings
from prdigest.models import Window
from prdigest.storage import Store

pytestmark = pytest.mark.e2e  # real processes, killed and run again

WEEK = "2026-W37"
TZ = "Asia/Shanghai"
REPO = "acme/rocket"
CHAT = {"slack": "C0CRASH", "lark": "oc_crash"}

DRIVER = '''
"""Run one subscription's delivery as `prdigest deliver` does, and SIGKILL this process at a chosen point."""
import os
import signal
import sys

import prdigest.bot.delivery as delivery
from prdigest.bot.platforms import chat_adapters
from prdigest.bot.service import sync_config_subscriptions
from prdigest.config import load_settings
from prdigest.periods import parse_week
from prdigest.storage import Store
from prdigest.storage.subscriptions import get_subscription

config, sub_id, week, point = sys.argv[1:]


def die(*_):
    os.kill(os.getpid(), signal.SIGKILL)


settings = load_settings(config)
store = Store(settings.storage.db)
sync_config_subscriptions(settings, store)
sub = get_subscription(store, int(sub_id))
deliverers = {platform: d for platform, _, d in chat_adapters(settings, None, None)}
if point == "before-post":
    deliverers[sub.platform].deliver = die  # the key is claimed; nothing has gone out
else:
    real_complete = delivery.complete

    def complete(store, key, status, *rest):
        if status == "posted":
            die()  # the report is in the chat; the claim is not completed
        real_complete(store, key, status, *rest)

    delivery.complete = complete
delivery.deliver_subscription(settings, store, sub, deliverers, window=parse_week(week, sub.tz))
sys.exit("the delivery finished without reaching the kill point")
'''


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        add_week(fake, REPO, Window.iso_week(2026, 37, TZ), 40)
        yield fake


def deliver(sub_id: int, config: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real `prdigest deliver`, in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "prdigest.cli", "deliver", "--subscription", str(sub_id), "--week", WEEK,
         "--config", str(config)],
        capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def delivery_row(db: Path) -> dict[str, Any]:
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        (row,) = conn.execute("select * from deliveries").fetchall()
        return dict(row)


def expire_lease(db: Path, key: str) -> None:
    """The dead worker's claim, aged past its lease (as if the restart came later)."""
    aged = (utc_now() - LEASE * 2).isoformat()
    with closing(sqlite3.connect(db)) as conn, conn:
        assert conn.execute("update deliveries set claimed_at = ? where key = ?", [aged, key]).rowcount == 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("point", ["before-post", "before-complete"])
@pytest.mark.parametrize("platform", ["slack", "lark"])
def test_a_killed_delivery_run_again_posts_exactly_once(
    platform: str,
    point: str,
    github: FakeGitHub,
    slack: FakeSlack,
    lark: FakeLark,
    tmp_path: Path,
    clean_env: Path,
) -> None:
    config = write_config(
        tmp_path / "prdigest.toml",
        [{"platform": platform, "chat_id": CHAT[platform], "repo": REPO, "tz": TZ, "lang": "en"}],
    )
    env = {**os.environ, **github_env(github), **slack_env(slack), **lark_env(lark), "COLUMNS": "200"}
    settings = load_settings(config, env=env)
    store = Store(clean_env)
    (sub,) = sync_config_subscriptions(settings, store)
    store.close()
    key = f"prdigest:{sub.id}:{WEEK}"

    def weekly() -> list[Any]:
        return slack_weekly(slack, CHAT["slack"]) if platform == "slack" else lark_weekly(lark, CHAT["lark"])

    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(driver), str(config), str(sub.id), WEEK, point],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL, err[-2000:]
    claim = delivery_row(clean_env)
    assert (claim["key"], claim["status"]) == (key, "claimed")
    assert claim["claimed_by"].endswith(f":{child.pid}")  # the dead child's claim
    assert len(weekly()) == (0 if point == "before-post" else 1)
    if point == "before-post":
        # Within the lease the claim is taken for a live worker's: a run now posts nothing.
        early = deliver(sub.id, config, env)
        assert early.stdout.strip() == f"{key}: busy" and weekly() == []

    expire_lease(clean_env, key)
    again = deliver(sub.id, config, env)
    assert again.returncode == 0, again.stderr[-2000:]
    (card,) = weekly()
    message_id = card.ts if platform == "slack" else card.message_id
    # Slack finds its post by the metadata, Lark by the key in the card in the chat's history.
    status = "recovered" if point == "before-complete" else "posted"
    assert again.stdout.strip() == f"{key}: {status} ({message_id})"
    row = delivery_row(clean_env)
    assert (row["status"], row["message_id"]) == ("posted", message_id)
    if platform == "slack":
        assert "*Merged PRs*\n40" in card.all_text
        assert len([u for u in slack.uploads.values() if u.completed]) == 1  # the full report, once
        thread = [m.metadata["event_payload"]["key"] for m in slack.in_thread(CHAT["slack"], message_id)]
    else:
        assert "Merged PRs</font>\\n**40" in card.text  # the figure, then any change on earlier weeks
        assert len([m for m in lark.in_chat(CHAT["lark"]) if m.msg_type == "file"]) == 1
        thread = [m.uuid for m in lark.in_chat(CHAT["lark"]) if m.reply_to == message_id]
    # The card's thread, each reply once and in order, whichever run posted it.
    assert thread and thread == [f"{key}:thread:{i}" for i in range(len(thread))]
