"""One process at a time sets a database file up: WAL mode and the migrations.

Processes that share one file (`serve`, a `deliver` beside it, a `report`) open it at the same moment
after an install or an upgrade; two that set it up at once fail ("database is locked", or a table
created twice): the migrations commit inside their steps (sqlite-utils' full-text index), so a SQLite
transaction cannot hold them together. A lock on a file beside the database does, for the moment the
setup takes; using the database needs none (SQLite's own locks, WAL and the busy timeout).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prdigest.errors import StorageError

WAIT_S = 30.0  # as long as a write waits for SQLite's lock (the connection's busy timeout)


@contextmanager
def setup_lock(path: Path, wait: float = WAIT_S) -> Iterator[None]:
    """Held while this process sets up the database at ``path``; StorageError, naming the database and
    the process that holds it (its id is written in the lock file), when it is held for longer than
    ``wait`` seconds."""
    lock = path.with_name(f"{path.name}.setup-lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                    raise StorageError(
                        f"cannot open the database {path}: process {holder} has been setting it up for "
                        f"{wait:.0f} s (its lock: {lock})"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock
