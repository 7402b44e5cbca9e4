"""Files of a clone at given commits, through one `git cat-file --batch` process: the texts the options a
PR changed are read from (sources/options/reader.py)."""

from __future__ import annotations

import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

from prdigest.errors import SourceError
from prdigest.sources.options import MAX_BLOB
from prdigest.sources.options.reader import OptionReader

# Memory of the texts kept by blob id (a file's text after one commit is its text before the next): the
# hot files of a long history come back within a few hundred commits.
KEPT_BYTES = 8 << 20


class Blobs(OptionReader):
    """``git cat-file --batch`` in ``path``, started on first use and ended by `close`."""

    def __init__(self, path: Path, config: tuple[str, ...] = ()):
        super().__init__()
        self.path = path
        self.config = config  # ``-c`` options, such as the log walks' bounds on mapped packs
        self._proc: subprocess.Popen[bytes] | None = None
        self._ids: dict[str, str] = {}
        self._texts: OrderedDict[str, str | None] = OrderedDict()
        self._kept = 0

    def expect(self, ids: dict[str, str]) -> None:
        """The blobs the next reads name (``<commit>:<path>``: its blob id), as the walk gave them: a text
        already read under its id is not read again."""
        self._ids = ids

    def prefetch(self, specs: list[str]) -> None:
        """The texts of the walk's blobs among ``specs`` not kept yet, asked for in one write: git answers
        them in order while none waits on a round trip of its own (a commit asks for at most 80: the
        requests fit the pipe, so neither side blocks on the other)."""
        wanted = list(
            dict.fromkeys(oid for spec in specs if (oid := self._ids.get(spec)) and oid not in self._texts)
        )
        if not wanted:
            return
        self._ask(wanted)
        for oid in wanted:
            found = self._answer()
            self._keep(oid, found[1] if found is not None else None)

    def text(self, spec: str) -> tuple[str, str] | None:
        oid = self._ids.get(spec)
        if oid is None:  # not one of the walk's blobs: asked for by name
            return self._read(spec)
        self.prefetch([spec])  # read once, then kept by its id
        self._texts.move_to_end(oid)
        content = self._texts[oid]
        return None if content is None else (oid, content)

    def _keep(self, oid: str, content: str | None) -> None:
        self._texts[oid] = content
        self._kept += sys.getsizeof(content)
        while self._kept > KEPT_BYTES and len(self._texts) > 1:
            self._kept -= sys.getsizeof(self._texts.popitem(last=False)[1])

    def _read(self, spec: str) -> tuple[str, str] | None:
        self._ask([spec])
        return self._answer()

    def _ask(self, requests: list[str]) -> None:
        """Write ``requests`` to git in one go; their answers are read in order."""
        proc = self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write("".join(f"{request}\n" for request in requests).encode())
            proc.stdin.flush()
        except OSError as exc:
            raise SourceError(f"git cat-file failed in {self.path}: {exc}") from None

    def _answer(self) -> tuple[str, str] | None:
        """git's answer to the next request: (blob id, text), or None (missing, not a blob, too large)."""
        found = self._content()
        if found is None or found[1] != "blob" or len(found[2]) > MAX_BLOB:
            return None
        return found[0], found[2].decode("utf-8", errors="replace")

    def _content(self) -> tuple[str, str, bytes] | None:
        """(object id, kind, content) of git's answer to the next request; None: missing or ambiguous."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            header = stdout.readline().decode(errors="replace").split()
            if len(header) != 3:  # "<spec> missing", "<spec> ambiguous"
                return None
            size = int(header[2])
            return header[0], header[1], stdout.read(size + 1)[:size]  # the content, then a newline
        except OSError as exc:
            raise SourceError(f"git cat-file failed in {self.path}: {exc}") from None

    def binary(self, oid: str) -> bool:
        """Whether git deems the blob binary: a NUL among its first 8,000 bytes (`buffer_is_binary`)."""
        self._ask([oid])
        found = self._content()
        return found is not None and found[1] == "blob" and b"\0" in found[2][:8000]

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    ["git", *self.config, "-C", str(self.path), "cat-file", "--batch"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            except FileNotFoundError:
                raise SourceError("git is not installed (needed to read a local clone)") from None
        return self._proc

    def close(self) -> None:
        if self._proc is not None:
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
            self._proc.kill()
            self._proc.wait(timeout=10)
            self._proc = None
