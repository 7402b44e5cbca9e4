"""The same reports on SQLite and on PostgreSQL: prints one `name=value` line per figure.

    python bench/store_bench.py [--shared ../shared] [--runs 3]

Starts a throwaway PostgreSQL (as the tests do: `tests/pg_support.py`), clones the miles bundle, and runs
`prdigest report --format json` cold (a new SQLite file, a new PostgreSQL database) on the demo week and on
the bundle's week of 2026-08-10, then again from each cache alone (`--repo`, no source). Best of ``runs``,
alternating the stores:

  report_s_<week>_<sqlite|pg>         a cold report's wall time, process start included
  cached_s_<week>_<sqlite|pg>         the same report again, from the cache alone
  same_json_<week>                    1 when both stores' JSON reports (generation time and id aside) agree
  same_json_cached_<week>             the same of the reports from the cache alone (a clone's report says
                                      more than its cache: a cached one is compared with the other cached)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from pg_support import start_cluster, stop_cluster  # noqa: E402


def report(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "prdigest.cli", "report", *args, "--format", "json"],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"prdigest report {' '.join(args)} failed: {done.stderr.strip()}")
    body = json.loads(done.stdout)
    return took, {k: v for k, v in body.items() if k not in ("generated_at", "id")}


def create_database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"'.encode())
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    from prdigest.sources.fixture import demo_fixture_path

    base = {k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "PG"))}
    cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory(prefix="prdigest-store-bench-") as tmp:
            clone = Path(tmp) / "miles"
            bundle = opts.shared / "data" / "radixark__miles.bundle"
            subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, timeout=300)
            weeks = {
                "demo": (["--fixture", str(demo_fixture_path())], "acme-ml/trainer",
                         ["--since", "2026-09-07", "--until", "2026-09-13"]),
                "miles": (["--git", str(clone), "--repo", "radixark/miles"], "radixark/miles",
                          ["--since", "2026-08-10", "--until", "2026-08-16"]),
            }  # fmt: skip
            for name, (source, repo, window) in weeks.items():
                best: dict[str, float] = {}
                got: dict[str, dict[str, object]] = {}
                kept: dict[str, dict[str, object]] = {}
                for run in range(opts.runs):
                    for store in ("sqlite", "pg"):
                        if store == "sqlite":
                            env = {**base, "PRDIGEST_DB": str(Path(tmp) / f"{name}-{run}.db")}
                        else:
                            url = create_database(cluster.url, f"bench_{name}_{run}")
                            env = {**base, "PRDIGEST_STORAGE__URL": url}
                        cold, got[store] = report([*source, *window, "--lang", "en"], env)
                        cached, kept[store] = report(["--repo", repo, *window, "--lang", "en"], env)
                        for figure, value in (
                            (f"report_s_{name}_{store}", cold),
                            (f"cached_s_{name}_{store}", cached),
                        ):
                            best[figure] = min(best.get(figure, value), value)
                for figure, value in best.items():
                    print(f"{figure}={value:.2f}")
                print(f"same_json_{name}={int(got['sqlite'] == got['pg'])}")
                print(f"same_json_cached_{name}={int(kept['sqlite'] == kept['pg'])}")
    finally:
        stop_cluster(cluster)


if __name__ == "__main__":
    main()
