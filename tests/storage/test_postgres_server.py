"""The PostgreSQL the storage tests run against (tests/pg_support.py): psycopg reaches it on loopback,
timestamps come back timezone-aware, the portable upsert works; without a server the tests say why."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

TESTS = Path(__file__).resolve().parents[1]


def test_the_server_listens_on_loopback_only(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert str(conn.execute("SELECT inet_server_addr()").fetchone()[0]) == "127.0.0.1"
        assert conn.execute("SELECT current_user").fetchone() == ("postgres",)
        assert conn.info.server_version >= 150000


def test_a_timestamp_comes_back_timezone_aware_and_the_same_instant(postgres_url: str) -> None:
    merged = datetime(2026, 9, 8, 10, 0, 30, 123456, tzinfo=timezone(timedelta(hours=8)))
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        conn.execute("SET TIME ZONE 'America/New_York'")  # neither the value's zone nor UTC
        conn.execute("CREATE TEMP TABLE prs (number int PRIMARY KEY, merged_at timestamptz NOT NULL)")
        conn.execute("INSERT INTO prs VALUES (%s, %s)", (3128, merged))
        (back,) = conn.execute("SELECT merged_at FROM prs WHERE number = 3128").fetchone()
    assert back.tzinfo is not None and back.utcoffset() is not None
    assert back == merged
    assert back.astimezone(UTC) == datetime(2026, 9, 8, 2, 0, 30, 123456, tzinfo=UTC)


def test_insert_on_conflict_do_update_returning(postgres_url: str) -> None:
    upsert = (
        "INSERT INTO revisions (repo, revision) VALUES (%s, 1) "
        "ON CONFLICT (repo) DO UPDATE SET revision = revisions.revision + 1 "
        "RETURNING id, revision, (xmax = 0) AS inserted"
    )
    with psycopg.connect(postgres_url, connect_timeout=10) as conn:
        conn.execute(
            "CREATE TEMP TABLE revisions (id serial PRIMARY KEY, repo text UNIQUE NOT NULL, revision int)"
        )
        first = conn.execute(upsert, ("acme/x",)).fetchone()
        again = conn.execute(upsert, ("acme/x",)).fetchone()
        other = conn.execute(upsert, ("acme/y",)).fetchone()
        rows = conn.execute("SELECT repo, revision FROM revisions ORDER BY repo").fetchall()
    assert first[1:] == (1, True)
    assert again == (first[0], 2, False)  # the same row, updated
    assert other[0] != first[0] and other[1:] == (1, True)
    assert rows == [("acme/x", 2), ("acme/y", 1)]


def test_a_pool_checks_its_connections(postgres_url: str) -> None:
    from psycopg_pool import ConnectionPool

    with ConnectionPool(
        postgres_url, min_size=1, max_size=2, check=ConnectionPool.check_connection, timeout=10
    ) as pool:
        with pool.connection() as conn:
            pid = conn.info.backend_pid
            with psycopg.connect(postgres_url, connect_timeout=10, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pool.connection() as conn:  # the dead connection is found and replaced, not handed out
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid != pid


@pytest.mark.parametrize("required", [False, True])
def test_without_a_server_the_tests_skip_or_with_ci_fail_saying_why(tmp_path: Path, required: bool) -> None:
    (tmp_path / "conftest.py").write_text(
        "import pg_support\n"
        "pg_support.find_bin = lambda: None  # a machine without PostgreSQL\n"
        'pytest_plugins = ["pg_support"]\n'
    )
    (tmp_path / "test_needs_it.py").write_text("def test_it(postgres_url):\n    assert postgres_url\n")
    env = {k: v for k, v in os.environ.items() if k != "PRDIGEST_REQUIRE_POSTGRES"}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    if required:
        env["PRDIGEST_REQUIRE_POSTGRES"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert "PostgreSQL is not installed" in done.stdout, done.stdout + done.stderr
    if required:
        assert done.returncode == 1 and "1 error" in done.stdout
        assert "PRDIGEST_REQUIRE_POSTGRES=1" in done.stdout
    else:
        assert done.returncode == 0 and "1 skipped" in done.stdout
