"""Which files of a commit's `-U0` patch may have changed an option, and where: read from the patch text
alone, so that a commit whose removed lines define nothing that its added lines do not define again
(code changed around the options, a help text reworded, a line moved) costs no file read and no parse.

A removed line names option-like pairs: a quoted flag, an environment variable read, a class-body field
with its default (``    lr: float = 1e-3``), a parameter or argument with its value (``def f(seed=0``,
``        seed=0,``), a ``default=``. A hunk may have
changed an option when one of its removed lines names a pair that no added line of the file names again.
Every removed line of a config file may have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prdigest.sources.options import is_definition
from prdigest.sources.options.files import is_config_file

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_FLAG = re.compile(r"""["'](--[A-Za-z0-9][\w-]*)["']""")
_ENV = re.compile(r"""(?:getenv|environ(?:\.get|\.setdefault|\.pop)?)\s*[(\[]\s*["'](\w+)["']""")
# A class-body field ("    lr: float = 1e-3"), an argument on its own line ("        seed=0,"), a default.
_FIELD = re.compile(r"^(?: {4}|\t)([A-Za-z_]\w*)\s*:\s*[A-Za-z_\[\"'][^=]*?(?:=\s*(.*?))?\s*(?:#.*)?$")
_ARGUMENT = re.compile(r"^\s+\*{0,2}([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)\s*(.+?),\s*(?:#.*)?$")
_DEFAULT = re.compile(r"\bdefault\s*=\s*([^,)]+)")
_SIGNATURE = re.compile(r"\bdef\s+\w+\s*\((.*)")
_PARAM = re.compile(r"(?:^|,)\s*\*{0,2}([A-Za-z_]\w*)\s*(?::\s*[^=,]+?)?\s*=\s*([^,]+)")


@dataclass
class Touched:
    """The hunks of one file that may have changed an option: (first line, count) spans of the file
    before and after."""

    before: list[tuple[int, int]] = field(default_factory=list)
    after: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class _Hunk:
    before: tuple[int, int]
    after: tuple[int, int]
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


def pairs(line: str) -> set[tuple[str, str]]:
    """The option-like (name, value) pairs a line of Python names."""
    if "=" not in line and ":" not in line and "--" not in line and "env" not in line:
        return set()  # most lines of code: nothing to look for
    found = {(flag, "") for flag in _FLAG.findall(line)}
    found |= {(f"${name}", "") for name in _ENV.findall(line)}
    signature = _SIGNATURE.search(line)
    if signature:
        found |= {(name, value.strip()) for name, value in _PARAM.findall(signature.group(1))}
    else:
        for pattern in (_FIELD, _ARGUMENT):
            m = pattern.match(line)
            if m:
                found.add((m.group(1), (m.group(2) or "").strip()))
    found |= {("default", value.strip()) for value in _DEFAULT.findall(line)}
    return found


def defining_files(patch: str) -> dict[str, Touched]:
    """The files of the patch that may have changed an option, with the hunks that may have."""
    files: dict[str, list[_Hunk]] = {}
    path = ""
    hunk: _Hunk | None = None
    for line in patch.splitlines():
        mark = line[:1]
        if mark == "-":
            if line.startswith("--- "):
                old = line[4:].strip()
                path, hunk = (old.removeprefix("a/") if old != "/dev/null" else ""), None
            elif hunk is not None:
                hunk.removed.append(line[1:])
        elif mark == "+":
            if line.startswith("+++ "):
                new = line[4:].strip()
                path = new.removeprefix("b/") if new != "/dev/null" else path
            elif hunk is not None:
                hunk.added.append(line[1:])
        elif mark == "@" and path and (path in files or is_definition(path)):
            m = _HUNK.match(line)
            hunk = None
            if m:
                spans = (int(m.group(1)), int(m.group(2) or 1)), (int(m.group(3)), int(m.group(4) or 1))
                hunk = _Hunk(*spans)
                files.setdefault(path, []).append(hunk)
        elif mark == "d":  # "diff --git": a new file; its hunks start after its header
            hunk = None
    found: dict[str, Touched] = {}
    for name, hunks in files.items():
        if is_config_file(name):
            picked = [h for h in hunks if h.removed]
        elif name.endswith(".py"):
            gone = [(h, {p for line in h.removed for p in pairs(line)}) for h in hunks]
            if not any(found for _, found in gone):
                continue
            again = {p for h in hunks for line in h.added for p in pairs(line)}
            picked = [h for h, found in gone if found - again]
        else:
            continue
        if picked:
            found[name] = Touched([h.before for h in picked], [h.after for h in picked])
    return found
