"""Files of a clone at given commits, through one `git cat-file --batch` process: the texts the options a
PR changed are read from (sources/options), each file's options kept by its blob id, so a file the
window's PRs leave alone is read once."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from prdigest.errors import SourceError
from prdigest.models import FileChange, OptionChanges
from prdigest.sources.options import MAX_BLOB, MAX_FILES, Sides, is_definition, option_changes, options_of

KEPT = 20_000  # blob ids whose options are remembered


class Blobs:
    """``git cat-file --batch`` in ``path``, started on first use and ended by `close`."""

    def __init__(self, path: Path):
        self.path = path
        self._proc: subprocess.Popen[bytes] | None = None
        self._options: dict[tuple[str, str], dict[str, str]] = {}

    def text(self, spec: str) -> tuple[str, str] | None:
        """(blob id, text) of ``<commit>:<path>``; None when it is absent, not a file or too large."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(spec.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().decode(errors="replace").split()
        except OSError as exc:
            raise SourceError(f"git cat-file failed in {self.path}: {exc}") from None
        if len(header) != 3:  # "<spec> missing", "<spec> ambiguous"
            return None
        oid, kind, size = header[0], header[1], int(header[2])
        content = proc.stdout.read(size + 1)[:size]  # the content, then a newline
        if kind != "blob" or size > MAX_BLOB:
            return None
        return oid, content.decode("utf-8", errors="replace")

    def options(self, commit: str, path: str) -> dict[str, str] | None:
        """The options ``path`` exposes at ``commit``; None when it is not there."""
        found = self.text(f"{commit}:{path}")
        if found is None:
            return None
        key = (found[0], path)
        if key not in self._options:
            if len(self._options) >= KEPT:
                self._options.clear()
            self._options[key] = options_of(path, found[1])
        return self._options[key]

    def changes(
        self, commit: str, parent: str | None, files: Iterable[FileChange], defining: set[str]
    ) -> OptionChanges:
        """What the commit changed of the options its definition files expose; ``defining``: the files
        whose removed lines could define one (`defining_files`). Only those are read, unless they lose an
        option: then the commit's other definition files too, where it may have gone."""
        definitions = [f for f in files if is_definition(f.path) or is_definition(f.previous_path or "")]
        first = [f for f in definitions if f.path in defining or f.status == "removed"][:MAX_FILES]
        sides = [self._sides(commit, parent, f) for f in first]
        found = option_changes(sides)
        if found.removed:
            rest = [f for f in definitions if f not in first and f.status != "removed"]
            found = option_changes(
                [*sides, *(self._sides(commit, None, f) for f in rest[: MAX_FILES - len(first)])]
            )
        return found

    def _sides(self, commit: str, parent: str | None, f: FileChange) -> Sides:
        """(path before, path after, options before, options after) of one file; ``parent`` None: its
        options after alone (where a removed option may have gone)."""
        old_path = f.previous_path or f.path
        before = self.options(parent, old_path) if parent and f.status != "added" else None
        after = self.options(commit, f.path) if f.status != "removed" else None
        return old_path, f.path, before, after

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    ["git", "-C", str(self.path), "cat-file", "--batch"],
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


# A removed line that could define an option: a flag, an environment read, a function or class, a field
# ("    lr: float = 1e-3"); a line of a config file always could.
_DEFINING = re.compile(
    r"add_argument|option\s*\(|Option\s*\(|Argument\s*\(|environ|getenv"
    r"|^-\s*(?:async\s+)?(?:def|class)\s|^-[ \t]+[A-Za-z_]\w*\s*:\s*[A-Za-z_\[\"'(]"
)


def defining_files(patch: str) -> set[str]:
    """The files of a commit's patch whose removed lines could define an option: a commit that only
    adds options, or changes code around them, changes none of them (its files are not read)."""
    found: set[str] = set()
    path = ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            new = line[4:].strip()
            path = new.removeprefix("b/") if new != "/dev/null" else path
        elif line.startswith("--- "):
            old = line[4:].strip()
            path = old.removeprefix("a/") if old != "/dev/null" else ""
        elif (
            line.startswith("-") and path and path not in found
            and (not path.endswith(".py") or _DEFINING.search(line))
        ):  # fmt: skip
            found.add(path)
    return found
