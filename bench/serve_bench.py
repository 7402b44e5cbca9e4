"""`prdigest serve` and the weekly delivery against local fakes (GitHub, Lark, Slack on 127.0.0.1).
Prints `name=value` lines.

    python bench/serve_bench.py

- `serve_start_s`: from launching `prdigest serve` (Lark on its long connection, Slack in Socket Mode)
  to a 200 on /healthz; `serve_start_cpu_s` the CPU time the process spent to get there (the machine
  may be shared: wall time is noisy, CPU time less so).
- `serve_rss_mb`: the idle serve process's resident memory (VmRSS), both adapters connected.
- `lark_import_s`, `lark_import_cpu_s`, `lark_import_mb`: `import prdigest.bot.lark.adapter` in a fresh
  interpreter (wall, CPU, VmRSS growth; the median of 3); `lark_modules` the lark_oapi modules it
  loads. `lark_sdk_import_*`: the same for the SDK part alone (lark_sdk, the dispatcher, the ws client).
- `delivery_s_40`: `prdigest deliver` of one Slack subscription, rules engine, a 40-PR week: sync
  from the fake GitHub, report, post; wall time of the whole command.
- `posts_after_5_concurrent_fires`: five `prdigest deliver` processes started at once for the same
  subscription and week (five replicas firing together); weekly reports in the channel (goal: 1).
  `concurrent_fire_outcomes` says what each process printed (posted, busy, already) or `error`
  (exit status other than 0, or 75 for busy), `concurrent_fire_errors` the last line of each error.
- `oversize_rss_growth_mb`: `prdigest serve` with Slack and Lark in HTTP mode; an unsigned 150 MB
  POST to each endpoint (/slack/events, /lark/events, /healthz, a report page), streamed; growth of
  the serve process's VmRSS (goal <= 20). `oversize_statuses` what each got (413; `closed` if the
  server closed before answering). `oversize_log_line_max`: the longest line serve wrote to its log
  during those POSTs (goal <= 2048).
- `idle_conn_threads_400`: threads of that serve process 10 s after 400 connections were opened and
  left idle (goal <= 20); `idle_conn_threads_before` the count before them;
  `healthz_s_while_400_idle` how long a GET /healthz took while they were held (`timeout` past 20 s).
  `python bench/serve_bench.py --limits` prints these figures alone.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fakes and the serve helpers

from fakes.github_api import FakeGitHub  # noqa: E402
from fakes.lark_api import FakeLark  # noqa: E402
from fakes.slack_api import FakeSlack  # noqa: E402
from serve_support import (  # noqa: E402
    add_week,
    github_env,
    lark_env,
    serving,
    slack_env,
    slack_weekly,
    wait_until,
    write_config,
)

from prdigest.bot.service import sync_config_subscriptions  # noqa: E402
from prdigest.cli.ops import EX_TEMPFAIL  # noqa: E402
from prdigest.config import load_settings  # noqa: E402
from prdigest.periods import last_complete_week  # noqa: E402
from prdigest.storage import Store  # noqa: E402

REPO = "acme/rocket"
TZ = "Asia/Shanghai"
CHANNEL = "C0BENCH"
PRS = 40
FIRES = 5
_SCRUB = ("PRDIGEST_", "GITHUB_", "OPENAI_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def settled_rss_mb(pid: int, timeout: float = 10) -> float:
    """VmRSS once it stops moving (two reads half a second apart within 1 MB), at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last = rss_mb(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss_mb(pid)
        if abs(now - last) < 1:
            return now
        last = now
    return last


def cpu_s(pid: int) -> float:
    """User + system CPU time of a live process (/proc/<pid>/stat, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


IMPORT_PROBE = """
import json, sys, time
from pathlib import Path
def rss():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024
rss0, wall0, cpu0 = rss(), time.perf_counter(), time.process_time()
exec(sys.argv[1])
print(json.dumps({"s": time.perf_counter() - wall0, "cpu_s": time.process_time() - cpu0, "mb": rss() - rss0,
                  "modules": sum(m.startswith("lark_oapi") for m in sys.modules)}))
"""
IMPORTS = {
    "lark_import": "import prdigest.bot.lark.adapter",
    "lark_sdk_import": "from prdigest.bot.lark.dispatch import EventDispatcher\n"
    "from prdigest.bot.lark.sdk import ws_client_module\nws_client_module(EventDispatcher)",
}


def measure_imports(runs: int = 3) -> dict[str, object]:
    figures: dict[str, object] = {}
    for name, code in IMPORTS.items():
        samples = []
        for _ in range(runs):
            proc = subprocess.run(
                [sys.executable, "-c", IMPORT_PROBE, code],
                capture_output=True, text=True, timeout=120, check=True, cwd=ROOT,
            )  # fmt: skip
            samples.append(json.loads(proc.stdout.splitlines()[-1]))
        for key in ("s", "cpu_s", "mb"):
            figures[f"{name}_{key}"] = round(statistics.median(sample[key] for sample in samples), 2)
        if name == "lark_import":
            figures["lark_modules"] = samples[-1]["modules"]
    return figures


def deliver(config: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "prdigest.cli", "deliver", "--subscription", "1", "--config", str(config)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def measure_serve(tmp: Path, env: dict[str, str], lark: FakeLark, slack: FakeSlack) -> dict[str, object]:
    config = write_config(tmp / "serve.toml", web={"host": "127.0.0.1", "port": 0})
    command = [sys.executable, "-m", "prdigest.cli", "serve", "--config", str(config)]
    started = time.perf_counter()
    with serving(command, {**env, "PRDIGEST_DB": str(tmp / "serve.db")}, tmp / "serve.log") as served:
        wait_until(lambda: served.get("/healthz")[0] == 200, 30, "/healthz")
        start_s = time.perf_counter() - started
        start_cpu_s = cpu_s(served.proc.pid)
        lark.ws.wait_connected()
        slack.wait_connected(timeout=30)
        rss = settled_rss_mb(served.proc.pid)
        served.terminate(timeout=30)
    return {
        "serve_start_s": round(start_s, 2),
        "serve_start_cpu_s": round(start_cpu_s, 2),
        "serve_rss_mb": round(rss, 1),
    }


OVERSIZE_MB = 150
OVERSIZE_PATHS = ("/slack/events", "/lark/events", "/healthz", "/reports/abc")
IDLE_CONNS = 400


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def oversize_post(address: str, path: str) -> str:
    """An unsigned POST announcing 150 MB, sent 1 MB at a time from a generator; the answer's status."""
    host, port = address.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    chunk = b"x" * (1 << 20)
    try:
        conn.putrequest("POST", path)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(OVERSIZE_MB << 20))
        conn.endheaders()
        try:
            for _ in range(OVERSIZE_MB):
                conn.send(chunk)
        except OSError:  # the server answered and closed: the rest is never read
            pass
        try:
            return str(conn.getresponse().status)
        except (OSError, http.client.HTTPException):
            return "closed"
    finally:
        conn.close()


