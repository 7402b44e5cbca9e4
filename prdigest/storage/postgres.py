"""The store on PostgreSQL ([storage] url = postgresql://…): the shared store of several machines.

psycopg 3 through a ``psycopg_pool`` pool (the ``postgres`` extra) that checks a connection before handing
it out. A thread keeps one connection for as long as it reads or writes (a write inside a read reuses it);
connections are in autocommit, so a read is one statement and a write one explicit transaction.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from prdigest.config.storage_url import StoreUrl
from prdigest.errors import StorageError
from prdigest.storage.pg_migrations import pg_migrate
from prdigest.storage.tx import Tx

if TYPE_CHECKING:
    import psycopg

# A pooled connection idle longer than this is checked (an empty query) before it is lent: the server may
# have closed it (restarted, idle timeout). Checking every loan would double a worker's round trips.
RECHECK_IDLE_S = 5.0
CONNECT_S = 10.0  # how long opening the store waits for its first connection
# PostgreSQL's text holds no NUL character; PR text may (the JSON columns escape it as \u0000).
_NUL = "\x00"
_WORD = re.compile(r"\w+")


def _clean(value: Any) -> Any:
    return value.replace(_NUL, "\ufffd") if isinstance(value, str) and _NUL in value else value


def _json(column: str) -> str:
    """A JSON text column as json whose fields can be read: PostgreSQL refuses to read any field of a
    document holding the escape \u0000 (a NUL in a PR's text), so it becomes \ufffd first (still JSON,
    whatever precedes it)."""
    return f"replace({column}, '\\u0000', '\\ufffd')::json"


def _native(sql: str) -> str:
    """Portable SQL (``?`` placeholders) in psycopg's (``%s``; a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgTx(Tx):
    dialect = "postgresql"
    for_update = " for update"

    def __init__(self, conn: psycopg.Connection[Any]):
        self.conn = conn

    def _execute(self, sql: str, params: Sequence[Any] | None) -> Any:
        if not params:
            return self.conn.execute(sql.encode())  # no placeholders to read: `%` stays as written
        return self.conn.execute(_native(sql).encode(), [_clean(p) for p in params])

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_native(sql).encode(), [[_clean(p) for p in row] for row in rows])

    def json_int(self, column: str, field: str) -> str:
        return f"({_json(column)} ->> '{field}')::bigint"

    def json_known(self, column: str, field: str) -> str:
        return f"(case when json_typeof({_json(column)} -> '{field}') <> 'null' then 1 else 0 end)"

    def json_without(self, column: str, field: str) -> str:
        # jsonb can remove a key but refuses \u0000: such a row keeps the field.
        return (
            f"(case when strpos({column}, '\\u0000') = 0 then ({column}::jsonb - '{field}')::text "
            f"else {column} end)"
        )

    def match_prs(self, words: Sequence[str], repo: str | None, limit: int) -> list[str]:
        # Each word as a quoted prefix lexeme; what is not a word character is no query syntax.
        terms = [t for w in words for t in _WORD.findall(w)]
        if not terms:
            return []
        query = " | ".join("'" + t.replace("'", "''") + "':*" for t in dict.fromkeys(terms))
        sql = (
            "select data from prs where fts @@ to_tsquery('english', ?)"
            + (" and repo = ?" if repo else "")
            + " order by ts_rank('{0.1, 0.2, 0.6, 1.0}', fts, to_tsquery('english', ?)) desc, "
            "merged_at desc limit ?"
        )
        params = [query, *([repo] if repo else []), query, limit]
        return [row["data"] for row in self.rows(sql, params)]

    def lock(self, name: str) -> None:
        self.run("select pg_advisory_xact_lock(hashtextextended(?, 0))", [name])


class PostgresBackend:
    dialect = PgTx.dialect

    def __init__(self, url: StoreUrl, password: SecretStr | None, connections: int):
        self.describe = url.describe()
        self.journal_mode = "postgresql"
        try:
            import psycopg
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError:
            raise StorageError(
                f"[storage] url names {self.describe}, and PostgreSQL needs the postgres extra: "
                "pip install 'prdigest[postgres]'"
            ) from None
        self._errors: tuple[type[Exception], ...] = (psycopg.Error,)
        self._local = threading.local()
        self._idle_since: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        kwargs = {**url.connect_kwargs(password), "autocommit": True, "connect_timeout": int(CONNECT_S)}
        # One connection first: a server that cannot be reached is one clear error at once (the pool
        # would retry in the background), and the schema is brought up to date on it.
        try:
            with psycopg.connect(**kwargs) as conn:
                tx = PgTx(conn)
                with conn.transaction():
                    pg_migrate(tx)
        except psycopg.Error as exc:
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StorageError(f"cannot open the database {self.describe}: {said}") from None
        self.pool: Any = ConnectionPool(
            kwargs=kwargs, min_size=1, max_size=connections, open=False, name="prdigest",
            check=self._check_if_idle, reset=self._returned, configure=self._returned, timeout=CONNECT_S,
        )  # fmt: skip
        try:
            self.pool.open(wait=True, timeout=CONNECT_S)
        except PoolTimeout:
            self.pool.close()
            raise StorageError(
                f"cannot reach the database {self.describe} within {CONNECT_S:.0f} s"
            ) from None

    def close(self) -> None:
        self.pool.close()

    def _returned(self, conn: Any) -> None:  # also when made: a new connection is idle from then
        self._idle_since[conn] = time.monotonic()

    def _check_if_idle(self, conn: Any) -> None:
        if time.monotonic() - self._idle_since.get(conn, 0.0) > RECHECK_IDLE_S:
            type(self.pool).check_connection(conn)

    @contextmanager
    def reading(self) -> Iterator[PgTx]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield PgTx(held)
            return
        try:
            with self.pool.connection() as conn:
                self._local.conn = conn
                try:
                    yield PgTx(conn)
                finally:
                    self._local.conn = None
        except self._errors as exc:
            raise StorageError(f"database {self.describe}: {exc}") from None

    @contextmanager
    def writing(self, durable: bool = True) -> Iterator[PgTx]:
        """A transaction (a savepoint within another); ``durable=False`` commits without waiting for
        the WAL's flush (``synchronous_commit = off``): a crash of the server may lose it, not a crash
        of this process."""
        with self.reading() as tx, tx.conn.transaction():
            if not durable:
                tx.run("set local synchronous_commit = off")
            yield tx

    def probe_write(self, wait_ms: int) -> None:
        """A transaction that takes a write's transaction id, waiting at most ``wait_ms``, rolled back:
        the server answers and is no read-only replica."""
        with self.reading() as tx, tx.conn.transaction(force_rollback=True):
            tx.run(f"set local statement_timeout = {int(wait_ms)}")
            tx.run("select txid_current()")
