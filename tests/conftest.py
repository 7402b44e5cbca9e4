"""Test hygiene: no inherited tokens or proxies, a temporary database, killable subprocesses, and one
clock: every test starts at the instant ``--now`` names (default: the machine's clock), and prdigest's
clock (prdigest.clock) starts there with it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes.lark_api import FakeLark
from fakes.openai_api import FakeOpenAI, prdigest_answers
from fakes.slack_api import FakeSlack

from prdigest import clock
from prdigest.errors import ConfigError

# Tests mirror the package, one folder each, and some share helpers across folders (the chat tests use
# the delivery tests' Recorder): every folder of tests is importable, whichever ran first.
for _folder in sorted({path.parent for path in Path(__file__).parent.rglob("test_*.py")}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# The render tests' shared fixtures (a week of each size, the demo week) live beside their helpers.
pytest_plugins = ["test_render_support", "pg_support"]  # pg_support: postgres_url, a throwaway PostgreSQL

SHARED = Path(__file__).resolve().parents[2] / "shared"
MILES_DATA = SHARED / "data" / "radixark__miles__2026-08-10.json"
REPLAY = SHARED / "tools" / "replay_history.py"

_SCRUB_PREFIXES = ("PRDIGEST_", "OPENAI_", "GITHUB_", "GIT_")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def pytest_report_header() -> list[str]:
    import sqlite3
    from importlib.metadata import version

    return [f"sqlite: {sqlite3.sqlite_version}, sqlite-utils: {version('sqlite-utils')}"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--now",
        metavar="ISO",
        help="the instant every test starts at, an ISO datetime with its offset "
        "(e.g. 2026-12-06T23:59:40+08:00); default: the machine's clock",
    )


def pytest_configure(config: pytest.Config) -> None:
    start = config.getoption("--now")
    if start:
        try:
            when = clock.parse_instant(start, "--now")
        except ConfigError as exc:
            raise pytest.UsageError(str(exc)) from None
        # Between tests too (module and session fixtures, the processes they start), the clock starts there.
        os.environ[clock.ENV] = when.astimezone(UTC).isoformat()
        clock.set_now(None)


@pytest.fixture(autouse=True)
def now(
    clean_env: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[datetime]:
    """The instant this test starts at, in UTC: a test that depends on the day builds its data from it.

    prdigest's clock starts there too, in this process and (through PRDIGEST_NOW) in the processes
    the test starts; without --now it is the machine's clock."""
    start = request.config.getoption("--now")
    when = clock.parse_instant(start, "--now").astimezone(UTC) if start else clock.machine_utc_now()
    if start:
        monkeypatch.setenv(clock.ENV, when.isoformat())
    clock.set_now(when)
    yield when
    clock.set_now(None)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each test starts with no secrets, no proxies, no config file it did not name, its own database."""
    for name in list(os.environ):
        if name.startswith(_SCRUB_PREFIXES) or name in _PROXIES or name == "GITHUB_TOKEN":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    db = tmp_path / "prdigest.db"
    monkeypatch.setenv("PRDIGEST_DB", str(db))
    # Settings look for ./prdigest.toml, then $XDG_CONFIG_HOME (~/.config): an empty working
    # directory of its own, so that neither a file in the checkout nor a test's own
    # tmp_path/prdigest.toml is found unless a test names it.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    return db


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli() -> Iterator[object]:
    """Run `prdigest ...` in a subprocess that is killed in teardown if it outlives the test."""
    procs: list[subprocess.Popen[str]] = []

    def run(
        *args: str,
        timeout: float = 60,
        cwd: Path | None = None,
        stdin: str | None = None,
        env: dict | None = None,
    ) -> Run:
        proc = subprocess.Popen(
            [sys.executable, "-m", "prdigest.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            text=True,
            cwd=cwd,
            # wide enough that rich does not wrap the lines tests read
            env={**os.environ, "COLUMNS": "200", **(env or {})},
        )
        procs.append(proc)
        out, err = proc.communicate(input=stdin, timeout=timeout)
        return Run(proc.returncode, out, err)

    yield run
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def git_env(
    name: str = "Dev One", email: str = "dev1@example.com", date: str | None = None
) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME="GitHub",
        GIT_COMMITTER_EMAIL="noreply@github.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    # A commit without a date is made now by the tests' clock, not the machine's.
    when = date or clock.utc_now().isoformat()
    env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return env


def git(repo: Path, *args: str, **env_kw: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=git_env(**env_kw), timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit(repo: Path, message: str, date: str, **who: str) -> None:
    """Commit everything in the work tree, with explicit author and dates."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date, **who)


@pytest.fixture(scope="session")
def miles_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The replayed miles week (2026-08-10..16): real messages, authors, dates and numstat."""
    if not MILES_DATA.exists():
        pytest.skip(f"{MILES_DATA} is not here")
    out = tmp_path_factory.mktemp("miles") / "miles"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(
        [sys.executable, str(REPLAY), str(MILES_DATA), str(out)],
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )
    return out


# --- the demo week, shared by the chat and adapter tests ---------------------------------------


def demo_source():
    from prdigest.sources.fixture import FixtureSource, demo_fixture_path

    return FixtureSource(demo_fixture_path())


def demo_monday_after():
    """10:00 on the Monday after the demo week, in its timezone: "last week" is then the demo week."""
    from datetime import datetime, time, timedelta

    window = demo_source().window
    return datetime.combine(window.until + timedelta(days=1), time(10), window.zone)


@pytest.fixture
def store() -> Iterator[object]:
    """An empty cache in memory."""
    from prdigest.storage import Store

    db = Store(":memory:")
    yield db
    db.close()


@pytest.fixture
def demo_store(tmp_path: Path) -> Iterator[object]:
    """A cache holding the demo week's PRs."""
    from prdigest.storage import Store

    store = Store(tmp_path / "demo.db")
    store.upsert_prs(demo_source().prs)
    yield store
    store.close()


def open_access(settings):
    """The settings of a single team's install ([access] open): every chat sees every repository. For
    tests of other things than who sees what (tests/handlers/test_access.py)."""
    from prdigest.config import AccessSettings

    return settings.model_copy(update={"access": AccessSettings(open=True)})


def subscribe(store, platform: str, chat_id: str, repo: str, **fields):
    """A chat's subscription of ``repo``, as an admin's `subscribe` would save it."""
    from prdigest.storage.subscriptions import save_subscription
    from prdigest.subscription import Subscription

    return save_subscription(store, Subscription(platform=platform, chat_id=chat_id, repo=repo, **fields))


def demo_services(settings, store):
    """Services of a chat about the demo week in a single team's install, its clock on the Monday after it."""
    from prdigest.handlers import Services
    from prdigest.sources.registry import source_factory

    source = demo_source()
    monday = demo_monday_after()
    return Services(
        settings=open_access(settings), store=store, default_repo=source.repo,
        source_for=source_factory(settings, source), clock=lambda: monday,
    )  # fmt: skip


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeOpenAI]]:
    """Start fake OpenAI-compatible servers (a mode, a responder); every one is closed after the test."""
    started: list[FakeOpenAI] = []

    def start(mode: str = "strict", responder=prdigest_answers, **kw) -> FakeOpenAI:
        fake = FakeOpenAI(mode, responder=responder, **kw).start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.close()


# The fake chat APIs on port 0, for the tests that talk to them through the SDKs.
@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def lark() -> Iterator[FakeLark]:
    with FakeLark() as fake:
        yield fake
