"""Report benchmark: prints one `name=value` line per figure.

    python bench/report_bench.py [--shared ../shared] [--runs 3] [--no-quarter] [--real-only]

Figures (goals in parentheses):
  startup_s      wall time of `prdigest --version` (median of runs)
  report_s_93    `prdigest report --format json` on the replayed miles week, minus startup_s (< 1)
  report_s_2000  the same on a generated 2,000-PR week, minus startup_s
  gitlog_s_2000  one `git log --first-parent -p -U0 -M --numstat` over the same commits: the floor
  report_over_git_2000   report_s_2000 / gitlog_s_2000 (<= 1.5)
  report_s_20000 the same on a generated 20,000-PR quarter, minus startup_s (<= 40)
  peak_mb_93, peak_mb_2000, peak_mb_20000   peak resident memory of the command and its git children
                 together, sampled every 20 ms (20000: <= 300)
  report_s_real_<name>, report_cpu_s_real_<name>
                 for every bundle in data/ (<owner>__<name>.bundle: miles, trl), a cold report over its
                 whole first-parent history (real diffs, where the risk rules fire): wall and CPU seconds
                 (the command and its git children), minus startup, best of --runs
  gitlog_s_real_<name>, gitlog_cpu_s_real_<name>
                 the floor measured in the same run, alternating with the report: one
                 `git log --first-parent -p -U0 -M --numstat` over the same commits, best of --runs
  report_over_git_real_<name>, report_over_git_cpu_real_<name>   the ratios (<= 1.5)
  peak_mb_real_<name>  the report's peak resident memory, its git children included (<= 300)
  week_s_real_<name>, week_earlier_share_real_<name>
                 a cold report of one real week of each history (its last complete week), in process, and
                 the share of its wall time spent on the weeks before it: reading them (trend), the
                 history chart and the risk follow-ups (<= 0.5); best of --runs
  week_alone_s_real_<name>, week_earlier_added_share_real_<name>
                 the same report without any earlier period (no trend, a chart of the week alone), alternating
                 with it, and the share of the report's wall time the earlier periods add, 1 - alone/week:
                 what they cost wherever it is spent (the trend's figures and the themes' continuity are
                 outside the three phases above, and work overlapped with git's counts only where it waits)

Each report run starts from an empty database, so it includes reading the clone, filling the cache and
computing the report. The generated histories (tests/synthetic_history.py, git fast-import) repeat the
miles week's commits with new PR numbers and times: the 2,000-PR week on the same files, which grow
with each repetition; the 20,000-PR quarter under a folder per repetition, so file sizes stay bounded.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the generated histories

from synthetic_history import build  # noqa: E402

DATA = "data/radixark__miles__2026-08-10.json"
WEEK = ("2026-08-10", "2026-08-16")
QUARTER = ("2026-07-01", "2026-09-30")
HISTORY = ("2025-01-01", "2026-12-31")  # the bundle's whole history
SHANGHAI = ZoneInfo("Asia/Shanghai")
DAY = timedelta(days=1)


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


def cpu_timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user and system, of the command and every child it waited for) and the
    peak resident memory in MB of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, peak = timed(cmd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, peak


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
    parser.add_argument("--real-only", action="store_true", help="only the real histories' figures")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "GITHUB_", "OPENAI_"))}
    with tempfile.TemporaryDirectory(prefix="prdigest-bench-") as name:
        tmp = Path(name)
        startup = statistics.median(
            timed([*prdigest(), "--version"], env)[0] for _ in range(max(args.runs, 5))
        )
        print(f"startup_s={startup:.3f}", flush=True)
        if args.real_only:
            for bundle in sorted((args.shared / "data").glob("*__*.bundle")):
                real_figures(bundle, args.runs, startup, tmp, env)
            return

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

        for bundle in sorted((args.shared / "data").glob("*__*.bundle")):
            real_figures(bundle, args.runs, startup, tmp, env)


def week_figures(clone: Path, name: str, runs: int, tmp: Path) -> None:
    """One cold week of a real history, in process: its wall time and the share the earlier weeks take."""
    from prdigest.config import load_settings
    from prdigest.models import Window
    from prdigest.periods import last_complete_week
    from prdigest.pipeline import single
    from prdigest.sources.git.source import GitSource
    from prdigest.storage import Store

    source = GitSource(clone)
    log = ["git", "-C", str(clone), "log", "-1", "--format=%cI"]
    newest = subprocess.run(log, check=True, capture_output=True, text=True).stdout.strip()
    week: Window = last_complete_week(datetime.fromisoformat(newest), "Asia/Shanghai")
    spent: dict[str, float] = {}

    def timing(fn: Any, key: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

        return run

    phases = {"earlier_periods": single.earlier_periods, "history": single.history,
              "follow_risks": single.follow_risks}  # fmt: skip
    # Without earlier periods: none compared, the chart the week alone.
    chart = single.chart_periods
    alone = {"trend_periods": lambda w: [], "chart_periods": lambda w: (chart(w)[0], [(w, True)])}
    saved = {key: getattr(single, key) for key in [*phases, *alone]}
    best: tuple[float, float] | None = None
    best_alone: float | None = None
    for k in range(runs):
        for without in (False, True):
            spent.clear()
            for key, fn in phases.items():
                setattr(single, key, timing(fn, key))
            for key, fn in alone.items() if without else ():
                setattr(single, key, fn)
            store = Store(tmp / f"week-{name}-{k}-{without}.db")
            started = time.perf_counter()
            try:
                # made the Monday after the week, as the weekly job makes it
                single.make_report(load_settings(env={}), store, source, week, save=False, now=week.end + DAY)
            finally:
                for key, fn in saved.items():
                    setattr(single, key, fn)
                store.close()
            wall = time.perf_counter() - started
            if without:
                best_alone = wall if best_alone is None else min(best_alone, wall)
            elif best is None or wall < best[0]:
                best = (wall, sum(spent.values()) / wall)
    assert best is not None and best_alone is not None
    print(f"week_s_real_{name}={best[0]:.3f}", flush=True)
    print(f"week_earlier_share_real_{name}={best[1]:.2f}", flush=True)
    print(f"week_alone_s_real_{name}={best_alone:.3f}", flush=True)
    print(f"week_earlier_added_share_real_{name}={1 - best_alone / best[0]:.2f}", flush=True)


def real_figures(bundle: Path, runs: int, startup: float, tmp: Path, env: dict[str, str]) -> None:
    """A cold report over a real history's whole first-parent line against the one-walk floor, alternating
    so that both meet the same machine; best of ``runs`` for each."""
    name = bundle.stem.partition("__")[2]
    clone = tmp / f"real-{name}"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, env=env)
    floor_cmd = ["git", "-C", str(clone), "log", "--first-parent", "-p", "-U0", "-M", "--numstat"]
    reports, floors = [], []
    for k in range(runs):
        db = tmp / f"real-{name}-{k}.db"
        cmd = [*prdigest(), "report", "--git", str(clone), "--since", HISTORY[0], "--until", HISTORY[1],
               "--tz", "Asia/Shanghai", "--format", "json", "--db", str(db)]  # fmt: skip
        reports.append(cpu_timed(cmd, env))
        floors.append(cpu_timed(floor_cmd, env))
        db.unlink()
    wall = min(r[0] for r in reports) - startup
    cpu = min(r[1] for r in reports)
    floor_wall, floor_cpu = min(f[0] for f in floors), min(f[1] for f in floors)
    print(f"report_s_real_{name}={wall:.3f}", flush=True)
    print(f"report_cpu_s_real_{name}={cpu:.3f}", flush=True)
    print(f"gitlog_s_real_{name}={floor_wall:.3f}", flush=True)
    print(f"gitlog_cpu_s_real_{name}={floor_cpu:.3f}", flush=True)
    print(f"report_over_git_real_{name}={wall / floor_wall:.2f}", flush=True)
    print(f"report_over_git_cpu_real_{name}={cpu / floor_cpu:.2f}", flush=True)
    print(f"peak_mb_real_{name}={max(r[2] for r in reports):.1f}", flush=True)
    week_figures(clone, name, runs, tmp)


if __name__ == "__main__":
    main()
