"""git's output as prdigest reads it: a stream of records moved off the pipe as it comes, and a commit's
file changes from `--raw --numstat -z`."""

from __future__ import annotations

import os
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from prdigest.errors import SourceError
from prdigest.models import FileChange, FileStatus

# git's output read ahead of the parser, per git process: blocks of up to BLOCK bytes, AHEAD bytes in all.
# git runs on while the parser works, rather than waiting at every full pipe (a real history's walk, A/B:
# 5% faster than 1 MB ahead; 64 MB: 8%, but a 20,000-PR quarter's peak memory grows by 58 MB, 16 MB's by 20).
BLOCK = 1 << 20
AHEAD = 16 << 20


class Ahead:
    """The blocks of output the pump moved and the parser has not taken yet, at most AHEAD bytes of them
    (bounded by their size, not their number: the pipe gives blocks of a few KB as often as of a MB)."""

    def __init__(self) -> None:
        self._blocks: deque[bytes] = deque()
        self._size = 0
        self._changed = threading.Condition()

    def put(self, block: bytes) -> None:
        with self._changed:
            while self._size >= AHEAD:
                self._changed.wait()
            self._blocks.append(block)
            self._size += len(block)
            self._changed.notify_all()

    def get(self) -> bytes:
        """The next block (b"": the output ended), once the pump has moved one."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._blocks))
            return self._take()

    def drop(self, timeout: float) -> None:
        """Drop what the pump moved, waiting up to ``timeout`` seconds for a block: room for it to go on."""
        with self._changed:
            if self._changed.wait_for(lambda: bool(self._blocks), timeout):
                while self._blocks:
                    self._take()

    def _take(self) -> bytes:
        block = self._blocks.popleft()
        self._size -= len(block)
        self._changed.notify_all()
        return block


def pump(stream: IO[bytes], blocks: Ahead, ended: Callable[[], None] | None = None) -> None:
    """Move git's output into ``blocks`` as it comes, say it ``ended``, then put an empty block: git
    writes on while the commits already read are parsed and analysed (a pipe alone lets it run 64 KB
    ahead), and what follows its end is under way before the reader sees the end."""
    try:
        fd = stream.fileno()
        for block in iter(lambda: os.read(fd, BLOCK), b""):  # what the pipe holds, up to BLOCK
            blocks.put(block)
    except (OSError, ValueError):  # the reader closed the pipe: nothing more to move
        pass
    finally:
        try:
            if ended is not None:
                ended()
        finally:
            blocks.put(b"")


def stream_records(
    cmd: list[str], failed: str, env: dict[str, str] | None = None, ended: Callable[[], None] | None = None
) -> Iterator[str]:
    """The \x1e-started records of a command's output (git's, or a child of prdigest's that writes as git
    does), moved off its pipe as they come; a SourceError starting with ``failed`` when it fails. The
    command starts when the first record is asked for; ``ended`` is called once all its output is moved."""
    yield from Started(cmd, failed, env, ended).records()


class Started:
    """A command started now, its output moved off its pipe as it comes (up to AHEAD bytes ahead of the
    reader): `records` reads it, `close` ends it unread."""

    def __init__(
        self,
        cmd: list[str],
        failed: str,
        env: dict[str, str] | None = None,
        ended: Callable[[], None] | None = None,
    ) -> None:
        try:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        except FileNotFoundError:
            raise SourceError(f"{cmd[0]} is not installed (needed to read a local clone)") from None
        self.failed = failed
        self.blocks = Ahead()
        self._all_moved = threading.Event()
        self._ended_hook = ended
        self.mover = threading.Thread(
            target=pump, args=(self.proc.stdout, self.blocks, self._moved), name="prdigest-git", daemon=True
        )
        self.mover.start()
        self._ended = False

    def records(self) -> Iterator[str]:
        """The output's records; a SourceError when the command fails."""
        finished = False
        try:
            yield from records(iter(self.blocks.get, b""))
            finished = True
        finally:
            returncode, stderr = self._end(killed=not finished)
        if returncode != 0:
            raise SourceError(f"{self.failed}: {stderr.strip()}")

    def running(self) -> bool:
        """Whether the command may still write: its output is not all moved yet."""
        return not self._all_moved.is_set()

    def _moved(self) -> None:
        self._all_moved.set()
        if self._ended_hook is not None:
            self._ended_hook()

    def close(self) -> None:
        """End the command unread (nothing when it was read)."""
        if not self._ended:
            self._end(killed=True)

    def _end(self, killed: bool) -> tuple[int, str]:
        self._ended = True
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        if killed:
            proc.kill()  # the reader stopped early, or failed
            while self.mover.is_alive():  # let the pump read to the end of the killed process's output
                self.blocks.drop(timeout=0.05)
        self.mover.join(timeout=60)
        proc.stdout.close()
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        return proc.wait(timeout=60), stderr