def measure_limits(tmp: Path, env: dict[str, str], lark: FakeLark, slack: FakeSlack) -> dict[str, object]:
    config = write_config(tmp / "limits.toml", web={"host": "127.0.0.1", "port": 0})
    command = [sys.executable, "-m", "prdigest.cli", "serve", "--config", str(config)]
    env = {**env, **lark_env(lark, "http"), **slack_env(slack, "http"), "PRDIGEST_DB": str(tmp / "limits.db")}
    log = tmp / "limits.log"
    with serving(command, env, log) as served:
        wait_until(lambda: served.get("/healthz")[0] == 200, 30, "/healthz")
        pid = served.proc.pid
        rss_before = settled_rss_mb(pid)
        logged = log.stat().st_size
        statuses = [oversize_post(served.address, path) for path in OVERSIZE_PATHS]
        rss_after = settled_rss_mb(pid)
        with log.open("rb") as file:
            file.seek(logged)
            lines = file.read().splitlines()
        threads_before = threads(pid)
        host, port = served.address.removeprefix("http://").rsplit(":", 1)
        idle = []
        for _ in range(IDLE_CONNS):
            with contextlib.suppress(OSError):  # a full backlog refuses it: that holds nothing
                idle.append(socket.create_connection((host, int(port)), timeout=5))
        asked = time.perf_counter()
        try:
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"{served.address}/healthz", timeout=20
            ) as answer:
                answer.read()
            healthz = f"{time.perf_counter() - asked:.2f}"
        except OSError:
            healthz = "timeout"
        time.sleep(max(0.0, 10 - (time.perf_counter() - asked)))
        threads_idle = threads(pid)
        for sock in idle:
            sock.close()
        served.terminate(timeout=30)
    return {
        "oversize_rss_growth_mb": round(max(0.0, rss_after - rss_before), 1),
        "oversize_statuses": ",".join(statuses),
        "oversize_log_line_max": max((len(line) for line in lines), default=0),
        "idle_conn_threads_before": threads_before,
        "idle_conn_threads_400": threads_idle,
        "healthz_s_while_400_idle": healthz,
    }


