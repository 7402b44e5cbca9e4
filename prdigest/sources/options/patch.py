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

from prdigest.sources.diffs import HUNK_HEADER, file_sections
from prdigest.sources.options import is_definition
from prdigest.sources.options.files import is_config_file

# A file's header: its path before and after (/dev/null: it is added or deleted).
_SECTION = re.compile(r"^--- (?:a/(?P<old>[^\n]*)|/dev/null)\n\+\+\+ (?:b/(?P<new>[^\n]*)|/dev/null)$", re.M)
_REMOVED = re.compile(r"^-([^\n]*)$", re.M)
_ADDED = re.compile(r"^\+([^\n]*)$", re.M)
_FLAG = re.compile(r"""["'](--[A-Za-z0-9][\w-]*)["']""")
_ENV = re.compile(r"""(?:getenv|environ(?:\.get|\.setdefault|\.pop)?)\s*[(\[]\s*["'](\w+)["']""")
# A class-body field ("    lr: float = 1e-3"), an argument on its own line ("        seed=0,"), a default.
_FIELD = re.compile(r"^(?: {4}|\t)([A-Za-z_]\w*)\s*:\s*[A-Za-z_\[\"'][^=]*?(?:=\s*(.*?))?\s*(?:#.*)?$")
_ARGUMENT = re.compile(r"^\s+\*{0,2}([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)\s*(.+?),\s*(?:#.*)?$")
_DEFAULT = re.compile(r"\bdefault\s*=\s*([^,)]+)")
_SIGNATURE = re.compile(r"\bdef\s+\w+\s*\((.*)")
# The annotation runs possessively up to "=" or ",": its spaces are never split between it and the "=".
_PARAM = re.compile(r"(?:^|,)\s*\*{0,2}([A-Za-z_]\w*)\s*(?::[^=,]*+)?=\s*([^,]+)")


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
    """The option-like (name, value) pairs a line of Python names. Each pattern runs only on a line that
    holds what it needs (most lines of code hold none of it)."""
    indented = line[:1].isspace()
    if not (
        "--" in line
        or "env" in line
        or "def" in line
        or (indented and (":" in line or ("=" in line and "," in line)))
    ):
        return set()
    found = {(flag, "") for flag in _FLAG.findall(line)} if "--" in line else set()
    if "env" in line:
        found |= {(f"${name}", "") for name in _ENV.findall(line)}
    signature = _SIGNATURE.search(line) if "def" in line else None
    if signature:
        found |= {(name, value.strip()) for name, value in _PARAM.findall(signature.group(1))}
    elif indented:
        for pattern in (_FIELD, _ARGUMENT):
            m = pattern.match(line)
            if m:
                found.add((m.group(1), (m.group(2) or "").strip()))
    if "default" in line:
        found |= {("default", value.strip()) for value in _DEFAULT.findall(line)}
    return found


def defining_files(patch: str) -> dict[str, Touched]:
    """The files of the patch that may have changed an option, with the hunks that may have. Sections of
    other files are skipped whole, and lines are found by regular expressions, not one by one."""
    files: dict[str, list[_Hunk]] = {}
    for section in file_sections(patch):
        first = section.find("\n@@")
        header = _SECTION.search(section, 0, first) if first >= 0 else None
        path = header and (header.group("new") or header.group("old"))
        if not path or not is_definition(path) or section.find("\n-", first) < 0:
            continue  # not a definition file, or none of its lines removed: it lost nothing
        for hunk in section[first:].split("\n@@")[1:]:
            line, _, body = hunk.partition("\n")
            head = HUNK_HEADER.match("@@" + line)
            if head is None:
                continue
            spans = (int(head[1]), int(head[2] or 1)), (int(head[3]), int(head[4] or 1))
            files.setdefault(path, []).append(
                _Hunk(*spans, removed=_REMOVED.findall(body), added=_ADDED.findall(body))
            )
    found: dict[str, Touched] = {}
    for name, hunks in files.items():
        if is_config_file(name):
            picked = [h for h in hunks if h.removed]
        elif name.endswith(".py"):
            # A removed line the file adds again names nothing it lost: its pairs are among the added ones.
            added = {line for h in hunks for line in h.added}
            gone = [(h, {p for line in h.removed if line not in added for p in pairs(line)}) for h in hunks]
            if not any(found for _, found in gone):
                continue
            again = {p for line in added for p in pairs(line)}
            picked = [h for h, found in gone if found - again]
        else:
            continue
        if picked:
            found[name] = Touched([h.before for h in picked], [h.after for h in picked])
    return found
