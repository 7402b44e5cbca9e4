"""Report benchmark: prints one `name=value` line per figure.

    python bench/report_bench.py [--shared ../shared] [--runs 3] [--no-quarter]

Figures (goals in parentheses):
  startup_s      wall time of `prdigest --version` (median of runs)
  report_s_93    `prdigest report --format json` on the replayed miles week, minus startup_s (< 1)
  report_s_2000  the same on a generated 2,000-PR week, minus startup_s
  gitlog_s_2000  one `git log --first-parent -p -U0 -M --numstat` over the same commits: the floor
  report_over_git_2000   report_s_2000 / gitlog_s_2000 (<= 1.5)
  report_s_20000 the same on a generated 20,000-PR quarter, minus startup_s (<= 40)
  peak_mb_93, peak_mb_2000, peak_mb_20000   peak resident memory of the command and its git children
                 together, sampled every 20 ms (20000: <= 300)
  report_s_miles_all   the same over the whole real history of the miles bundle (real diffs, where the
                       risk rules fire), minus startup_s

Each report run starts from an empty database, so it includes reading the clone, filling the cache and
computing the report. The generated histories (tests/synthetic_history.py, git fast-import) repeat the
miles week's commits with new PR numbers and times: the 2,000-PR week on the same files, which grow
with each repetition; the 20,000-PR quarter under a folder per repetition, so file sizes stay bounded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the generated histories

from synthetic_history import build  # noqa: E402

DATA = "data/radixark__miles__2026-08-10.json"
WEEK = ("2026-08-10", "2026-08-16")
QUARTER = ("2026-07-01", "2026-09-30")
BUNDLE = "data/radixark__miles.bundle"
HISTORY = ("2025-01-01", "2026-12-31")  # the bundle's whole history
SHANGHAI = ZoneInfo("Asia/Shanghai")


def prdigest() -> list[str]:
    return [sys.executable, "-m", "prdigest.cli"]


def _tree(pid: int) -> list[int]:
    """The process and its descendants, now."""
    found = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    found += _tree(int(child))
    except OSError:
        pass  # it ended meanwhile
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the peak of the resident memory of one command and its children together, in MB."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, sum(_rss_kb(pid) for pid in _tree(proc.pid)))
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return elapsed, peak / 1024


def replay(shared: Path, data: Path, out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        [sys.executable, str(shared / "tools" / "replay_history.py"), str(data), str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env,
    )


def generated(shared: Path, target: Path, count: int, window: tuple[str, str], spread: bool) -> Path:
    """The miles week's commits repeated to ``count`` PRs over the window's days (Asia/Shanghai)."""
    start = datetime.fromisoformat(f"{window[0]}T00:30:00").replace(tzinfo=SHANGHAI)
    end = datetime.fromisoformat(f"{window[1]}T23:30:00").replace(tzinfo=SHANGHAI)
    return build(shared / DATA, target, count, start, end, spread=spread)


def gitlog_seconds(repo: Path, runs: int, env: dict[str, str]) -> float:
    """The physical floor of reading a window: one git pass over every commit's numstat and patch."""
    cmd = ["git", "-C", str(repo), "log", "--first-parent", "-p", "-U0", "-M", "--numstat"]
    return statistics.median(timed(cmd, env)[0] for _ in range(runs))


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
    parser.add_argument(
        "--no-quarter", dest="quarter", action="store_false", help="skip the 20,000-PR quarter (minutes)"
    )
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

        big = generated(args.shared, tmp / "big", 2000, WEEK, spread=False)
        seconds, peak = report_figures(big, args.runs, startup, tmp, env)
        floor = gitlog_seconds(big, args.runs, env)
        print(f"report_s_2000={seconds:.3f}", flush=True)
        print(f"gitlog_s_2000={floor:.3f}", flush=True)
        print(f"report_over_git_2000={seconds / floor:.2f}", flush=True)
        print(f"peak_mb_2000={peak:.1f}", flush=True)

        if args.quarter:
            huge = generated(args.shared, tmp / "huge", 20_000, QUARTER, spread=True)
            seconds, peak = report_figures(huge, 1, startup, tmp, env, window=QUARTER)
            print(f"report_s_20000={seconds:.3f}", flush=True)
            print(f"peak_mb_20000={peak:.1f}", flush=True)

        bundle = args.shared / BUNDLE
        if bundle.exists():
            whole = tmp / "miles-all"
            subprocess.run(["git", "clone", "-q", str(bundle), str(whole)], check=True, env=env)
            seconds, _ = report_figures(whole, args.runs, startup, tmp, env, window=HISTORY)
            print(f"report_s_miles_all={seconds:.3f}", flush=True)


if __name__ == "__main__":
    main()
