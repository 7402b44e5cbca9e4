"""/readyz and a platform that goes away: `prdigest serve` degrades instead of dying.

Lark's fake is reached through a relay on 127.0.0.1 that the test takes down and brings back on the
same port, so Lark is "unreachable" for real (connections refused) while its fake keeps its state;
Slack's fake stays up throughout and keeps answering.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack, slash_command
from serve_support import lark_env, serving, slack_env, wait_until, write_config

from prdigest.bot.connector import Part
from prdigest.bot.lark.client import PROBE_TIMEOUT_S, LarkError, LarkOutbound
from prdigest.bot.readiness import Readiness, database_check, last_delivery_check
from prdigest.bot.service import Service
from prdigest.config import load_settings
from prdigest.storage import Store
from prdigest.storage.deliveries import claim, complete, uncertain

CHANNEL = "C0TEAM"


class Relay:
    """TCP from 127.0.0.1:``port`` to a fake's port; ``down()`` refuses and cuts every connection,
    ``up()`` listens again on the same port."""

    def __init__(self, target: int):
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> Relay:
        listener = socket.create_server(("127.0.0.1", self.port))  # SO_REUSEADDR: the same port again
        listener.settimeout(0.05)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="relay", daemon=True).start()
        return self

    def down(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            conns, self._open = self._open, []
        for conn in conns:
            conn.close()

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by down()
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self._lock:
                self._open += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(src, dst), name="relay-pump", daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            sock.close()


@pytest.fixture
def relay(lark: FakeLark) -> Iterator[Relay]:
    port = int(lark.url.rsplit(":", 1)[1])
    relay = Relay(port).up()
    yield relay
    relay.down()


def start_service(tmp_path: Path, lark: FakeLark, slack: FakeSlack, relay: Relay, lark_mode: str) -> Service:
    config = write_config(tmp_path / "prdigest.toml", web={"host": "127.0.0.1", "port": 0})
    env = {**lark_env(lark, lark_mode), **slack_env(slack), "PRDIGEST_LARK_DOMAIN": relay.url}
    settings = load_settings(config, env={**env, "PRDIGEST_DB": str(tmp_path / "r.db")})
    return Service(settings, Store(settings.storage.db))


def get(base: str, path: str, method: str = "GET") -> tuple[int, dict[str, Any] | bytes]:
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(f"{base}{path}", method=method), timeout=20) as answer:
            status, body = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    return status, json.loads(body) if path == "/readyz" and body else body


def ready_status(base: str, status: int) -> dict[str, Any] | None:
    code, body = get(base, "/readyz")
    return body if code == status and isinstance(body, dict) else None


def slack_command_answered(slack: FakeSlack, text: str) -> str:
    """`/prdigest text` through Socket Mode; the answer posted in the channel."""
    before = len(slack.in_thread(CHANNEL, None))
    fields = slash_command(
        text, channel=CHANNEL, trigger_id=f"trig-{time.time()}", response_url=slack.response_url(CHANNEL)
    )
    slack.wait_connected(timeout=20)
    slack.wait_ack(slack.send_command(fields))
    answers = slack.wait_for(lambda: slack.in_thread(CHANNEL, None)[before:], timeout=20)
    return str(answers[-1].all_text)


@pytest.mark.timeout(120)
def test_readyz_turns_503_while_lark_is_away_and_200_when_it_is_back(
    tmp_path: Path, lark: FakeLark, slack: FakeSlack, relay: Relay
) -> None:
    service = start_service(tmp_path, lark, slack, relay, "http")
    host, port = service.start()
    base = f"http://{host}:{port}"
    try:
        ready = wait_until(lambda: ready_status(base, 200), 30, "/readyz 200")
        assert ready["ready"] is True
        assert set(ready["parts"]) == {"database", "lark", "slack", "scheduler", "deliveries"}
        assert all(part["ok"] for part in ready["parts"].values()), ready

        relay.down()
        down = wait_until(lambda: ready_status(base, 503), 30, "/readyz 503 with Lark away")
        assert down["ready"] is False
        assert down["parts"]["lark"]["ok"] is False and "unreachable" in down["parts"]["lark"]["detail"]
        assert all(down["parts"][name]["ok"] for name in ("database", "slack", "scheduler", "deliveries"))
        assert lark.app_secret not in json.dumps(down) and slack.bot_token not in json.dumps(down)
        assert get(base, "/healthz") == (200, b"ok\n")
        assert get(base, "/readyz", "HEAD")[0] == 503
        # Slack keeps answering while Lark is away.
        assert "prdigest" in slack_command_answered(slack, "help").lower()

        relay.up()
        back = wait_until(lambda: ready_status(base, 200), 30, "/readyz 200 with Lark back")
        assert back["parts"]["lark"] == {"ok": True, "detail": "connected"}
    finally:
        service.stop()
        service.store.close()


@pytest.mark.timeout(120)
def test_serve_starts_while_lark_is_unreachable_and_connects_once_it_is_up(
    tmp_path: Path, lark: FakeLark, slack: FakeSlack, relay: Relay
) -> None:
    relay.down()  # Lark is unreachable before the service starts
    service = start_service(tmp_path, lark, slack, relay, "ws")
    host, port = service.start()
    base = f"http://{host}:{port}"
    try:
        assert get(base, "/healthz") == (200, b"ok\n")

        def lark_failed_once() -> dict[str, Any] | None:
            body = ready_status(base, 503)
            return body if body and body["parts"]["lark"]["detail"].startswith("not connected") else None

        down = wait_until(lark_failed_once, 30, "/readyz 503 after Lark's first failed start")
        assert down["parts"]["lark"]["detail"].startswith("not connected: LarkError"), down
        assert all(down["parts"][name]["ok"] for name in ("database", "slack", "scheduler", "deliveries"))
        (lark_link,) = (c for c in service.connectors if c.name == "lark")
        assert not lark_link.connected.is_set()
        assert "prdigest" in slack_command_answered(slack, "help").lower()

        relay.up()
        assert lark_link.connected.wait(30), "Lark did not connect once it was up"
        lark.ws.wait_connected(timeout=20)
        event = lark.message_event("help", chat_id="oc_team")
        assert lark.push(event).code == 200
        answer = lark.wait_for(lambda m: m.uuid == f"{event['header']['event_id']}:answer", timeout=30)
        assert answer.reply_to == event["event"]["message"]["message_id"]
        wait_until(lambda: ready_status(base, 200), 30, "/readyz 200 once Lark is up")
    finally:
        service.stop()
        service.store.close()


def test_the_database_part_fails_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    store = Store(tmp_path / "locked.db")
    check = database_check(store)
    try:
        assert check() == Part(True, "writable")
        other = sqlite3.connect(tmp_path / "locked.db", timeout=0)
        other.execute("BEGIN IMMEDIATE")  # a writer that does not let go
        parts = Readiness({"database": check}).parts()
        assert parts["database"].ok is False and "locked" in parts["database"].detail
        other.rollback()
        other.close()
        assert check() == Part(True, "writable")
        with store.reading() as tx:  # the store's own wait for a busy file is kept
            assert tx.rows("PRAGMA busy_timeout") == [{"timeout": 30_000}]
    finally:
        store.close()


def test_the_deliveries_part_follows_the_last_weekly_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "d.db")
    failing: list[str] = []
    check = last_delivery_check(store, lambda: failing)
    try:
        assert check() == Part(True, "no delivery yet")
        claim(store, "prdigest:1:2026-W37", 1, "2026-W37", "me", timedelta(minutes=15))
        assert check() == Part(True, "prdigest:1:2026-W37: in progress")
        uncertain(store, "prdigest:1:2026-W37")  # a send that timed out: it may have gone out
        assert check().ok is False
        complete(store, "prdigest:1:2026-W37", "posted", "m1", None)
        assert check().ok is True and check().detail.startswith("prdigest:1:2026-W37: posted at ")
        failing.append("prdigest:1:2026-W38")  # a run that failed before it claimed its week
        assert check() == Part(False, "failing, retried by the scheduler: prdigest:1:2026-W38")
    finally:
        store.close()


def test_the_lark_probe_gives_up_after_a_short_timeout(lark: FakeLark) -> None:
    out = LarkOutbound(lark.app_id, lark.app_secret, lark.url)
    out.probe()
    lark.slow("/open-apis/bot/v3/info", PROBE_TIMEOUT_S + 5)
    started = time.monotonic()
    with pytest.raises(LarkError, match="reach Lark"):
        out.probe()
    assert time.monotonic() - started < PROBE_TIMEOUT_S + 2  # not the 15 s of an ordinary call


@pytest.mark.e2e  # `prdigest serve` as a child process
@pytest.mark.timeout(90)
def test_serve_keeps_serving_with_lark_away_and_slack_refusing_its_token_and_stops_on_sigterm(
    tmp_path: Path, lark: FakeLark, slack: FakeSlack, relay: Relay
) -> None:
    relay.down()
    config = write_config(tmp_path / "prdigest.toml", web={"host": "127.0.0.1", "port": 0})
    env = {
        **os.environ, **lark_env(lark, "ws"), **slack_env(slack),
        "PRDIGEST_LARK_DOMAIN": relay.url, "PRDIGEST_SLACK_BOT_TOKEN": "xoxb-not-the-right-one",
    }  # fmt: skip
    command = [sys.executable, "-m", "prdigest.cli", "serve", "--config", str(config)]
    with serving(command, env, tmp_path / "serve.log") as served:
        served.wait_log("slack refused the credentials", 30)
        served.wait_log("lark: could not connect", 30)
        assert served.get("/healthz") == (200, b"ok\n")
        down = ready_status(served.address, 503)
        assert down is not None and "invalid_auth" in down["parts"]["slack"]["detail"], down
        assert down["parts"]["lark"]["ok"] is False
        assert "xoxb-not-the-right-one" not in json.dumps(down) + served.text()
        assert served.terminate(timeout=15) == 0, served.text()[-3000:]
    assert "Traceback" not in served.text(), served.text()[-3000:]