class WalksAhead:
    """Walks a reader will ask for, started before it asks: a group at a time (a window's walks), the first
    at once, beside the walk of the window the reader reads first, each next one as soon as the walks
    before it have written all their output (`ended`), so that git works on while the reader parses,
    analyses and stores what it read (on a real history's cold week, git's walk of the four weeks before
    it takes longer than the reader's week). The read asking for a walk takes it (`take`); what no read
    took is ended when the block that asked for it ends."""

    def __init__(self, failed: str) -> None:
        self.failed = failed
        self._walks: dict[tuple[str, ...], Started | None] = {}  # None: not started yet
        self._groups: list[list[tuple[str, ...]]] = []  # those not started, in order
        self._writing: list[Started] = []  # the walks started ahead that may still write
        self._lock = threading.Lock()

    @contextmanager
    def asked(self, groups: list[list[list[str]]]) -> Iterator[None]:
        """Within the block, the commands of ``groups`` (each a list of commands) are read ahead; one that
        another block asked for already is left to it (it serves both)."""
        mine: list[tuple[str, ...]] = []
        with self._lock:
            for group in groups:
                keys = [tuple(cmd) for cmd in group if tuple(cmd) not in self._walks]
                self._walks.update(dict.fromkeys(keys))
                self._groups += [keys] if keys else []
                mine += keys
        self.ended()
        try:
            yield
        finally:
            with self._lock:
                left = [self._walks.pop(key) for key in mine if key in self._walks]
                self._groups = [[k for k in g if k in self._walks] for g in self._groups]
                self._groups = [g for g in self._groups if g]
            for walk in left:
                if walk is not None:
                    walk.close()

    def take(self, cmd: list[str]) -> Iterator[str] | None:
        """The records of ``cmd`` if it was asked for (started now if it was not yet), else None."""
        key = tuple(cmd)
        with self._lock:
            if key not in self._walks:
                return None
            group = next((g for g in self._groups if key in g), None)
            if group is not None:
                self._start(group)
            walk = self._walks.pop(key)
        assert walk is not None
        return walk.records()

    def ended(self) -> None:
        """A walk has written all its output, or a block has asked for walks: start the next group,
        unless a walk started ahead may still write (taken by the reader or not)."""
        with self._lock:
            self._writing = [walk for walk in self._writing if walk.running()]
            if self._groups and not self._writing:
                self._start(self._groups[0])

    def _start(self, group: list[tuple[str, ...]]) -> None:
        self._groups.remove(group)
        for key in group:
            self._walks[key] = walk = Started(list(key), self.failed, ended=self.ended)
            self._writing.append(walk)


def records(blocks: Iterator[bytes]) -> Iterator[str]:
    """The records of git's output, each from its \x1e on. A record starts a line (or follows the NUL
    that ends a record without a patch): an \x1e inside a line is a file's content, not a new record."""
    pending: list[bytes] = []
    last = b"\n"  # the byte before the data read so far
    for block in blocks:
        pieces = block.split(b"\x1e")
        pending.append(pieces[0])
        last = pieces[0][-1:] or last
        for piece in pieces[1:]:
            if last in (b"\n", b"\0"):
                record = b"".join(pending)
                if record:
                    yield record.decode("utf-8", errors="replace")
                pending = [b"\x1e" + piece]
            else:
                pending.append(b"\x1e" + piece)
            last = piece[-1:] or b"\x1e"
    record = b"".join(pending)
    if record:
        yield record.decode("utf-8", errors="replace")


_STATUS: dict[str, FileStatus] = {
    "A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "modified"
}  # fmt: skip
_NO_BLOB = "0" * 40


@dataclass
class BlobIds:
    """A file's blob ids before and after its commit (None: absent on that side)."""

    before: str | None
    after: str | None


@dataclass
class RawEntry:
    """One file of a commit's `--raw -z` output."""

    path: str  # its path after
    status: FileStatus
    previous: str | None  # its path before a rename or copy
    blobs: BlobIds
    type_changed: bool  # a file become a link (or back): its patch is two sections, a removal and an add


def raw_entry(tokens: list[str], i: int) -> tuple[RawEntry, int]:
    """The raw entry whose ":" metadata is ``tokens[i]``, and the index after its paths."""
    _, _, before, after, letters = tokens[i].lstrip("\n").split()
    letter = letters[0]
    ids = BlobIds(*(None if oid == _NO_BLOB else oid for oid in (before, after)))
    if letter in "RC":
        return RawEntry(tokens[i + 2], _STATUS[letter], tokens[i + 1], ids, False), i + 3
    return RawEntry(tokens[i + 1], _STATUS.get(letter, "modified"), None, ids, letter == "T"), i + 2


def raw_entries(tokens: list[str]) -> list[RawEntry]:
    """The raw entries among ``tokens`` (a `--raw -z` walk's, from the first after the header)."""
    entries = []
    i = 0
    while i < len(tokens):
        if tokens[i].lstrip("\n").startswith(":"):
            entry, i = raw_entry(tokens, i)
            entries.append(entry)
        else:
            i += 1
    return entries


def numstat_changes(tokens: list[str]) -> tuple[list[FileChange], dict[str, BlobIds]]:
    """Parse `--raw --no-abbrev --numstat -z` output: raw entries give the status and the blob ids (by path
    after), numstat the line counts."""
    status: dict[str, RawEntry] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}
    order: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        if not token:
            i += 1
            continue
        if token.startswith(":"):
            entry, i = raw_entry(tokens, i)
            status[entry.path] = entry
            continue
        added, deleted, path = token.split("\t", 2)
        if not path:  # a rename: the old and the new path follow
            path = tokens[i + 2]
            i += 3
        else:
            i += 1
        counts[path] = (None, None) if added == "-" else (int(added), int(deleted))
        order.append(path)
    files = []
    for path in order:
        raw = status.get(path)
        files.append(
            FileChange(
                path=path,
                additions=counts[path][0],
                deletions=counts[path][1],
                status=raw.status if raw else "modified",
                previous_path=raw.previous if raw else None,
            )
        )
    return files, {path: entry.blobs for path, entry in status.items()}
