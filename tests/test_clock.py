"""One clock: prdigest reads "now" only through prdigest.clock, which the suite's --now sets."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import prdigest
from prdigest import clock
from prdigest.errors import ConfigError
from prdigest.sources.fixture import demo_fixture_path

PACKAGE = Path(prdigest.__file__).parent
SEAM = PACKAGE / "clock.py"
TESTS = Path(__file__).parent

# Functions that read the wall clock whatever their arguments, and those that read it when called
# without the instant they would format (time.strftime(fmt), time.localtime()).
ALWAYS = {
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
    "time.time", "time.time_ns",
}  # fmt: skip
WITHOUT_ARGUMENT = {
    "time.localtime": 0,
    "time.gmtime": 0,
    "time.ctime": 0,
    "time.asctime": 0,
    "time.strftime": 1,
}


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the module's imports (aliases included)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)])


def clock_reads(root: Path) -> list[str]:
    """Every place under ``root`` (a copy of the package) that reads the wall clock outside clock.py,
    as ``path:line name``: called, or passed on to be called later (``default=datetime.now``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root) == SEAM.relative_to(PACKAGE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _imported_names(tree)
        calls = {id(node.func): node for node in ast.walk(tree) if isinstance(node, ast.Call)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute | ast.Name):
                continue
            name = _dotted(node, names)
            call = calls.get(id(node))
            reads = name in ALWAYS or (
                name in WITHOUT_ARGUMENT and (call is None or len(call.args) <= WITHOUT_ARGUMENT[name])
            )
            if reads:
                found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_nothing_in_the_package_reads_the_wall_clock_but_the_clock() -> None:
    assert clock_reads(PACKAGE) == []


PLANTS = {
    "from datetime import UTC, datetime\nWHEN = datetime.now(UTC)\n": "datetime.datetime.now",
    "import datetime as dt\nDAY = dt.date.today()\n": "datetime.date.today",
    "from time import time as seconds\nSTAMP = seconds()\n": "time.time",
    "import time\nLATER = time.time\n": "time.time",
    "import time\nLABEL = time.strftime('%Y')\n": "time.strftime",
}


@pytest.mark.parametrize("planted", list(PLANTS))
def test_the_check_finds_a_planted_clock_read(tmp_path: Path, planted: str) -> None:
    copy = tmp_path / "prdigest"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert clock_reads(copy) == []
    window = copy / "window.py"
    lines = window.read_text(encoding="utf-8").count("\n")
    window.write_text(window.read_text(encoding="utf-8") + planted, encoding="utf-8")
    assert clock_reads(copy) == [f"window.py:{lines + 2} {PLANTS[planted]}"]


def test_timers_and_formatting_a_given_instant_are_not_clock_reads(tmp_path: Path) -> None:
    (tmp_path / "timers.py").write_text(
        "import time\nfrom datetime import UTC, datetime\n"
        "a = time.monotonic()\nb = time.perf_counter()\nc = time.strftime('%Y', time.gmtime(0))\n"
        "d = datetime.fromtimestamp(0, UTC)\n",
        encoding="utf-8",
    )
    assert clock_reads(tmp_path) == []


def test_the_clock_starts_at_the_instant_set_and_runs_on() -> None:
    start = datetime(2026, 12, 6, 23, 59, 40, tzinfo=ZoneInfo("Asia/Shanghai"))
    clock.set_now(start)
    first = clock.utc_now()
    assert first.tzinfo is UTC and timedelta(0) <= first - start < timedelta(seconds=5)
    assert clock.utc_now() >= first  # it runs on: leases and expiries still pass
    assert abs(clock.machine_utc_now() - datetime.now(UTC)) < timedelta(
        seconds=5
    )  # the machine's is not moved
    with pytest.raises(ValueError, match="aware"):
        clock.set_now(datetime(2026, 12, 6))


def test_the_suite_clock_is_the_now_fixture(now: datetime, request: pytest.FixtureRequest) -> None:
    assert now.tzinfo is UTC and timedelta(0) <= clock.utc_now() - now < timedelta(seconds=5)
    given = request.config.getoption("--now")
    if given:
        assert now == datetime.fromisoformat(given) and os.environ[clock.ENV] == now.isoformat()
    else:
        assert abs(now - datetime.now(UTC)) < timedelta(seconds=5) and clock.ENV not in os.environ


def _process_now(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = "from prdigest.clock import utc_now; print(utc_now().isoformat())"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )


def test_prdigest_now_sets_a_process_clock() -> None:
    done = _process_now({clock.ENV: "2030-02-03T04:05:06+08:00"})
    assert done.returncode == 0, done.stderr
    started = datetime.fromisoformat(done.stdout.strip())
    assert timedelta(0) <= started - datetime(2030, 2, 2, 20, 5, 6, tzinfo=UTC) < timedelta(seconds=30)


@pytest.mark.parametrize("bad", ["tomorrow", "2026-12-06T23:59:40", "2026-13-01T00:00:00+00:00"])
def test_a_bad_prdigest_now_is_named(bad: str, run_cli) -> None:
    with pytest.raises(ConfigError, match="PRDIGEST_NOW"):
        clock.parse_instant(bad, clock.ENV)
    done = run_cli("report", "--fixture", str(demo_fixture_path()), "--last-week", env={clock.ENV: bad})
    assert done.returncode != 0 and "PRDIGEST_NOW" in done.stderr and "Traceback" not in done.stderr


def test_pytest_now_sets_the_clock_of_a_whole_run(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from prdigest.clock import utc_now\n\n"
        "def test_one(now):\n    print('probe', now.isoformat(), utc_now().isoformat())\n",
        encoding="utf-8",
    )
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copytree(TESTS / "fakes", tmp_path / "fakes")
    for plugin in ("test_render_support.py", "pg_support.py"):  # the conftest's plugins
        shutil.copy(TESTS / plugin, tmp_path / plugin)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "--now=2026-12-06T23:59:40+08:00", str(probe)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "probe " in line)
    start, seen = (datetime.fromisoformat(v) for v in line.split("probe ")[1].split())
    assert start == datetime(2026, 12, 6, 15, 59, 40, tzinfo=UTC) and timedelta(
        0
    ) <= seen - start < timedelta(seconds=5)
    bad = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "--now=yesterday", str(probe)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert bad.returncode == 4 and "--now 'yesterday'" in bad.stderr
