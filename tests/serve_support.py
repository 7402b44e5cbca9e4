"""Shared by the end-to-end tests and bench/serve_bench.py: config files, the fakes as prdigest's
environment, `prdigest serve` as a child process, and the weekly cards the fake chats hold."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from fakes.github_api import TOKEN, FakeGitHub, FakeRepo
from fakes.lark_api import FakeLark, Sent
from fakes.openai_api import KEY, FakeOpenAI
from fakes.slack_api import FakeSlack, Message

from prdigest.bot.slack.adapter import REPORT_EVENT
from prdigest.models import Window

T = TypeVar("T")

_SERVING = re.compile(r"serving on (http://\S+)")
# Past any proxy: everything here is on 127.0.0.1.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def wait_until(predicate: Callable[[], T], timeout: float, what: str, step: float = 0.05) -> T:
    """Poll until ``predicate()`` is truthy and return it; AssertionError naming ``what`` at ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


# --- config and environment --------------------------------------------------------------------


def write_config(
    path: Path, subscriptions: Sequence[Mapping[str, Any]] = (), **tables: Mapping[str, Any]
) -> Path:
    """A prdigest.toml: ``tables`` as [name] tables, then one [[subscriptions]] entry each."""
    lines: list[str] = []
    for name, table in tables.items():
        lines += [f"[{name}]", *(f"{k} = {json.dumps(v)}" for k, v in table.items()), ""]
    for sub in subscriptions:
        lines += ["[[subscriptions]]", *(f"{k} = {json.dumps(v)}" for k, v in sub.items()), ""]
    path.write_text("\n".join(lines), encoding="utf-8")  # JSON scalars and strings are valid TOML
    return path


def github_env(github: FakeGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": github.url}


def llm_env(llm: FakeOpenAI) -> dict[str, str]:
    return {"PRDIGEST_LLM_BASE_URL": llm.url, "PRDIGEST_LLM_MODEL": "fake-model", "PRDIGEST_LLM_API_KEY": KEY}


def lark_env(lark: FakeLark, mode: str = "ws") -> dict[str, str]:
    return {**lark.env(), "PRDIGEST_LARK_MODE": mode}


def slack_env(slack: FakeSlack, mode: str = "socket") -> dict[str, str]:
    return {
        "PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token,
        "PRDIGEST_SLACK_APP_TOKEN": slack.app_token,
        "PRDIGEST_SLACK_SIGNING_SECRET": slack.signing_secret,
        "PRDIGEST_SLACK_API_URL": slack.url,
        "PRDIGEST_SLACK_MODE": mode,
    }


def add_week(github: FakeGitHub, name: str, window: Window, count: int, seed: int = 1) -> FakeRepo:
    """A repository with ``count`` PRs merged in ``window`` and a few the week before (not in the report)."""
    repo = github.repos.get(name) or github.add_repo(FakeRepo(name))
    repo.generate(count, window.start, window.end, seed=seed)
    repo.generate(5, window.start - timedelta(days=7), window.start, seed=seed + 1, closed_every=0)
    return repo


# --- what the fake chats hold ------------------------------------------------------------------


def slack_weekly(slack: FakeSlack, channel: str) -> list[Message]:
    """Weekly report messages in a channel (top level, tagged with a delivery key)."""
    return [m for m in slack.in_thread(channel, None) if (m.metadata or {}).get("event_type") == REPORT_EVENT]


def lark_weekly(lark: FakeLark, chat_id: str) -> list[Sent]:
    """Weekly report cards in a chat: new messages (not replies) whose uuid is a delivery key."""
    return [
        m
        for m in lark.in_chat(chat_id)
        if m.msg_type == "interactive" and m.reply_to is None and (m.uuid or "").startswith("prdigest:")
    ]


# --- `prdigest serve` ---------------------------------------------------------------------------


@dataclass
class Served:
    """A running `prdigest serve`; its log (stderr) goes to a file, so no pipe can fill up and block it."""

    proc: subprocess.Popen[bytes]
    log: Path
    address: str = ""

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, predicate: Callable[[], T], timeout: float, what: str) -> T:
        """``wait_until`` while the process lives; a failure quotes the end of its log."""

        def alive_and_true() -> T:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited ({self.proc.returncode}) before {what}")
            return predicate()

        try:
            return wait_until(alive_and_true, timeout, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- serve log ---\n{self.text()[-3000:]}") from None

    def wait_log(self, needle: str, timeout: float) -> str:
        return self.wait_for(lambda: needle in self.text() and self.text(), timeout, f"{needle!r} in the log")

    def get(self, path: str) -> tuple[int, bytes]:
        with _OPENER.open(f"{self.address}{path}", timeout=5) as answer:
            return answer.status, answer.read()

    def terminate(self, timeout: float) -> int:
        """SIGTERM, then the exit status (TimeoutExpired if it does not stop within ``timeout``)."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def serving(
    command: Sequence[str], env: Mapping[str, str], log: Path, timeout: float = 30
) -> Iterator[Served]:
    """Start `prdigest serve` (``command``), wait for its "serving on" line; killed on the way out."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, env=dict(env)
        )
    served = Served(proc, log)
    try:
        match = _SERVING.search(served.wait_log("serving on", timeout))
        assert match, "no address in the serving line"
        served.address = match.group(1)
        yield served
    finally:
        served.kill()
