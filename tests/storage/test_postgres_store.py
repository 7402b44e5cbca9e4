"""Opening the PostgreSQL store: its migrations, replicas that start at once, and what a user is told when
it cannot be opened."""

from __future__ import annotations

import sys
import threading

import pytest

from prdigest.config.storage_url import parse_store_url
from prdigest.errors import StorageError
from prdigest.storage import Store
from prdigest.storage.pg_migrations import PG_MIGRATIONS


def test_migrations_are_recorded_once_and_replicas_starting_at_once_both_open(pg_database: str) -> None:
    url = parse_store_url(pg_database)
    opened: list[Store] = []
    failed: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(Store(url))
        except BaseException as exc:  # pragma: no cover - the assertion below names it
            failed.append(exc)

    threads = [threading.Thread(target=open_one, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    try:
        assert not failed and len(opened) == 3
        names = [fn.__name__ for fn in PG_MIGRATIONS]
        assert all(store.schema_versions() == names for store in opened)
        assert opened[0].dialect == "postgresql"
        assert opened[0].integrity()["journal_mode"] == "postgresql"
    finally:
        for store in opened:
            store.close()
    again = Store(url)  # reopening applies nothing twice
    try:
        assert again.schema_versions() == [fn.__name__ for fn in PG_MIGRATIONS]
    finally:
        again.close()


def test_without_the_postgres_extra_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed: the import fails
    with pytest.raises(StorageError, match=r"needs the postgres extra: pip install 'prdigest\[postgres\]'"):
        Store(parse_store_url("postgresql://prdigest@127.0.0.1:5432/digest"))


def test_a_server_that_refuses_is_one_error_naming_the_store_not_the_password(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import SecretStr

    missing = parse_store_url(postgres_url.rsplit("/", 1)[0] + "/no_such_database")
    with pytest.raises(StorageError) as refused:
        Store(missing, SecretStr("s3cret-pw"))
    said = str(refused.value)
    assert said.startswith("cannot open the database postgresql postgres@127.0.0.1:")
    assert "no_such_database" in said and "s3cret-pw" not in said and "\n" not in said


def test_a_nul_in_a_pr_is_kept_where_postgresql_can_hold_it(pg_database: str) -> None:
    from datetime import UTC, datetime

    from prdigest.models import PullRequest, Window

    store = Store(parse_store_url(pg_database))
    try:
        pr = PullRequest(
            repo="acme/x", number=1, sha="a" * 40, title="nul\x00 in the title", body="body\x00",
            author="alice", merged_at=datetime(2026, 9, 8, 2, tzinfo=UTC), diff_excerpt="+x\x00",
        )  # fmt: skip
        store.upsert_prs([pr])
        assert store.get_pr("acme/x", 1) == pr  # the JSON copy is whole
        week = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
        [light] = store.prs_in_window("acme/x", week, excerpts=False)
        assert light.title == pr.title
        assert [p.number for p in store.search_prs(["title"], "acme/x")] == [1]
    finally:
        store.close()


def test_a_connection_is_checked_before_a_loan_only_after_lying_idle(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's reads follow one another closely: a check (a round trip) before each would double
    them. A connection idle past the window is checked, and one the server closed is replaced."""
    import psycopg
    from psycopg_pool import ConnectionPool

    from prdigest.storage import postgres

    checks: list[int] = []
    real_check = ConnectionPool.check_connection
    monkeypatch.setattr(ConnectionPool, "check_connection", lambda conn: checks.append(1) or real_check(conn))
    store = Store(parse_store_url(pg_database), connections=3)
    try:
        assert store._backend.pool.max_size == 3  # type: ignore[union-attr]
        for _ in range(5):
            assert store.schema_versions()
        assert len(checks) <= 1  # the first loan, perhaps: the pool's first connection was made earlier
        checked = len(checks)
        with store.reading() as tx:
            pid = tx.one("select pg_backend_pid() as pid")["pid"]  # type: ignore[index]
        with psycopg.connect(pg_database, autocommit=True, connect_timeout=10) as admin:
            admin.execute("select pg_terminate_backend(%s)", (pid,))
        monkeypatch.setattr(postgres, "RECHECK_IDLE_S", 0.0)  # as if it lay idle past the window
        with store.reading() as tx:
            assert tx.one("select pg_backend_pid() as pid")["pid"] != pid  # type: ignore[index]
        assert len(checks) > checked
    finally:
        store.close()
