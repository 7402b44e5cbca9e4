"""The same report from a PostgreSQL store as from SQLite: `prdigest report --format json`, its generation
time and id aside, on the demo week and on a real week of a bundled history, built cold and then again
from the cache each store kept."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prdigest.sources.fixture import demo_fixture_path

SHARED = Path(__file__).resolve().parents[3] / "shared"
MILES = SHARED / "data" / "radixark__miles.bundle"


def contract(stdout: str) -> dict[str, Any]:
    report = json.loads(stdout)
    assert report["prs"], "a report of an empty week compares nothing"
    return {k: v for k, v in report.items() if k not in ("generated_at", "id")}


def both(run_cli: Any, tmp_path: Path, pg: str, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON report from SQLite and from PostgreSQL, with nothing else told apart."""
    sqlite = run_cli("report", *args, "--format", "json", "--db", str(tmp_path / "c.db"), timeout=240)
    assert sqlite.returncode == 0, sqlite.stderr
    on_pg = run_cli("report", *args, "--format", "json", env={"PRDIGEST_STORAGE__URL": pg}, timeout=240)
    assert on_pg.returncode == 0, on_pg.stderr
    return contract(sqlite.stdout), contract(on_pg.stdout)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_demo_week_reads_the_same_from_either_store(
    run_cli: Any, tmp_path: Path, pg_database: str, lang: str
) -> None:
    week = ("--since", "2026-09-07", "--until", "2026-09-13", "--lang", lang)
    cold = both(run_cli, tmp_path, pg_database, "--fixture", str(demo_fixture_path()), *week)
    assert cold[0] == cold[1]
    # Again from what each store kept: no source, the cache alone.
    cached = both(run_cli, tmp_path, pg_database, "--repo", cold[0]["repo"], *week)
    assert cached[0] == cached[1] == {**cold[0], "source": "cache"}


@pytest.mark.e2e
def test_a_real_week_of_a_bundled_history_reads_the_same_from_either_store(
    run_cli: Any, tmp_path: Path, pg_database: str
) -> None:
    if not MILES.exists():
        pytest.skip(f"no bundle at {MILES}")
    clone = tmp_path / "miles"
    subprocess.run(["git", "clone", "-q", str(MILES), str(clone)], check=True, timeout=120)
    week = ("--repo", "radixark/miles", "--since", "2026-08-10", "--until", "2026-08-16", "--lang", "en")
    sqlite, on_pg = both(run_cli, tmp_path, pg_database, "--git", str(clone), *week)
    assert sqlite == on_pg
    assert len(sqlite["prs"]) > 10
