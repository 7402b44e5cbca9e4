"""The store on one SQLite file (the default): one connection shared by the process's threads.

It is opened with ``check_same_thread=False`` and every use holds one lock: the bot's threads (chat
workers, the scheduler) take turns on it. Several processes share the file through SQLite's own locks.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from sqlite_utils import Database

from prdigest.errors import StorageError
from prdigest.storage.migrations import migrate
from prdigest.storage.setup_lock import setup_lock
from prdigest.storage.tx import SqliteTx


class SqliteBackend:
    dialect = SqliteTx.dialect

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.describe = str(path)
        self._lock = threading.RLock()
        in_memory = str(path) == ":memory:"
        try:
            if not in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with nullcontext() if in_memory else setup_lock(self.path):
                self.conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
                db = Database(self.conn)
                if not in_memory:
                    db.enable_wal()
                migrate(db)
                self.journal_mode = db.journal_mode
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StorageError(f"cannot open the database {path}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    @contextmanager
    def reading(self) -> Iterator[SqliteTx]:
        with self._lock:
            try:
                yield SqliteTx(self.conn)
            except sqlite3.DatabaseError as exc:
                raise StorageError(f"database {self.path}: {exc}") from None

    @contextmanager
    def writing(self, durable: bool = True) -> Iterator[SqliteTx]:
        """A write transaction that takes SQLite's write lock at its start (BEGIN IMMEDIATE).

        A plain BEGIN that reads and then writes cannot wait for another process's write: SQLite
        fails it at once with "database is locked". Several processes (replicas, a `deliver`
        beside `serve`) share one file, so every write starts immediate and waits its turn.

        ``durable=False`` commits without the fsync (WAL with synchronous=NORMAL, for this commit
        alone): it survives a crash of the process, not of the OS.
        """
        with self.reading() as tx:
            conn = tx.conn
            if conn.in_transaction:  # within another write: a savepoint of it
                conn.execute("savepoint nested")
                try:
                    yield tx
                except BaseException:
                    conn.execute("rollback to nested")
                    conn.execute("release nested")
                    raise
                conn.execute("release nested")
                return
            previous = None if durable else conn.execute("pragma synchronous").fetchone()[0]
            if previous is not None:  # the pragma cannot change inside a transaction
                conn.execute("pragma synchronous = normal")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield tx
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
            finally:
                if previous is not None:
                    conn.execute(f"pragma synchronous = {int(previous)}")

    def probe_write(self, wait_ms: int) -> None:
        """Begin a write transaction, waiting at most ``wait_ms`` for the file's lock, and roll it back."""
        with self._lock:
            (before,) = self.conn.execute("PRAGMA busy_timeout").fetchone()
            self.conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.rollback()
            finally:
                self.conn.execute(f"PRAGMA busy_timeout = {int(before)}")
