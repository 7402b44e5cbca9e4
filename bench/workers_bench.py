"""`prdigest worker` scaling: 1 worker, then 3, on the same due week; prints one `name=value` line each.

    python bench/workers_bench.py [--subscriptions 300] [--repos 2000] [--workers-concurrency 24]
                                  [--llm-latency 2] [--github-latency 0.05] [--llm-rate-per-minute N]

Starts a throwaway PostgreSQL (as the tests do: `tests/pg_support.py`). Each run gets a new database and
new fakes: a GitHub of ``repos`` repositories with 0, 1 or 2 PRs merged in the reported week each (as
likely: a third of them are quiet, and a quiet repository's part of a digest asks the LLM nothing), each
request answered after ``github_latency`` s; an OpenAI-compatible LLM answering after ``llm_latency`` s,
and 429 (with Retry-After) past ``llm_rate_per_minute`` requests a minute (by default twice what 3
workers can send: each delivery asks the LLM ``[llm] concurrency`` requests at a time, 2 on a server on
this machine); a Slack. ``subscriptions`` team subscriptions (Slack, one channel each) share the
repositories between them, each repository in one, and their weekly time passed two minutes ago: every
delivery is due when the workers start. The run's workers (``python -m prdigest.cli worker``, the same
``[workers] concurrency`` each) are started, and the clock runs until the last weekly card is in Slack.

  fire_to_last_card_s_<1|3>  seconds from starting the workers (every delivery already due) to the last card
  ratio_3_over_1             the second over the first (goal: at most 0.45)
  duplicate_cards            weekly cards beyond one per delivery key, over both runs (goal 0)
  missing_cards              delivery keys without a card at the end, over both runs (goal 0)
  llm_429_fallbacks          PR analyses that fell back to the rules on a 429 (llm_calls rows of purpose
                             analyse_pr, outcome rate_limited), over both runs (goal 0)
  and per run (suffix _1, _3): cards, llm_calls (rows in the store), llm_429_answers (the fake's),
  llm_peak_in_flight, github_requests, workers_cpu_s (the workers' user+system CPU), fakes_cpu_s (this
  process's: the three fake servers), pg_cpu_s is not counted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.github_api import FakeGitHub, FakeRepo  # noqa: E402
from fakes.openai_api import FakeOpenAI, prdigest_answers  # noqa: E402
from fakes.slack_api import FakeSlack  # noqa: E402
from pg_support import start_cluster, stop_cluster  # noqa: E402
from serve_support import github_env, llm_env, slack_env, write_config  # noqa: E402

from prdigest.bot.slack.adapter import REPORT_EVENT  # noqa: E402
from prdigest.clock import utc_now  # noqa: E402
from prdigest.periods import last_complete_week  # noqa: E402
from prdigest.subscription import WEEKDAYS  # noqa: E402

TZ = "Asia/Shanghai"
OWNERS = 20  # the repositories' organizations


@dataclass
class Run:
    seconds: float
    cards: int
    duplicates: int
    missing: int
    fallbacks_429: int
    figures: dict[str, float]


def create_database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"'.encode())
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        if not conn.execute("select to_regclass('deliveries')").fetchone()[0]:  # type: ignore[index]
            return []  # no worker has set the database up yet
        return conn.execute(sql.encode()).fetchall()


def teams(subscriptions: int, repos: int) -> list[list[str]]:
    """The repositories, split into ``subscriptions`` teams of (nearly) equal size, each repository in one."""
    names = [f"org{i % OWNERS}/svc{i:05d}" for i in range(repos)]
    return [names[i::subscriptions] for i in range(subscriptions)]


def github_of(repos: list[str], fire: datetime, latency: float) -> FakeGitHub:
    # GitHub's budget of 5,000 points an hour would run out here (2,000 repositories take some 13,000
    # requests): the bench measures the workers, not that limit.
    fake = FakeGitHub(latency=latency, limit=10_000_000)
    window = last_complete_week(fire, TZ)
    for i, name in enumerate(repos):
        prs = random.Random(i).randint(0, 2)
        fake.add_repo(FakeRepo(name)).generate(prs, window.start, window.end, seed=i + 1)
    return fake


def weekly_cards(slack: FakeSlack) -> list[tuple[str, str]]:
    """(channel, delivery key) of every weekly card in Slack."""
    with slack._lock:  # the fake's own lock: its handler threads append meanwhile
        messages = list(slack.messages)
    return [
        (m.channel, ((m.metadata or {}).get("event_payload") or {}).get("key", ""))
        for m in messages
        if m.thread_ts is None and (m.metadata or {}).get("event_type") == REPORT_EVENT
    ]


def kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def one_run(opts: argparse.Namespace, admin_url: str, workers: int, tmp: Path) -> Run:
    fire = (utc_now() - timedelta(minutes=2)).astimezone(ZoneInfo(TZ)).replace(second=0, microsecond=0)
    groups = teams(opts.subscriptions, opts.repos)
    url = create_database(admin_url, f"bench_workers_{workers}_{os.getpid()}")
    llm_need = 3 * opts.workers_concurrency * opts.llm_concurrency * 60 / max(opts.llm_latency, 0.1)
    rate = opts.llm_rate_per_minute or round(2 * llm_need)
    logs = tmp / f"run-{workers}"
    logs.mkdir()
    config = write_config(
        logs / "prdigest.toml",
        [
            {
                "platform": "slack",
                "chat_id": f"C{i:04d}",
                "repos": group,
                "tz": TZ,
                "day": WEEKDAYS[fire.weekday()],
                "time": fire.strftime("%H:%M"),
                "lang": "en",
            }
            for i, group in enumerate(groups)
        ],
        storage={"url": url},
        workers={"concurrency": opts.workers_concurrency, "tick_seconds": opts.tick_seconds},
        llm={"concurrency": opts.llm_concurrency},
    )
    github = github_of([r for g in groups for r in g], fire, opts.github_latency)
    llm = FakeOpenAI(responder=prdigest_answers, latency=opts.llm_latency, rate_per_minute=rate)
    slack = FakeSlack()
    procs: list[subprocess.Popen[bytes]] = []
    with github, llm, slack:
        inherited = ("PRDIGEST_", "PG", "GITHUB_", "OPENAI_")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(inherited)},
            **github_env(github), **slack_env(slack, "http"), **llm_env(llm), "PRDIGEST_CONFIG": str(config),
        }  # fmt: skip
        cpu_children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_self = time.process_time()
        try:
            started = time.monotonic()
            for n in range(workers):
                log = (logs / f"worker-{n}.log").open("wb")
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "prdigest.cli", "worker"],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                        env=env,
                        start_new_session=True,
                    )
                )
                log.close()
            last_card = None
            deadline = started + opts.timeout
            while time.monotonic() < deadline:
                now = time.monotonic()
                keys = {key for _, key in weekly_cards(slack)}
                if last_card is None and len(keys) >= opts.subscriptions:
                    last_card = now
                    print(f"# {workers} worker(s): last card at {now - started:.1f} s", file=sys.stderr)
                if last_card is not None:
                    rows = query(url, "select status from deliveries")
                    if len(rows) >= opts.subscriptions and all(s == "posted" for (s,) in rows):
                        break
                if any(p.poll() is not None for p in procs):
                    raise SystemExit(f"a worker exited; see {logs}")
                time.sleep(0.1)
            else:
                statuses = dict(query(url, "select status, count(*) from deliveries group by 1"))
                print(
                    f"# {workers} worker(s): timed out after {opts.timeout:.0f} s; {statuses}",
                    file=sys.stderr,
                )
            took = (last_card or time.monotonic()) - started
            time.sleep(1)  # a card posted twice after the rows say posted would show here
        finally:
            kill_all(procs)
        fakes_cpu = time.process_time() - cpu_self
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        workers_cpu = (after.ru_utime - cpu_children.ru_utime) + (after.ru_stime - cpu_children.ru_stime)
        cards = weekly_cards(slack)
        github_requests = github.requests
    by_key: dict[str, int] = {}
    for _, key in cards:
        by_key[key] = by_key.get(key, 0) + 1
    expected = {str(k) for (k,) in query(url, "select key from deliveries")}
    channels = {channel for channel, _ in cards}
    missing = max(opts.subscriptions - len(channels), len(expected - set(by_key)))
    outcomes = dict(query(url, "select purpose || ':' || outcome, count(*) from llm_calls group by 1"))
    fallbacks = int(outcomes.get("analyse_pr:rate_limited", 0))
    figures = {
        "cards": len(cards),
        "llm_calls": sum(int(v) for v in outcomes.values()),
        "llm_429_answers": llm.rate_limited,
        "llm_429_narratives": int(outcomes.get("narrate:rate_limited", 0)),
        "llm_rate_per_minute": rate,
        "llm_peak_in_flight": llm.most_in_flight,
        "github_requests": github_requests,
        "workers_cpu_s": round(workers_cpu, 1),
        "fakes_cpu_s": round(fakes_cpu, 1),
    }
    print(f"# {workers} worker(s): llm_calls by outcome {outcomes}; logs in {logs}", file=sys.stderr)
    return Run(took, len(cards), sum(n - 1 for n in by_key.values()), missing, fallbacks, figures)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subscriptions", type=int, default=300)
    parser.add_argument("--repos", type=int, default=2000)
    parser.add_argument("--workers-concurrency", type=int, default=24, help="[workers] concurrency")
    parser.add_argument("--llm-latency", type=float, default=2.0, help="seconds per LLM answer")
    parser.add_argument("--llm-concurrency", type=int, default=2, help="[llm] concurrency (a local default)")
    parser.add_argument("--llm-rate-per-minute", type=int, default=0, help="0: twice what 3 workers need")
    parser.add_argument("--github-latency", type=float, default=0.05, help="seconds per GitHub request")
    parser.add_argument("--tick-seconds", type=int, default=10, help="[workers] tick_seconds")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a run may take")
    parser.add_argument("--keep-logs", action="store_true", help="keep the workers' logs (path on stderr)")
    opts = parser.parse_args()
    if opts.repos < opts.subscriptions:
        parser.error("give at least one repository per subscription")

    # SIGTERM as Ctrl-C: the workers are killed and the cluster stopped on the way out.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    began = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="prdigest-workers-bench-"))
    runs: dict[int, Run] = {}
    cluster = start_cluster()
    try:
        for workers in (1, 3):
            runs[workers] = one_run(opts, cluster.url, workers, tmp)
    finally:
        stop_cluster(cluster)
        if not opts.keep_logs:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    one, three = runs[1], runs[3]
    print(f"fire_to_last_card_s_1={one.seconds:.1f}")
    print(f"fire_to_last_card_s_3={three.seconds:.1f}")
    print(f"ratio_3_over_1={three.seconds / one.seconds:.2f}")
    print(f"duplicate_cards={one.duplicates + three.duplicates}")
    print(f"missing_cards={one.missing + three.missing}")
    print(f"llm_429_fallbacks={one.fallbacks_429 + three.fallbacks_429}")
    for workers, run in runs.items():
        for name, value in run.figures.items():
            print(f"{name}_{workers}={value}")
    print(f"bench_wall_s={time.monotonic() - began:.0f}")


if __name__ == "__main__":
    main()
