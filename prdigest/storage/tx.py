"""One read or transaction of the store, the same methods over SQLite and PostgreSQL.

The modules of ``storage/`` write their SQL once, with ``?`` placeholders and the syntax both databases
share (``INSERT … ON CONFLICT … DO UPDATE``, ``RETURNING``, double-quoted names); what differs (JSON
functions, full-text search, locks) is a method of the dialect's handle. Portable SQL holds no literal
``?``: PostgreSQL's handle reads every one as a placeholder.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Tx(ABC):
    dialect: ClassVar[str]
    # Appended to a select whose rows the transaction goes on to change: PostgreSQL locks them, SQLite's
    # write transaction holds the whole file already.
    for_update: ClassVar[str] = ""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[Any] | None) -> Any:
        """A DB-API cursor after running ``sql``."""

    @abstractmethod
    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """``sql`` once per parameter row."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self._execute(sql, params)
        if cursor.description is None:
            return []
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; the number of rows it changed."""
        return int(self._execute(sql, params).rowcount)

    def insert(self, table: str, row: Mapping[str, Any], *, ignore: bool = False) -> int:
        """Insert one row (``ignore``: nothing when its key is taken); the number of rows inserted."""
        sql = _insert_sql(table, list(row)) + (" on conflict do nothing" if ignore else "")
        return self.run(sql, list(row.values()))

    def insert_id(self, table: str, row: Mapping[str, Any]) -> int:
        """Insert one row into a table keyed by an ``id`` the database numbers; that id."""
        found = self.one(_insert_sql(table, list(row)) + " returning id", list(row.values()))
        if found is None:
            raise RuntimeError(f"the {table} table gave no id for the new row")
        return int(found["id"])

    def upsert(self, table: str, rows: Sequence[Mapping[str, Any]], pk: Sequence[str]) -> None:
        """Insert ``rows``, or update the columns they name where their key is taken (rows of one shape)."""
        if not rows:
            return
        columns = list(rows[0])
        changed = [c for c in columns if c not in pk]
        conflict = f" on conflict ({', '.join(map(quoted, pk))}) do " + (
            "update set " + ", ".join(f"{quoted(c)} = excluded.{quoted(c)}" for c in changed)
            if changed
            else "nothing"
        )
        self.run_many(_insert_sql(table, columns) + conflict, [[row[c] for c in columns] for row in rows])

    def update(self, table: str, key: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        sets = ", ".join(f"{quoted(c)} = ?" for c in values)
        where = " and ".join(f"{quoted(c)} = ?" for c in key)
        return self.run(f"update {quoted(table)} set {sets} where {where}", [*values.values(), *key.values()])

    def count(self, table: str, where: str = "", params: Sequence[Any] = ()) -> int:
        sql = f"select count(*) as n from {quoted(table)}" + (f" where {where}" if where else "")
        found = self.one(sql, params)
        return int(found["n"]) if found else 0

    # --- what the dialects spell differently ------------------------------------

    @abstractmethod
    def json_int(self, column: str, field: str) -> str:
        """SQL for a JSON column's top-level integer ``field``."""

    @abstractmethod
    def json_known(self, column: str, field: str) -> str:
        """SQL, per row, true (1) when the JSON column's ``field`` is present and not null: ``max()`` of it
        says whether any row has it."""

    @abstractmethod
    def json_without(self, column: str, field: str) -> str:
        """SQL for the JSON column's text without its top-level ``field``."""

    @abstractmethod
    def match_prs(self, words: Sequence[str], repo: str | None, limit: int) -> list[str]:
        """The ``data`` of the PRs whose title, body, paths or summary hold any of ``words`` (as a word or
        the start of one), best first: a title match ranks highest."""

    @abstractmethod
    def lock(self, name: str) -> None:
        """Serialise this transaction with every other that takes the lock ``name``, until it ends."""


def _insert_sql(table: str, columns: list[str]) -> str:
    names = ", ".join(map(quoted, columns))
    return f"insert into {quoted(table)} ({names}) values ({', '.join('?' * len(columns))})"


# bm25 weights of the index's columns (title, body, paths, summary): a word in the title counts most.
_RANK = "bm25(prs_fts, 5.0, 1.0, 2.0, 3.0)"


class SqliteTx(Tx):
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def _execute(self, sql: str, params: Sequence[Any] | None) -> sqlite3.Cursor:
        return self.conn.execute(sql, params or ())

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def json_int(self, column: str, field: str) -> str:
        return f"json_extract({column}, '$.{field}')"

    def json_known(self, column: str, field: str) -> str:
        return f"(json_type({column}, '$.{field}') <> 'null')"

    def json_without(self, column: str, field: str) -> str:
        return f"json_remove({column}, '$.{field}')"

    def match_prs(self, words: Sequence[str], repo: str | None, limit: int) -> list[str]:
        fts = " OR ".join(_phrase(w) + "*" for w in words)
        sql = (
            "select prs.data from prs join prs_fts on prs_fts.rowid = prs.rowid where prs_fts match ?"
            + (" and prs.repo = ?" if repo else "")
            + f" order by {_RANK}, prs.merged_at desc limit ?"
        )
        params = [fts, *([repo] if repo else []), limit]
        return [row["data"] for row in self.rows(sql, params)]

    def lock(self, name: str) -> None:
        """Nothing: a SQLite write transaction (BEGIN IMMEDIATE) holds the whole file."""


def _phrase(word: str) -> str:
    """One word as an FTS5 string: a quote inside it is doubled, so no word is read as query syntax."""
    return '"' + word.replace('"', '""') + '"'
