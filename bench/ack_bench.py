"""Slack ack benchmark: how fast the HTTP endpoint acks events, and that a retried event is answered once.
Prints `name=value` lines.

    python bench/ack_bench.py [--events 50]

A local fake Slack and the SlackBot in HTTP mode behind the web app, on 127.0.0.1; the
demo week in a fresh cache. `--events` correctly signed `app_mention` events ("top 3",
"risks", ...) are sent at once by another process (as Slack's are: this process's threads
would take the server's GIL), each on its own connection, and the time from each connect to
its HTTP ack is measured there (the answers are posted after). Figures: `ack_p50_ms`,
`ack_p99_ms` (goal: p99 <= 50, Slack's deadline is 3000) over the events acked,
`ack_failures`: connections refused or reset before an ack (goal: 0), and
`replies_for_3_deliveries`: one event delivered three times, as Slack retries it
(x-slack-retry-num 1 and 2); replies posted (goal: 1). `measure()` returns the same
figures, for bench/chat_bench.py.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import count
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fake Slack

from fakes.slack_api import FakeSlack, event_callback, mention, post, signed_event  # noqa: E402

from prdigest.bot.app import WORKING, BotCore  # noqa: E402
from prdigest.bot.slack.adapter import SlackBot  # noqa: E402
from prdigest.bot.web import WebApp  # noqa: E402
from prdigest.config import load_settings  # noqa: E402
from prdigest.handlers import Services  # noqa: E402
from prdigest.sources.fixture import FixtureSource, demo_fixture_path  # noqa: E402
from prdigest.storage import Store  # noqa: E402

TEXTS = ["top 3", "risks", "help", "authors", "hot files", "explain #4131"]
CHANNEL = "C0BENCH"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(events: int = 50) -> dict[str, float]:
    """Ack latencies of ``events`` concurrent signed events; replies to one event delivered three times."""
    # The fake is on 127.0.0.1: never through a proxy (the Slack SDK reads HTTPS_PROXY).
    os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    demo = FixtureSource(demo_fixture_path())
    with tempfile.TemporaryDirectory(prefix="prdigest-ack-bench-") as tmp, FakeSlack() as slack:
        env = {
            "PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token,
            "PRDIGEST_SLACK_SIGNING_SECRET": slack.signing_secret,
            "PRDIGEST_SLACK_MODE": "http",
            "PRDIGEST_SLACK_API_URL": slack.url,
            "PRDIGEST_ACCESS__OPEN": "true",  # one team's install: the bench's channel sees the demo week
        }
        settings = load_settings(env=env)
        store = Store(Path(tmp) / "bench.db")
        store.upsert_prs(demo.prs)
        core = BotCore(Services(settings=settings, store=store, default_repo=demo.repo))
        bot = SlackBot(settings, core)
        web = WebApp()
        web.mount_events(SlackBot.events_path, bot.wsgi_app())
        host, port = web.start("127.0.0.1", 0)
        url = f"http://{host}:{port}{SlackBot.events_path}"
        try:
            bot.start()
            ids = count(1)
            _ack(url, next(ids), "help")  # warm-up: Bolt's first request runs auth.test
            slack.wait_for(lambda: slack.messages, timeout=30)
            acks = _concurrent_acks(url, [(next(ids), TEXTS[i % len(TEXTS)]) for i in range(events)])
            retried = next(ids)
            for retry in range(3):
                _ack(url, retried, "top 3", retry)
            slack.wait_for(lambda: _replies(slack, retried), timeout=30)
        finally:
            bot.stop()  # every listener has submitted its work...
            core.close()  # ...and every answer is posted
            web.stop()
            store.close()
        acked = [a for a in acks if a is not None]
        return {
            "ack_p50_ms": statistics.median(acked),
            "ack_p99_ms": percentile(acked, 0.99),
            "ack_failures": float(len(acks) - len(acked)),
            "replies_for_3_deliveries": float(len(_replies(slack, retried))),
        }


def _ts(n: int) -> str:
    return f"1789000000.{n:06d}"


def _ack(url: str, n: int, text: str, retry: int = 0) -> float:
    """Send one signed app_mention; the time to its HTTP ack, in ms."""
    request = signed_event(event_callback(mention(text, channel=CHANNEL, ts=_ts(n)), f"EvBench{n:06d}"))
    headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
    start = time.perf_counter()
    status, _ = post(url, request, headers)
    elapsed = (time.perf_counter() - start) * 1000
    if status != 200:
        raise RuntimeError(f"event {n} was answered {status}")
    return elapsed


def _concurrent_acks(url: str, events: list[tuple[int, str]]) -> list[float | None]:
    """The events signed here, sent by a client process; the ms to each ack (None: no ack)."""
    host, rest = url.removeprefix("http://").split(":", 1)
    port, path = rest.split("/", 1)
    requests = []
    for n, text in events:
        signed = signed_event(event_callback(mention(text, channel=CHANNEL, ts=_ts(n)), f"EvBench{n:06d}"))
        requests.append({"body": signed.body.decode(), "headers": signed.headers})
    job = json.dumps({"host": host, "port": int(port), "path": "/" + path, "requests": requests})
    client = [sys.executable, __file__, "--client"]
    done = subprocess.run(client, input=job, capture_output=True, text=True, check=True, timeout=60)
    return list(json.loads(done.stdout))


def fire(host: str, port: int, path: str, requests: list[dict[str, Any]]) -> list[float | None]:
    """The client process: every request on its own connection, all opened at once from one thread
    (no client thread waits for another's turn), and the ms from each connect to its response's end."""
    raw = []
    for request in requests:
        body = str(request["body"]).encode()
        headers: dict[str, str] = request["headers"]
        lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}",
                 "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]  # fmt: skip
        raw.append(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    selector = selectors.DefaultSelector()
    started: list[float] = []
    received: list[bytearray] = [bytearray() for _ in raw]
    results: list[float | None] = [None] * len(raw)
    for i in range(len(raw)):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        started.append(time.perf_counter())
        sock.connect_ex((host, port))
        selector.register(sock, selectors.EVENT_WRITE, i)
    pending = len(raw)
    deadline = time.monotonic() + 30
    while pending and time.monotonic() < deadline:
        for key, mask in selector.select(timeout=1):
            sock, i = key.fileobj, key.data
            assert isinstance(sock, socket.socket)
            try:
                if mask & selectors.EVENT_WRITE:
                    sock.sendall(raw[i])
                    selector.modify(sock, selectors.EVENT_READ, i)
                    continue
                chunk = sock.recv(65536)
            except OSError:  # refused or reset: Slack would see no ack, and retry
                chunk = b""
                received[i].clear()
            if chunk:
                received[i] += chunk
                continue
            if received[i].startswith(b"HTTP/1.") and received[i][9:12] == b"200":
                results[i] = (time.perf_counter() - started[i]) * 1000
            selector.unregister(sock)
            sock.close()
            pending -= 1
    return results


def _replies(slack: FakeSlack, n: int) -> list[object]:
    return [m for m in slack.in_thread(CHANNEL, _ts(n)) if m.text not in WORKING.values()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)  # the sending process
    args = parser.parse_args()
    if args.client:
        job = json.load(sys.stdin)
        print(json.dumps(fire(job["host"], job["port"], job["path"], job["requests"])))
        return
    logging.basicConfig(level=logging.ERROR)  # the retried event's warnings are expected here
    figures = measure(args.events)
    print(f"ack_p50_ms={figures['ack_p50_ms']:.1f}")
    print(f"ack_p99_ms={figures['ack_p99_ms']:.1f}")
    print(f"ack_failures={figures['ack_failures']:.0f}")
    print(f"replies_for_3_deliveries={figures['replies_for_3_deliveries']:.0f}")


if __name__ == "__main__":
    main()
