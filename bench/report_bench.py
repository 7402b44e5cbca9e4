"""Report benchmark: prints one `name=value` line per figure.

    python bench/report_bench.py [--shared ../shared] [--runs 3]

Figures (goals in parentheses):
  startup_s      wall time of `prdigest --version` (median of runs)
  report_s_93    `prdigest report --format json` on the replayed miles week, minus startup_s (< 1)
  report_s_2000  the same on a generated 2,000-PR week, minus startup_s (< 10)
  peak_mb_93, peak_mb_2000   peak resident memory of that command and its git children (2000: < 300)
  report_s_miles_all   the same over the whole real history of the miles bundle (real diffs, where the
                       risk rules fire), minus startup_s

Each report run starts from an empty database, so it includes reading the clone,
filling the cache and computing the report. The 2,000-PR week is the miles week's
commits repeated with new PR numbers and times spread over the same seven days.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
DATA = "data/radixark__miles__2026-08-10.json"
WEEK = ("2026-08-10", "2026-08-16")
BUNDLE = "data/radixark__miles.bundle"
HISTORY = ("2025-01-01", "2026-12-31")  # the bundle's whole history


def prdigest() -> list[str]:
    return [sys.executable, "-m", "prdigest.cli"]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS in MB of one command (its waited-for children included)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return elapsed, usage.ru_maxrss / 1024


def replay(shared: Path, data: Path, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        [sys.executable, str(shared / "tools" / "replay_history.py"), str(data), str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env,
    )


def scaled_week(source: Path, target: Path, count: int) -> None:
    """The miles week's commits repeated to `count`, renumbered, spread over the same days."""
    commits = json.loads(source.read_text())
    rng = random.Random(7)
    start = datetime(2026, 8, 10, 0, 30, tzinfo=ZoneInfo("Asia/Shanghai"))
    span = timedelta(days=7) - timedelta(hours=1)
    out = []
    for i in range(count):
        c = dict(commits[i % len(commits)])
        c["pr_number"] = 10_000 + i
        c["sha"] = f"{i:040x}"
        c["committed_at"] = (start + span * (i / count) + timedelta(seconds=rng.randint(0, 60))).isoformat()
        out.append(c)
    target.write_text(json.dumps(out))


def report_figures(
    repo: Path, runs: int, startup: float, tmp: Path, env: dict[str, str], window: tuple[str, str] = WEEK
) -> tuple[float, float]:
    times, peaks = [], []
    for k in range(runs):
        db = tmp / f"bench-{repo.name}-{k}.db"
        cmd = [
            *prdigest(),
            "report",
            "--git",
            str(repo),
            "--since",
            window[0],
            "--until",
            window[1],
            "--tz",
            "Asia/Shanghai",
            "--format",
            "json",
            "--db",
            str(db),
        ]
        elapsed, peak = timed(cmd, env)
        times.append(elapsed)
        peaks.append(peak)
    return max(statistics.median(times) - startup, 0.0), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size", type=int, default=2000)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "GITHUB_", "OPENAI_"))}
    with tempfile.TemporaryDirectory(prefix="prdigest-bench-") as name:
        tmp = Path(name)
        startup = statistics.median(
            timed([*prdigest(), "--version"], env)[0] for _ in range(max(args.runs, 5))
        )
        print(f"startup_s={startup:.3f}", flush=True)

        miles = tmp / "miles"
        replay(args.shared, args.shared / DATA, miles)
        seconds, peak = report_figures(miles, args.runs, startup, tmp, env)
        print(f"report_s_93={seconds:.3f}", flush=True)
        print(f"peak_mb_93={peak:.1f}", flush=True)

        data = tmp / "scaled.json"
        scaled_week(args.shared / DATA, data, args.size)
        big = tmp / "big"
        replay(args.shared, data, big)
        seconds, peak = report_figures(big, args.runs, startup, tmp, env)
        print(f"report_s_{args.size}={seconds:.3f}", flush=True)
        print(f"peak_mb_{args.size}={peak:.1f}", flush=True)

        bundle = args.shared / BUNDLE
        if bundle.exists():
            whole = tmp / "miles-all"
            subprocess.run(["git", "clone", "-q", str(bundle), str(whole)], check=True, env=env)
            seconds, _ = report_figures(whole, args.runs, startup, tmp, env, window=HISTORY)
            print(f"report_s_miles_all={seconds:.3f}", flush=True)


if __name__ == "__main__":
    main()
