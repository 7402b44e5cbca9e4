"""A PR's diff as the analysis sees it: added and removed lines under their file headers, capped.

A hunk's function context (what git prints after "@@ ... @@") is kept as one "@@ <context>" line where it
changes, so a reader knows which function a change sits in; it does not count against the cap. Blank
changed lines say nothing and are left out, so the cap holds more code.

The cap goes to the files that matter first: dependency manifests, code, CI files, then tests, docs last,
so a PR whose docs come first in path order still shows its code (the rules read risks from it).
Changed lines past the cap that hold a dangerous call or a credential (``torch.load`` deep in a new module)
are kept too, a few per file: they are the evidence the security rule quotes, wherever they sit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from prdigest.danger import dangerous_lines, holds_danger
from prdigest.path_kinds import is_ci, is_dependency, is_doc, is_test

DIFF_LINES_PER_PR = 500
DIFF_LINE_CHARS = 200
# Every file keeps up to this many lines before any file gets more, so one big file cannot hide the rest.
FIRST_SHARE = 40
# Dangerous lines kept per file beyond its share: one is evidence enough, a few show it is no accident.
EVIDENCE_LINES = 3


# A hunk's header: its old and new first lines and counts (",1" left out), then the function line.
HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)")


@dataclass
class _File:
    header: str
    path: str
    binary: str | None = None
    lines: list[str] = field(default_factory=list)  # changed lines and "@@ context" lines, up to the cap
    changed: int = 0  # all its changed lines, kept or not
    kept: int = 0  # the changed lines in `lines`: blank ones say nothing and are left out
    contexts: set[str] = field(default_factory=set)
    rest: list[str] = field(default_factory=list)  # changed lines past the cap, read for evidence only


def file_sections(patch: str) -> list[str]:
    """The patch's sections, one a file, each from its "diff --git" line on (text before the first is no
    file's): split at C speed, where a line-by-line reading would cost a Python step per line."""
    start = 0 if patch.startswith("diff --git") else patch.find("\ndiff --git") + 1
    if start == 0 and not patch.startswith("diff --git"):
        return []
    parts = patch[start:].split("\ndiff --git")
    return [parts[0], *["diff --git" + part for part in parts[1:]]]


def _files(patch: str, limit: int) -> list[_File]:
    """The patch's files; no file keeps more than ``limit`` changed lines (no excerpt shows more)."""
    files: list[_File] = []
    current: _File | None = None
    in_header = False
    for line in patch.splitlines():
        first = line[:1]
        if (first == "+" or first == "-") and not in_header and current is not None:
            current.changed += 1
            if current.kept < limit and line[1:].strip():
                current.kept += 1
                current.lines.append(line[:DIFF_LINE_CHARS])
            elif current.kept >= limit:
                current.rest.append(line)
        elif line.startswith("diff --git"):
            current = _File(header=line, path=line.rpartition(" b/")[2])
            files.append(current)
            in_header = True
        elif line.startswith("@@"):
            in_header = False
            context = f"@@ {line.split('@@', 2)[-1].strip()}"[:DIFF_LINE_CHARS]
            if context != "@@ " and current is not None and context not in current.contexts:
                current.contexts.add(context)
                if current.kept < limit:
                    current.lines.append(context)
        elif in_header and current is not None and line.startswith("Binary files"):
            current.binary = line
    return files


def _rank(path: str) -> int:
    if is_dependency(path):
        return -1  # short and telling: what the PR asks to install
    if is_doc(path):
        return 3
    if is_test(path):
        return 2
    return 1 if is_ci(path) else 0


def _head(f: _File, changed: int) -> list[str]:
    """The file's first ``changed`` changed lines, with the context lines among them."""
    out: list[str] = []
    for line in f.lines:
        if changed == 0:
            break
        changed -= not line.startswith("@@")
        out.append(line)
    return out


def _evidence(f: _File, head: list[str]) -> list[str]:
    """The changed lines the head leaves out that hold a dangerous call or a credential, a few (the security
    rule reads neither tests nor docs)."""
    if is_test(f.path) or is_doc(f.path):
        return []
    unshown = f.lines[len(head) :] + f.rest
    if not unshown or not holds_danger("\n".join(unshown)):  # most files hold none: no line is read alone
        return []
    changed = [line for line in unshown if not line.startswith("@@")]
    found = set(islice(dangerous_lines([line[1:] for line in changed]), EVIDENCE_LINES))
    return [line[:DIFF_LINE_CHARS] for line in changed if line[1:] in found][:EVIDENCE_LINES]


def excerpt(patch: str, limit: int = DIFF_LINES_PER_PR) -> str:
    """The patch's changed lines, at most ``limit``, the most telling files first."""
    files = sorted(_files(patch, limit), key=lambda f: _rank(f.path))
    shown = {id(f): min(f.kept, FIRST_SHARE) for f in files}
    left = limit - sum(shown.values())
    if left < 0:  # more files than the first shares fit: fill in rank order
        left = limit
        for f in files:
            shown[id(f)] = min(f.kept, left)
            left -= shown[id(f)]
    for f in files:
        extra = min(f.kept - shown[id(f)], left)
        shown[id(f)] += extra
        left -= extra
    out: list[str] = []
    evidence = 0
    for f in files:
        head = _head(f, shown[id(f)])
        quoted = _evidence(f, head)
        evidence += len(quoted)
        if shown[id(f)] or f.binary or not f.changed or quoted:
            out.append(f.header)
            out += [f.binary] if f.binary else head + quoted
    hidden = sum(f.changed for f in files) - sum(shown.values()) - evidence
    if hidden:
        out.append(f"... ({hidden} more changed lines)")
    return "\n".join(out)
