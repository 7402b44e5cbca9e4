"""A file's `-U1` patch section read as git's `-U0` would print it, and its line counts: one walk gives the
counts, the excerpt and the option hunks (no second walk for `--numstat`).

Why `-U1`: without context git trims a file's unchanged tail before it diffs (`trim_common_tail`), which
on real histories aligns about one commit in a hundred differently from the diff every other reader of
the repository sees (`--numstat`, GitHub). With one line of context it diffs the whole file, and the
changed lines are those of that diff; dropping the context lines gives its `-U0` form.

A `-U0` hunk is one run of changed lines. Its header names the nearest line above it in the old file
that git's default function pattern matches (a line starting with a letter, `_` or `$`, cut at 80 bytes):
inside a `-U1` hunk that is the last such old line before the run, else the `-U1` header's own.
"""

from __future__ import annotations

from collections.abc import Callable

from prdigest.models import FileChange
from prdigest.sources.diffs import HUNK_HEADER
from prdigest.sources.git.output import RawEntry

FUNC_BYTES = 80  # git's function-line buffer


def counts(section: str) -> tuple[int | None, int | None]:
    """(added, removed) lines of a file's section as `--numstat` counts them; (None, None): a binary file."""
    first = section.find("\n@@ ")
    if first < 0:
        return (None, None) if "\nBinary files " in section else (0, 0)
    return section.count("\n+", first), section.count("\n-", first)


def patch_changes(
    entries: list[RawEntry], sections: list[str], binary: Callable[[str], bool]
) -> list[FileChange] | None:
    """The commit's files, counted from their patch sections as `--numstat` counts them (a file's content
    unchanged, renamed or its mode changed: no lines, "-" for a binary, told by ``binary(blob id)``);
    None when the patch does not have one section per raw entry."""
    files = []
    at = 0
    for entry in entries:
        parts = sections[at : at + 1 + entry.type_changed]
        at += len(parts)
        if len(parts) != 1 + entry.type_changed:
            return None
        found = [counts(part) for part in parts]
        same = entry.blobs.before == entry.blobs.after
        if same and entry.blobs.after is not None and binary(entry.blobs.after):
            found = [(None, None)]
        added = None if any(a is None for a, _ in found) else sum(a or 0 for a, _ in found)
        removed = None if added is None else sum(r or 0 for _, r in found)
        files.append(
            FileChange(
                path=entry.path,
                additions=added,
                deletions=removed,
                status=entry.status,
                previous_path=entry.previous,
            )
        )
    return files if at == len(sections) else None


def _func(line: str) -> str | None:
    """The function line git would take from an old-side line (its +/- or space prefix first), else None."""
    text = line[1:]
    first = text[:1]
    if not first or not (first.isascii() and (first.isalpha() or first in "_$")):
        return None
    if len(text) * 4 > FUNC_BYTES and len(cut := text.encode()) > FUNC_BYTES:
        text = cut[:FUNC_BYTES].decode("utf-8", errors="ignore")  # git drops a character cut in two
    return text.rstrip(" \t\r\n")


def _span(start: int, count: int) -> str:
    """A hunk header's side: "start,count", git leaving out ",1" and naming the line before an empty side."""
    if count == 1:
        return str(start)
    return f"{start if count else start - 1},{count}"


def narrowed(section: str) -> str:
    """The file's `-U1` section as `-U0` prints it: its header, then each run of changed lines under its own
    hunk header."""
    first = section.find("\n@@ ")
    if first < 0:
        return section
    out = [section[:first]]
    for hunk in section[first:].split("\n@@ ")[1:]:
        head, _, body = hunk.partition("\n")
        m = HUNK_HEADER.match("@@ " + head)
        if m is None:
            continue
        # The next old and new line numbers: a side of no lines names the line before it.
        old = int(m[1]) + (m[2] == "0")
        new = int(m[3]) + (m[4] == "0")
        last = m[5]  # the function line above the next run: the header's, until an old-side line is one
        run: list[str] = []
        start = (old, new, last)  # where the run started, and its function line
        previous = " "
        for line in body.split("\n"):
            mark = line[:1]
            if mark == "+" or mark == "-":
                if not run:
                    start = (old, new, last)
                run.append(line)
                if mark == "+":
                    new += 1
                    previous = mark
                    continue
                old += 1
            elif mark == " ":
                if run:
                    out += [_hunk(start, old, new), *run]
                    run = []
                old += 1
                new += 1
            elif mark == "\\" and previous != " ":  # the file's last line has none: shown if changed
                run.append(line)
                continue
            else:
                continue
            previous = mark
            found = _func(line)
            if found is not None:
                last = found
        if run:
            out += [_hunk(start, old, new), *run]
    return "\n".join(out)


def _hunk(start: tuple[int, int, str], old: int, new: int) -> str:
    """The `-U0` header of the run from ``start`` (old and new line, function line) to ``old``, ``new``."""
    spans = f"-{_span(start[0], old - start[0])} +{_span(start[1], new - start[1])}"
    return f"@@ {spans} @@ {start[2]}" if start[2] else f"@@ {spans} @@"
