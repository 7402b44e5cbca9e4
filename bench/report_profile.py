"""Where a cold report over a real history spends its main thread: prints one `name=value` line per part.

    python bench/report_profile.py [--shared ../shared] [--week]

For every bundle in data/ (<owner>__<name>.bundle: miles, trl), the whole first-parent history is reported
in process from an empty cache under cProfile, and each part's cumulative seconds are printed as
`profile_<part>_s_<name>` (cProfile slows Python down, git not: compare parts with each other and with
the same script's earlier runs, not with `bench/report_bench.py`'s wall times):

  total           the report (`make_report`)
  rules           the rules engine (`rules.analyse`)
  excerpt         the diff excerpts (`sources/diffs.py excerpt`)
  narrow          the walk's `-U1` patch read as `-U0` (`hunks.narrowed`)
  option_hunks    the hunks that may change an option (`defining_files`)
  options         the options read and parsed from the files' texts (`OptionReader.changes`)
  records         git's output split into commits (`records`), its waits for git included
  git_wait        the main thread waiting for git's output (`queue.get`'s lock)
  sqlite          the cache's writes (`upsert_prs`, without the source's stream and the rules)
  compute         the report built from the cache (`_compute`)
  content_hash    the PRs' content hashes

With --week, a cold report of each history's last complete week instead, its earlier periods' parts as
`profile_week_<part>_s_<name>`: total, earlier_periods (the trend's weeks read whole), history (the chart),
counted (the chart's weeks counted from the source), earlier_figures (the trend's figures: the rules over
the earlier weeks' PRs), continue_themes, follow_risks, git_wait.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HISTORY = ("2025-01-01", "2026-12-31")  # a bundle's whole history
Key = tuple[str, int, str]


def _function(file: str, name: str) -> Callable[[Key], bool]:
    return lambda key: key[0].endswith(file) and key[2] == name


PARTS: dict[str, Callable[[Key], bool]] = {
    "total": _function("pipeline/single.py", "make_report"),
    "rules": _function("analysis/rules.py", "analyse"),
    "excerpt": _function("sources/diffs.py", "excerpt"),
    "narrow": _function("git/hunks.py", "narrowed"),
    "option_hunks": _function("options/patch.py", "defining_files"),
    "options": _function("options/reader.py", "changes"),
    "records": _function("git/output.py", "records"),
    "compute": _function("pipeline/single.py", "_compute"),
    "content_hash": _function("prdigest/models.py", "content_hash"),
}


WEEK_PARTS: dict[str, Callable[[Key], bool]] = {
    "total": _function("pipeline/single.py", "make_report"),
    "earlier_periods": _function("pipeline/single.py", "earlier_periods"),
    "history": _function("pipeline/single.py", "history"),
    "counted": _function("pipeline/single.py", "counted_missing"),
    "earlier_figures": _function("analysis/history.py", "earlier_figures"),
    "continue_themes": _function("analysis/continuity.py", "continue_themes"),
    "follow_risks": _function("followups/track.py", "follow_risks"),
}


def profile(clone: Path, db: Path, week: bool = False) -> pstats.Stats:
    from prdigest.config import load_settings
    from prdigest.models import Window
    from prdigest.pipeline import single
    from prdigest.sources.git.source import GitSource
    from prdigest.storage import Store

    window = Window(since=HISTORY[0], until=HISTORY[1], tz="Asia/Shanghai")
    now = datetime(2027, 1, 1, tzinfo=UTC)
    if week:  # the last complete week, made the Monday after it
        from prdigest.periods import last_complete_week

        log = ["git", "-C", str(clone), "log", "-1", "--format=%cI"]
        newest = subprocess.run(log, check=True, capture_output=True, text=True).stdout.strip()
        window = last_complete_week(datetime.fromisoformat(newest), "Asia/Shanghai")
        now = window.end + timedelta(days=1)
    store = Store(db)
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        single.make_report(
            load_settings(env={}),
            store,
            GitSource(clone),
            window,
            save=False,
            now=now,
        )
    finally:
        profiler.disable()
        store.close()
    return pstats.Stats(profiler)


def parts(stats: pstats.Stats, week: bool = False) -> dict[str, float]:
    table = stats.stats  # type: ignore[attr-defined]  # (file, line, name) -> (calls, calls, own, cumulative, callers)

    def cumulative(match: Callable[[Key], bool]) -> float:
        return sum(row[3] for key, row in table.items() if match(key))

    out = {name: cumulative(match) for name, match in (WEEK_PARTS if week else PARTS).items()}
    out["git_wait"] = sum(
        row[2] for key, row in table.items() if key[2] == "<method 'acquire' of '_thread.lock' objects>"
    )
    if week:
        return out
    stream = cumulative(_function("git/source.py", "stream"))
    batches = cumulative(_function("pipeline/single.py", "analyse_batch"))
    out["sqlite"] = cumulative(_function("storage/db.py", "upsert_prs")) - stream - batches
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--week", action="store_true", help="a cold last complete week's earlier periods")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prdigest-profile-") as tmp:
        for bundle in sorted((args.shared / "data").glob("*__*.bundle")):
            name = bundle.stem.partition("__")[2]
            clone = Path(tmp) / name
            subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
            stats = profile(clone, Path(tmp) / f"{name}.db", args.week)
            for part, seconds in parts(stats, args.week).items():
                print(f"profile_{'week_' if args.week else ''}{part}_s_{name}={seconds:.2f}", flush=True)


if __name__ == "__main__":
    main()