def subscribed(tmp: Path, name: str, env: dict[str, str]) -> Path:
    """A config with one Slack subscription, and its database with the subscription saved (id 1)."""
    config = write_config(
        tmp / f"{name}.toml",
        [{"platform": "slack", "chat_id": CHANNEL, "repo": REPO, "tz": TZ, "lang": "en"}],
    )
    store = Store(env["PRDIGEST_DB"])
    sync_config_subscriptions(load_settings(config, env=env), store)
    store.close()
    return config


def measure_delivery(tmp: Path, env: dict[str, str], slack: FakeSlack) -> dict[str, object]:
    env = {**env, "PRDIGEST_DB": str(tmp / "deliver.db")}
    config = subscribed(tmp, "deliver", env)
    started = time.perf_counter()
    status, out, err = finish(deliver(config, env))
    elapsed = time.perf_counter() - started
    if status != 0 or ": posted" not in out:
        raise RuntimeError(f"prdigest deliver failed ({status}): {err[-2000:]}")
    return {"delivery_s_40": round(elapsed, 2), "delivery_posts": len(slack_weekly(slack, CHANNEL))}


def measure_concurrent_fires(tmp: Path, env: dict[str, str], slack: FakeSlack) -> dict[str, object]:
    env = {**env, "PRDIGEST_DB": str(tmp / "fires.db")}
    config = subscribed(tmp, "fires", env)
    before = len(slack_weekly(slack, CHANNEL))
    procs = [deliver(config, env) for _ in range(FIRES)]
    results = [finish(proc) for proc in procs]
    outcomes: Counter[str] = Counter()
    errors = []
    for status, out, err in results:
        if status in (0, EX_TEMPFAIL):  # a process that found the week taken says so, and exits 75
            outcomes[out.strip().split(": ")[-1].split(" ")[0]] += 1
        else:
            outcomes["error"] += 1
            errors.append((err.strip().splitlines() or ["?"])[-1])
    return {
        "posts_after_5_concurrent_fires": len(slack_weekly(slack, CHANNEL)) - before,
        "concurrent_fire_outcomes": ",".join(f"{k}:{v}" for k, v in sorted(outcomes.items())),
        "concurrent_fire_errors": " | ".join(sorted(set(errors))) or "none",
    }


def main() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="prdigest-serve-bench-") as name,
        FakeGitHub() as github,
        FakeLark() as lark,
        FakeSlack() as slack,
    ):
        tmp = Path(name)
        add_week(github, REPO, last_complete_week(datetime.now(UTC), TZ), PRS)
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_SCRUB)}
        env.update(
            HOME=str(tmp), NO_PROXY="127.0.0.1,localhost", COLUMNS="200",
            **github_env(github), **lark_env(lark, "ws"), **slack_env(slack, "socket"),
        )  # fmt: skip
        only_limits = sys.argv[1:] == ["--limits"]  # the figures of bounded requests alone
        figures = (
            measure_limits(tmp, env, lark, slack)
            if only_limits
            else {
                **measure_serve(tmp, env, lark, slack),
                **measure_limits(tmp, env, lark, slack),
                **measure_imports(),
                **measure_delivery(tmp, env, slack),
                **measure_concurrent_fires(tmp, env, slack),
            }
        )
    for key, value in figures.items():
        print(f"{key}={value}")


if __name__ == "__main__":
    main()
