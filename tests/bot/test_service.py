"""`prdigest serve`: the web app with report pages, config subscriptions, a clean stop on SIGTERM, and
a platform whose start fails retried in the background."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from serve_support import wait_until

from prdigest.bot.connector import Connector, Part
from prdigest.bot.pages import page_link
from prdigest.bot.service import Service, sync_config_subscriptions
from prdigest.config import load_settings
from prdigest.pipeline.single import make_report
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.deliveries import page_token
from prdigest.storage.subscriptions import list_subscriptions

CONFIG = """
[web]
host = "127.0.0.1"
port = 0

[[subscriptions]]
platform = "console"
chat_id = "local"
repo = "acme-ml/trainer"
day = "fri"
time = "17:00"
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "prdigest.toml"
    path.write_text(CONFIG)
    return path


def test_report_pages_and_health(config: Path, tmp_path: Path) -> None:
    settings = load_settings(config, env={"PRDIGEST_DB": str(tmp_path / "s.db")})
    store = Store(settings.storage.db)
    source = FixtureSource(demo_fixture_path())
    report = make_report(settings, store, source, source.window, lang="en")
    token = page_token(store, report.id)
    service = Service(settings, store)
    host, port = service.start()
    try:
        base = f"http://{host}:{port}"
        assert urllib.request.urlopen(f"{base}/healthz", timeout=5).read() == b"ok\n"
        page = urllib.request.urlopen(f"{base}/reports/{token}", timeout=5)
        assert page.headers["Content-Type"].startswith("text/html")
        assert 'id="pr-4124"' in page.read().decode()
        for guess in (f"{base}/reports/{report.id}", f"{base}/reports/", f"{base}/reports/../healthz"):
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(guess, timeout=5)
            assert info.value.code == 404
        (sub,) = list_subscriptions(store)
        assert (sub.platform, sub.day, sub.time, sub.created_by) == ("console", "fri", "17:00", "config")
        assert service.scheduler.next_run(sub.id) is not None
    finally:
        service.stop()
        store.close()


def test_the_served_pages_follow_the_web_settings(config: Path, tmp_path: Path) -> None:
    env = {
        "PRDIGEST_DB": str(tmp_path / "p.db"),
        "PRDIGEST_WEB__PAGE_ACCESS": "signed",
        "PRDIGEST_WEB_SIGNING_KEY": "a-key-for-the-test",
        "PRDIGEST_PUBLIC_URL": "https://digest.example",
    }
    settings = load_settings(config, env=env)
    store = Store(settings.storage.db)
    source = FixtureSource(demo_fixture_path())
    report = make_report(settings, store, source, source.window, lang="en")
    link = page_link(settings, store, report.id, "local")  # the chat its subscription posts to
    assert link is not None
    service = Service(settings, store)
    host, port = service.start()
    try:
        local = link.replace("https://digest.example", f"http://{host}:{port}")
        assert urllib.request.urlopen(local, timeout=5).status == 200
        with pytest.raises(urllib.error.HTTPError) as bare:  # the token alone: the signed mode holds
            urllib.request.urlopen(local.split("?")[0], timeout=5)
        assert bare.value.code == 403
    finally:
        service.stop()
        store.close()


def test_config_subscriptions_are_synced_in_place(config: Path, tmp_path: Path) -> None:
    settings = load_settings(config, env={"PRDIGEST_DB": str(tmp_path / "c.db")})
    store = Store(settings.storage.db)
    first = sync_config_subscriptions(settings, store)
    again = sync_config_subscriptions(settings, store)
    assert [s.id for s in first] == [s.id for s in again] and len(list_subscriptions(store)) == 1
    store.close()


