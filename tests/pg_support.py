"""A throwaway PostgreSQL for the tests that need a real server: ``postgres_url``.

One cluster per test session, started on first use: initdb into a temporary directory (as the
``postgres`` OS user when the tests run as root: initdb refuses root), listening on 127.0.0.1 only, on a
free port, trusting loopback connections, its unix socket in that directory. Stopped (``-m immediate``)
and its directory removed in teardown; every step is bounded in time, and a server that outlives its
stop is killed.

When no PostgreSQL can be started the tests that need it are skipped with the reason, unless
PRDIGEST_REQUIRE_POSTGRES=1 (CI on a machine that has one): then they fail with it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Read when the tests start, before any test's clean environment: CI sets it for the whole run.
REQUIRED = os.environ.get("PRDIGEST_REQUIRE_POSTGRES") == "1"
OS_USER = "postgres"
# Debian installs the binaries here, one folder per major version; pg_ctl on PATH wins.
DEBIAN_BINS = Path("/usr/lib/postgresql")
ATTEMPTS = 3  # a port taken between choosing it and the server binding it: choose another


class PostgresUnavailable(Exception):
    """Why no PostgreSQL could be started on this machine."""


@dataclass
class Cluster:
    root: Path  # the temporary directory: data/, the log, the unix socket
    bin: Path
    port: int
    as_user: list[str]  # the command prefix that runs a program as the cluster's owner

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


def find_bin() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, else Debian's newest version."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    versions = sorted(
        (p for p in DEBIAN_BINS.glob("*/bin") if (p / "initdb").exists() and (p / "pg_ctl").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return versions[-1] if versions else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(cluster: Cluster, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}  # no inherited PGDATA, PGPORT…
    env.update(LC_ALL="C", LANG="C")
    try:
        return subprocess.run(
            [*cluster.as_user, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cluster.root,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise PostgresUnavailable(f"{Path(args[0]).name} did not finish in {timeout:.0f}s") from None
    except OSError as exc:
        raise PostgresUnavailable(f"cannot run {args[0]}: {exc}") from None


def _owner_prefix(root: Path) -> list[str]:
    """How to run initdb and pg_ctl: as this user, or as ``postgres`` when this is root."""
    if os.geteuid() != 0:
        return []
    import pwd

    try:
        owner = pwd.getpwnam(OS_USER)
    except KeyError:
        raise PostgresUnavailable(f"running as root and there is no {OS_USER!r} OS user for initdb") from None
    os.chown(root, owner.pw_uid, owner.pw_gid)
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and runuser (util-linux) is missing")
    return [runuser, "-u", OS_USER, "--"]


def start_cluster() -> Cluster:
    """A new cluster, started and accepting connections; PostgresUnavailable says why not."""
    bin_dir = find_bin()
    if bin_dir is None:
        raise PostgresUnavailable(
            "PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql)"
        )
    root = Path(tempfile.mkdtemp(prefix="prdigest-pg-"))  # /tmp: reachable by the postgres user
    cluster = Cluster(root=root, bin=bin_dir, port=0, as_user=[])
    try:
        cluster.as_user = _owner_prefix(root)
        done = _run(
            cluster, str(bin_dir / "initdb"), "-D", str(cluster.data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--locale=C", "--no-sync", timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {(done.stderr or done.stdout).strip()[-500:]}")
        for _ in range(ATTEMPTS):
            cluster.port = free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {cluster.port} -c unix_socket_directories={root} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            done = _run(
                cluster, str(bin_dir / "pg_ctl"), "-D", str(cluster.data), "-l", str(cluster.log),
                "-o", options, "-w", "-t", "60", "start", timeout=90,
            )  # fmt: skip
            if done.returncode == 0:
                return cluster
            log = cluster.log.read_text(errors="replace") if cluster.log.exists() else ""
            stop_cluster(cluster, remove=False)
            if "could not bind" not in log and "in use" not in log:
                raise PostgresUnavailable(f"pg_ctl start failed: {(done.stderr + log).strip()[-500:]}")
        raise PostgresUnavailable(f"no free port after {ATTEMPTS} attempts")
    except BaseException:
        stop_cluster(cluster)
        raise


def stop_cluster(cluster: Cluster, remove: bool = True) -> None:
    """Stop the server at once, kill it (and its backends) if it is still there, remove its files."""
    pid_file = cluster.data / "postmaster.pid"
    if pid_file.exists():
        with contextlib.suppress(PostgresUnavailable):
            _run(cluster, str(cluster.bin / "pg_ctl"), "-D", str(cluster.data), "-m", "immediate",
                 "-w", "-t", "20", "stop", timeout=30)  # fmt: skip
    with contextlib.suppress(OSError, ValueError, IndexError):
        pid = int(pid_file.read_text().splitlines()[0])
        # pg_ctl starts the postmaster in a session of its own: its group is the server and its backends.
        os.killpg(pid, signal.SIGKILL)
    if remove:
        shutil.rmtree(cluster.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """postgresql://postgres@127.0.0.1:PORT/postgres of a throwaway server (trust auth, loopback only)."""
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        reason = f"no PostgreSQL for the tests: {exc}"
        if REQUIRED:
            pytest.fail(f"{reason} (PRDIGEST_REQUIRE_POSTGRES=1)", pytrace=False)
        pytest.skip(reason)
    try:
        yield cluster.url
    finally:
        stop_cluster(cluster)


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    """The URL of a new, empty database on the session's server, dropped after the test."""
    import psycopg

    name = f"prdigest_{os.getpid()}_{next(_DATABASES)}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f'create database "{name}"'.encode())
    try:
        yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'drop database if exists "{name}" with (force)'.encode())


_DATABASES = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty store on each dialect in turn: a SQLite file, then a new PostgreSQL database."""
    from prdigest.config.storage_url import parse_store_url
    from prdigest.storage import Store

    if request.param == "sqlite":
        store = Store(tmp_path / "cache.db")
    else:
        store = Store(parse_store_url(request.getfixturevalue("pg_database")))
    try:
        yield store
    finally:
        store.close()
