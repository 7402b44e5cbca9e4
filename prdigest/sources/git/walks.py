"""The `git log --first-parent` walks a clone is read with, and those started ahead of their reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import cached_property
from itertools import zip_longest
from pathlib import Path

from prdigest.errors import SourceError
from prdigest.sources.diffs import excerpt, file_sections
from prdigest.sources.git.blobs import Blobs
from prdigest.sources.git.commits import FORMAT, Commit, header
from prdigest.sources.git.hunks import narrowed, patch_changes
from prdigest.sources.git.output import WalksAhead, numstat_changes, raw_entries, stream_records
from prdigest.sources.options.patch import Touched, defining_files

# git keeps up to 96 MB of delta bases per process by default: a walk over tens of thousands of commits
# reaches it. A walk gets 32 MB: on trl's history 16 MB cost a walk half as much CPU again (2.2 s against
# 1.5 s at the default), 32 MB a fifth (1.8 s); the blob reader, which reads each text once, keeps 16 MB.
# git also maps the pack in windows of up to 1 GB that stay resident as the walk touches them (a
# 20,000-commit walk: 76 MB per process; 4 MB windows, at most 16 MB mapped: 47 MB, no slower).
CONFIG = (
    *("-c", "core.deltaBaseCacheLimit=16m"),
    *("-c", "core.packedGitWindowSize=4m", "-c", "core.packedGitLimit=16m"),
)
WALK_CONFIG = (*CONFIG, "-c", "core.deltaBaseCacheLimit=32m")  # the last -c of a key wins


class Walks:
    """A clone's walks of ``ref``; ``git`` runs a one-off git command in it (its output, "" on failure
    with ``check=False``)."""

    def __init__(self, path: Path, ref: str, git: Callable[..., str]):
        self.path = path
        self.ref = ref
        self._git = git
        self._ahead = WalksAhead(f"git log failed in {path}")  # the walks read ahead

    def ahead(
        self, whole: list[tuple[str, ...]], counted: list[tuple[str, ...]]
    ) -> AbstractContextManager[object]:
        """Start the walks of `commits` for each of ``whole``'s filters, and of `changes` for ``counted``'s,
        the first at once, each next one as the walks before it end (`WalksAhead`)."""
        whole_walks = [self._walks(*filters) for filters in whole]
        counted_walks = [[self._changes_args(*filters)] for filters in counted]
        return self._ahead.asked([[self._cmd(*a) for a in g] for g in [*whole_walks, *counted_walks]])

    def log(self, *args: str) -> Iterator[str]:
        """Stream `git log --first-parent` output, one \x1e-started record at a time."""
        cmd = self._cmd(*args)
        return self._ahead.take(cmd) or stream_records(cmd, self._ahead.failed, ended=self._ahead.ended)

    def _walks(self, *filters: str) -> list[tuple[str, ...]]:
        """The walks `commits` reads: one, or two where a diff driver may name the hunks' functions."""
        if self._drivers:
            return [self._changes_args(*filters), self._excerpts_args(*filters)]
        return [self._patch_args(*filters)]

    def _changes_args(self, *filters: str) -> tuple[str, ...]:
        return (f"--format={FORMAT}", "--raw", "--no-abbrev", "--numstat", "-z", "-M", *filters, self.ref)

    def _excerpts_args(self, *filters: str) -> tuple[str, ...]:
        return ("--format=%x1e%H", "-p", "-U0", "--no-color", "--no-ext-diff", "-M", *filters, self.ref)

    def _patch_args(self, *filters: str) -> tuple[str, ...]:
        return (
            f"--format={FORMAT}",
            *("--raw", "--no-abbrev", "-z", "-p", "-U1", "--no-color", "--no-ext-diff", "-M"),
            *filters,
            self.ref,
        )

    def _cmd(self, *args: str) -> list[str]:
        return [
            "git",
            *WALK_CONFIG,
            "-C",
            str(self.path),
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            *args,
        ]

    def commits(self, blobs: Blobs, *filters: str) -> Iterator[tuple[Commit, str]]:
        """Each first-parent commit with its files and its diff excerpt.

        One walk gives each file's status and blob ids (`--raw`) and a `-U1` patch: its line counts are
        `--numstat`'s, and it is read as `-U0` for the excerpt (`hunks`; git trims a file's unchanged tail
        before it diffs without context, which on real histories aligns about one commit in a hundred
        differently from the counts every other reader of the repository sees). Where a diff driver may
        name the hunks' functions, which `hunks` cannot tell, two walks run side by side and are read in
        step: one for the raw entries and `--numstat`, the other for the `-U0` patch."""
        if self._drivers:
            yield from self._two_walks(*filters)
            return
        for chunk in self.log(*self._patch_args(*filters)):
            head, _, rest = chunk.partition("\0")
            commit = header(head)
            tokens = rest.split("\0")
            last = tokens[-1].lstrip("\n")  # the patch, after the raw entries (none: a commit of no file)
            patch = last if last.startswith("diff --git") else ""
            sections = file_sections(patch)
            entries = raw_entries(tokens)
            files = patch_changes(entries, sections, blobs.binary)
            if files is None:
                raise SourceError(f"git log gave a patch unlike its files for {commit.sha} in {self.path}")
            commit.files, commit.blobs = files, {e.path: e.blobs for e in entries}
            narrow = "\n".join(narrowed(section) for section in sections)
            commit.defining = defining_files(narrow)
            yield commit, excerpt(narrow)

    def _two_walks(self, *filters: str) -> Iterator[tuple[Commit, str]]:
        for commit, excerpted in zip_longest(self.changes(*filters), self._excerpts(*filters)):
            if commit is None or excerpted is None or excerpted[0] != commit.sha:
                raise SourceError(f"git log gave two different histories of {self.path}: read it again")
            commit.defining = excerpted[2]
            yield commit, excerpted[1]

    @cached_property
    def _drivers(self) -> bool:
        """Whether a diff driver may name the hunks' functions (or convert a file's text, which `--numstat`
        would not count): a `diff.<driver>.(x)funcname` setting, or a `diff=<driver>` attribute on a file
        of the branch (files it no longer has are not asked about)."""
        if self._git("config", "--get-regexp", r"^diff\..*funcname$", check=False).strip():
            return True
        paths = self._git("ls-tree", "-r", "-z", "--name-only", self.ref, check=False)
        answer = self._git("check-attr", "--stdin", "-z", "diff", stdin=paths, check=False)
        values = answer.split("\0")[2::3]  # path, attribute, value; ...
        return any(value not in ("unspecified", "set", "unset") for value in values)

    def changes(self, *filters: str) -> Iterator[Commit]:
        """Each first-parent commit with its files: their status, blob ids and numstat line counts."""
        for chunk in self.log(*self._changes_args(*filters)):
            head, _, rest = chunk.partition("\0")
            commit = header(head)
            commit.files, commit.blobs = numstat_changes(rest.lstrip("\n").split("\0"))
            yield commit

    def _excerpts(self, *filters: str) -> Iterator[tuple[str, str, dict[str, Touched]]]:
        """(sha, diff excerpt, the files whose removed lines could define an option) of each commit."""
        for record in self.log(*self._excerpts_args(*filters)):
            sha, _, patch = record.lstrip("\x1e").partition("\n")
            yield sha, excerpt(patch), defining_files(patch)
