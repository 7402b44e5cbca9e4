"""Where a setting came from, for error messages: the line of the config file, or the env var."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError


def describe(
    exc: ValidationError, path: Path | None, text: str, origins: Mapping[tuple[str, ...], str]
) -> str:
    """One line per error: where the value came from (file:line, or ``origins``' word for the
    environment variable or the command line), the key, what is wrong."""
    lines = []
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"])
        key = ".".join(loc) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        origin = next((origins[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in origins), None)
        if origin is None:
            origin = f"{path}:{locate_key(text, loc)}" if path is not None and text else "settings"
        lines.append(f"{origin}: {key}: {message}")
    return "\n".join(lines)


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def locate_key(text: str, loc: tuple[str, ...]) -> int:
    """The line number where a key of the settings tree is set (best effort; 1 when not found).

    tomllib keeps no positions, so this walks the file's table headers: ``[a.b]``,
    ``[[repos]]`` (counted, so ``repos.1.name`` finds the second entry) and ``key =``.
    """
    counts: dict[str, int] = {}
    table: tuple[str, ...] = ()
    best = 1
    best_depth = -1
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            names = [_unquote(p.strip()) for p in header.group(2).split(".")]
            if header.group(1) == "[[":
                counts[".".join(names)] = counts.get(".".join(names), -1) + 1
            # A table inside an array of tables belongs to that array's latest entry.
            parts: list[str] = []
            for i, name in enumerate(names):
                parts.append(name)
                prefix = ".".join(names[: i + 1])
                if prefix in counts:
                    parts.append(str(counts[prefix]))
            table = tuple(parts)
            depth = _prefix_depth(table, loc)
            if depth > best_depth:
                best, best_depth = number, depth
            continue
        assign = _ASSIGN.match(line)
        if assign:
            full = (*table, *_unquote(assign.group(1)).split("."))
            depth = _prefix_depth(full, loc)
            if depth > best_depth:
                best, best_depth = number, depth
    return best


def _prefix_depth(candidate: tuple[str, ...], loc: tuple[str, ...]) -> int:
    """How much of ``loc`` the candidate path covers; -1 when it leaves it."""
    if len(candidate) > len(loc) or tuple(loc[: len(candidate)]) != candidate:
        return -1
    return len(candidate)


def _unquote(part: str) -> str:
    return part[1:-1] if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'" else part