@pytest.mark.e2e  # `prdigest serve` as a child process
def test_serve_stops_cleanly_on_sigterm(config: Path, tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "prdigest.cli",
        "serve",
        "--config",
        str(config),
        "--db",
        str(tmp_path / "v.db"),
    ]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
    )
    try:
        address = None
        assert proc.stderr is not None
        for line in proc.stderr:
            if "serving on" in line:
                address = line.split("serving on ")[1].split()[0]
                break
        assert address, "the service did not start"
        assert urllib.request.urlopen(f"{address}/healthz", timeout=5).read() == b"ok\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class FlakyAdapter:
    """A platform adapter whose start fails with ``errors`` in turn, then succeeds."""

    def __init__(self, *errors: Exception):
        self.errors = list(errors)
        self.tried = threading.Semaphore(0)
        self.stopped = threading.Event()

    def start(self) -> None:
        self.tried.release()
        if self.errors:
            raise self.errors.pop(0)

    def stop(self) -> None:
        self.stopped.set()

    def refused(self, exc: BaseException) -> bool:
        return getattr(exc, "code", None) == Refused.code


class Unreachable(Exception):
    code = None


class Refused(Exception):
    code = "invalid_auth"  # Slack's answer to a revoked or wrong token


def test_a_failed_start_is_retried_with_backoff_until_it_connects() -> None:
    adapter = FlakyAdapter(Unreachable("connection refused"), Unreachable("HTTP 503"))
    waits: list[int] = []
    link = Connector("slack", adapter, backoff=lambda attempt: waits.append(attempt) or 0.0)  # type: ignore[arg-type]
    link.start()
    try:
        assert link.connected.wait(10)
        assert waits == [1, 2]  # one backoff per failure, growing with the attempt
        assert link.readiness() == Part(True, "connected")  # no probe on this adapter: its state
    finally:
        link.stop()
    assert adapter.stopped.is_set()


def test_a_refused_credential_is_logged_retried_rarely_and_stop_ends_the_wait_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = FlakyAdapter(Refused("Slack auth.test failed: invalid_auth"))
    link = Connector("slack", adapter, backoff=lambda attempt: 0.0, refused_wait_s=3600)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="prdigest.serve"):
        link.start()
        assert adapter.tried.acquire(timeout=10)
        wait_until(
            lambda: not link.readiness().ok and "invalid_auth" in link.readiness().detail, 10, "refusal"
        )
    assert "slack refused the credentials" in caplog.text and "3600 s" in caplog.text
    assert not adapter.tried.acquire(timeout=0.2)  # not tried again soon: the refusal waits its hour
    started = time.monotonic()
    link.stop()
    assert time.monotonic() - started < 2 and adapter.stopped.is_set()
    assert not link.connected.is_set()


class ProbedOut:
    """An adapter's outbound client whose probe answers ``error`` (None: ok), counting the probes."""

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.probes = 0

    def probe(self) -> None:
        self.probes += 1
        if self.error is not None:
            raise self.error


def test_a_connected_platform_is_probed_at_most_once_per_interval() -> None:
    adapter = FlakyAdapter()
    adapter.out = ProbedOut()  # type: ignore[attr-defined]
    link = Connector("slack", adapter, probe_ttl_s=3600)  # type: ignore[arg-type]
    link.start()
    try:
        assert link.connected.wait(10)
        assert link.readiness() == link.readiness() == Part(True, "connected")
        assert adapter.out.probes == 1  # type: ignore[attr-defined]
        fresh = Connector("slack", adapter, probe_ttl_s=0)  # type: ignore[arg-type]
        fresh.start()
        assert fresh.connected.wait(10)
        adapter.out.error = Refused("Slack auth.test failed: token_revoked")  # type: ignore[attr-defined]
        assert fresh.readiness() == Part(False, "refused: Refused: Slack auth.test failed: token_revoked")
        adapter.out.error = Unreachable("connection refused")  # type: ignore[attr-defined]
        assert fresh.readiness() == Part(False, "unreachable: Unreachable: connection refused")
        assert link.readiness().ok  # its answer is still the cached one
        fresh.stop()
    finally:
        link.stop()
