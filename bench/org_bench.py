"""An organisation's Monday: 2,000 repositories' weekly cards within the hour, inside GitHub's and the
LLM's limits; prints one `name=value` line each.

    python bench/org_bench.py [--repos 2000] [--subscriptions 300] [--scale 6] [--workers 2]
                              [--llm-rpm 500] [--llm-latency 2] [--github-latency 0.05]

Time and rates are scaled down together (``scale``) so that the hour fits two cores: the LLM answers
after ``llm_latency / scale`` s and answers 429 past ``llm_rpm * scale`` requests a minute; GitHub's
12,500 points an hour (a GitHub App installation's) are refilled every ``3600 / scale`` s, each query
charged by GitHub's published formula, each request answered after ``github_latency`` s; the hour is
``3600 / scale`` s. prdigest's own ``[llm] requests_per_minute`` is 95% of the fake's rate.

The week: each repository has 0, 1 or 2 PRs merged Monday to Saturday (as likely), and one in seven has
one more merged on Sunday afternoon. ``subscriptions`` team subscriptions share the repositories: half in
Chinese, half in English, each repository in one team of each language (every PR is reported twice).

1. Sunday 02:00 (the clock frozen there): `prdigest prepare` syncs and analyses every subscribed
   repository, on a throwaway PostgreSQL (tests/pg_support.py).
2. The Sunday PRs are merged. Monday: every weekly delivery is due; ``workers`` `prdigest worker`
   processes post the cards to a Slack, the clock running until the last card.

  monday_wall_s                  seconds from starting the workers to the last card
  monday_within_hour             1 when that is within the scaled hour (goal 1)
  monday_llm_calls               requests the LLM got on Monday
  monday_llm_calls_bound         1.2 x the PRs merged since the prepare + the narratives (goal: >= calls)
  github_points_monday           GitHub points spent on Monday (budget: 12,500 an hour)
  rate_limited_fallbacks         PRs left to the rules by a 429 or no turn under the rate limit (goal 0)
  analyses_per_pr_two_languages  LLM analyses per PR, both languages reported (goal 1.0)
  and prepare_wall_s, prepare_llm_calls, github_points_prepare, llm_429_answers, cards, missing_cards,
  prs_week, prs_since_prepare, workers_cpu_s.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.github_api import FakeGitHub, FakeRepo  # noqa: E402
from fakes.openai_api import FakeOpenAI, Request, prdigest_answers  # noqa: E402
from fakes.slack_api import FakeSlack  # noqa: E402
from pg_support import start_cluster, stop_cluster  # noqa: E402
from serve_support import github_env, llm_env, slack_env, write_config  # noqa: E402
from workers_bench import OWNERS, create_database, kill_all, query, weekly_cards  # noqa: E402

from prdigest.clock import utc_now  # noqa: E402
from prdigest.periods import last_complete_week  # noqa: E402
from prdigest.subscription import WEEKDAYS  # noqa: E402

TZ = "Asia/Shanghai"
BUDGET = 12_500  # GitHub points an hour of an App installation


def is_analysis(request: Request) -> bool:
    return "<untrusted_pr_data>" in request.user


def is_narrative(request: Request) -> bool:
    return "<untrusted_week_data>" in request.user


def teams(repos: list[str], subscriptions: int) -> list[tuple[str, list[str]]]:
    """Half the subscriptions in each language; each repository in one team of each."""
    half = max(subscriptions // 2, 1)
    shuffled = random.Random(7).sample(repos, len(repos))
    zh = [("zh", repos[i::half]) for i in range(half)]
    en = [("en", shuffled[i::half]) for i in range(subscriptions - half)]
    return [(lang, group) for lang, group in zh + en if group]


def github_of(
    repos: list[str], week_start: datetime, latency: float, scale: float
) -> tuple[FakeGitHub, int, dict]:
    """The fake GitHub with each repository's PRs of Monday to Saturday; the count, and the Sunday PRs to
    merge after the prepare (repository -> merge time)."""
    fake = FakeGitHub(latency=latency, limit=BUDGET, window=round(3600 / scale))
    saturday_end = week_start + timedelta(days=6)
    count = 0
    sunday: dict[str, datetime] = {}
    for i, name in enumerate(repos):
        rng = random.Random(i)
        prs = rng.randint(0, 2)
        fake.add_repo(FakeRepo(name)).generate(prs, week_start, saturday_end, seed=i + 1, closed_every=0)
        count += prs
        if rng.random() < 1 / 7:
            sunday[name] = saturday_end + timedelta(hours=14 + rng.random() * 6)
    return fake, count, sunday


def points_spent(github: FakeGitHub) -> int:
    return int(sum(github.points_spent.values()))


def run_cli(args: list[str], env: dict[str, str], log: Path) -> None:
    with log.open("wb") as out:
        done = subprocess.run([sys.executable, "-m", "prdigest.cli", *args], env=env, stdout=out, stderr=out)
    if done.returncode != 0:
        raise SystemExit(f"prdigest {' '.join(args)} failed; see {log}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=2000)
    parser.add_argument("--subscriptions", type=int, default=300)
    parser.add_argument("--scale", type=float, default=6, help="time compression: the hour is 3600/scale s")
    parser.add_argument("--workers", type=int, default=2, help="`prdigest worker` processes")
    parser.add_argument("--workers-concurrency", type=int, default=24, help="[workers] concurrency")
    parser.add_argument("--llm-rpm", type=int, default=500, help="the LLM's requests a minute, unscaled")
    parser.add_argument("--llm-latency", type=float, default=2.0, help="seconds per LLM answer, unscaled")
    parser.add_argument("--llm-concurrency", type=int, default=8, help="[llm] concurrency")
    parser.add_argument("--github-latency", type=float, default=0.05, help="seconds per GitHub request")
    parser.add_argument("--keep-logs", action="store_true", help="keep the logs (path on stderr)")
    opts = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    hour = 3600 / opts.scale
    rate = round(opts.llm_rpm * opts.scale)
    fire = (utc_now() - timedelta(minutes=2)).astimezone(ZoneInfo(TZ)).replace(second=0, microsecond=0)
    week = last_complete_week(fire, TZ)
    names = [f"org{i % OWNERS}/svc{i:05d}" for i in range(opts.repos)]
    groups = teams(names, opts.subscriptions)
    tmp = Path(tempfile.mkdtemp(prefix="prdigest-org-bench-"))
    cluster = start_cluster()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        url = create_database(cluster.url, f"bench_org_{os.getpid()}")

        def configured(fire: datetime) -> Path:
            """The settings, every weekly delivery due at ``fire``."""
            subs = [
                {"platform": "slack", "chat_id": f"C{i:04d}", "repos": group, "tz": TZ, "lang": lang,
                 "day": WEEKDAYS[fire.weekday()], "time": fire.strftime("%H:%M")}
                for i, (lang, group) in enumerate(groups)
            ]  # fmt: skip
            return write_config(
                tmp / "prdigest.toml",
                subs,
                storage={"url": url},
                report={"language": "zh"},
                workers={"concurrency": opts.workers_concurrency, "tick_seconds": 5},
                # A little under the server's rate: a turn late by a scheduling hiccup is no 429.
                llm={"concurrency": opts.llm_concurrency, "requests_per_minute": int(rate * 0.95)},
                schedule={"deadline_minutes": max(1, round(60 / opts.scale))},
            )

        config = configured(fire)
        github, prs_week, sunday = github_of(names, week.start, opts.github_latency, opts.scale)
        llm = FakeOpenAI(
            responder=prdigest_answers, latency=opts.llm_latency / opts.scale, rate_per_minute=rate
        )
        slack = FakeSlack()
        with github, llm, slack:
            inherited = ("PRDIGEST_", "PG", "GITHUB_", "OPENAI_")
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith(inherited)},
                **github_env(github), **slack_env(slack, "http"), **llm_env(llm),
                "PRDIGEST_CONFIG": str(config),
            }  # fmt: skip
            # 1. Sunday 02:00: the prepare.
            sunday_2am = datetime.combine(week.until, datetime.min.time(), ZoneInfo(TZ)) + timedelta(hours=2)
            began = time.monotonic()
            run_cli(["prepare"], {**env, "PRDIGEST_NOW": sunday_2am.isoformat()}, tmp / "prepare.log")
            prepare_s = time.monotonic() - began
            prepare_calls = len(llm.requests)
            prepare_points = points_spent(github)
            print(f"# prepared in {prepare_s:.0f} s; {prepare_calls} LLM calls", file=sys.stderr)
            # 2. The Sunday PRs, then Monday: every delivery due two minutes before the workers start.
            due = (utc_now() - timedelta(minutes=2)).astimezone(ZoneInfo(TZ)).replace(second=0, microsecond=0)
            if last_complete_week(due, TZ) != week:
                raise SystemExit("the prepare ran past the end of a local day: run the bench again")
            configured(due)
            for i, (name, merged) in enumerate(sunday.items()):
                github.repos[name].generate(
                    1, merged, merged + timedelta(minutes=1), seed=10_000 + i, closed_every=0
                )
            before_ops = Counter(github.operations)
            before_rest = Counter(k.rsplit("/", 1)[0] for k in github.counts)
            cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            for n in range(opts.workers):
                log = (tmp / f"worker-{n}.log").open("wb")
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "prdigest.cli", "worker"], stdin=subprocess.DEVNULL, stdout=log,
                    stderr=log, env=env, start_new_session=True,
                ))  # fmt: skip
                log.close()
            last_card = None
            while time.monotonic() - started < 3 * hour:
                if len({key for _, key in weekly_cards(slack)}) >= len(groups):
                    last_card = time.monotonic()
                    break
                if any(p.poll() is not None for p in procs):
                    raise SystemExit(f"a worker exited; see {tmp}")
                time.sleep(0.2)
            monday_s = (last_card or time.monotonic()) - started
            kill_all(procs)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            monday = llm.requests[prepare_calls:]
            cards = weekly_cards(slack)
            monday_points = points_spent(github) - prepare_points
            answers_429 = llm.rate_limited
            rest = Counter(k.rsplit("/", 1)[0] for k in github.counts) - before_rest
            queries = dict(Counter(github.operations) - before_ops)
            print(f"# Monday's GitHub queries: {queries}", file=sys.stderr)
            print(f"# Monday's GitHub requests: {dict(rest.most_common(8))}", file=sys.stderr)
        # A PR refused a turn under prdigest's own rate limit falls back too (a log line, no request).
        refused = sum(
            1
            for n in range(opts.workers)
            for line in (tmp / f"worker-{n}.log").read_text(errors="replace").splitlines()
            if "under the [llm] rate limit" in line
            and "#" in line.split("prdigest.llm: ", 1)[-1].split(":")[0]
        )
        fallbacks = query(
            url,
            "select count(distinct subject) from llm_calls c where purpose = 'analyse_pr' and outcome = "
            "'rate_limited' and not exists (select 1 from llm_calls d where d.subject = c.subject and "
            "d.purpose = 'analyse_pr' and d.outcome = 'ok')",
        )
        analysed = query(
            url,
            "select count(*), count(distinct subject) from llm_calls "
            "where purpose = 'analyse_pr' and outcome = 'ok'",
        )
        twice = query(
            url,
            "select subject, count(*) from llm_calls where purpose = 'analyse_pr' and outcome = 'ok' "
            "group by subject having count(*) > 1 order by subject",
        )
        if twice:
            print(f"# PRs analysed more than once: {twice[:20]}", file=sys.stderr)
    finally:
        kill_all(procs)
        stop_cluster(cluster)
        if opts.keep_logs:
            print(f"# logs in {tmp}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    narratives = sum(map(is_narrative, monday))
    calls, subjects = analysed[0] if analysed else (0, 0)
    print(f"monday_wall_s={monday_s:.1f}")
    print(f"monday_within_hour={int(last_card is not None and monday_s <= hour)}")
    print(f"monday_llm_calls={len(monday)}")
    print(f"monday_llm_calls_bound={1.2 * len(sunday) + narratives:.0f}")
    print(f"github_points_monday={monday_points}")
    print(f"rate_limited_fallbacks={(fallbacks[0][0] if fallbacks else 0) + refused}")
    print(f"analyses_per_pr_two_languages={calls / subjects if subjects else 0:.2f}")
    print(f"scaled_hour_s={hour:.0f}")
    print(f"prepare_wall_s={prepare_s:.1f}")
    print(f"prepare_llm_calls={prepare_calls}")
    print(f"github_points_prepare={prepare_points}")
    print(f"monday_llm_analyses={sum(map(is_analysis, monday))}")
    print(f"monday_llm_narratives={narratives}")
    print(f"llm_429_answers={answers_429}")
    print(f"cards={len(cards)}")
    print(f"missing_cards={len(groups) - len({key for _, key in cards})}")
    print(f"prs_week={prs_week + len(sunday)}")
    print(f"prs_since_prepare={len(sunday)}")
    workers_cpu = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    print(f"workers_cpu_s={workers_cpu:.1f}")


if __name__ == "__main__":
    main()
