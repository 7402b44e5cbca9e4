"""Large git histories for the tests and benchmarks, built in seconds with `git fast-import`.

A week of real commits (data/*.json: messages, authors, per-file line counts) is repeated to any size:
repetition k puts its files under `r<k>/`, so every file sees one week's changes at most and file sizes
stay bounded however many PRs the history holds; or every repetition changes the same files, which
grow with each (the shape of `tools/replay_history.py` on a repeated week). File contents are
synthetic; every figure a report reads from git (numstat, authors, times, messages) is the real
commits'.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

FIRST_NUMBER = 10_000


def _data(out: BinaryIO, payload: bytes) -> None:
    out.write(b"data %d\n" % len(payload))
    out.write(payload)
    out.write(b"\n")


def _stamp(moment: datetime) -> bytes:
    offset = moment.utcoffset() or timedelta()
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{int(moment.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}".encode()


def _times(start: datetime, end: datetime, count: int) -> Iterator[datetime]:
    """``count`` distinct times spread evenly from ``start`` to before ``end``."""
    step = (end - start) / max(count, 1)
    for i in range(count):
        yield start + step * i


def _stream(
    commits: list[dict[str, Any]], count: int, start: datetime, end: datetime, out: BinaryIO, spread: bool
) -> None:
    week = sorted(commits, key=lambda c: c["committed_at"])
    reps = -(-count // len(week))
    # The baseline: each repetition's files with as many lines as its week deletes from them (without
    # ``spread``, one set of files takes every repetition: it grows with each, as a busy file does).
    need: dict[str, int] = {}
    for c in week:
        for f in c["files"]:
            need[f["path"]] = need.get(f["path"], 0) + (f["deletions"] or 0) * (1 if spread else reps)
    folder = (lambda k: f"r{k}/") if spread else (lambda k: "")
    out.write(b"commit refs/heads/main\nmark :1\n")
    out.write(b"committer baseline <baseline@example.invalid> 946684800 +0000\n")
    _data(out, b"baseline before the window")
    for k in range(reps if spread else 1):
        for path, n in need.items():
            out.write(f"M 100644 inline {folder(k)}{path}\n".encode())
            _data(out, "".join(f"base {i}\n" for i in range(n)).encode())
    lines: dict[str, list[str]] = {}
    for i, moment in enumerate(_times(start, end, count)):
        k, j = divmod(i, len(week))
        c = week[j]
        if j == 0 and (spread or k == 0):  # a new repetition starts from its own baseline
            lines = {path: [f"base {m}" for m in range(n)] for path, n in need.items()}
        number = FIRST_NUMBER + i
        author = f"{c['author_name']} <{c['author_email']}>".encode()
        out.write(b"commit refs/heads/main\nmark :%d\n" % (i + 2))
        out.write(b"author " + author + b" " + _stamp(moment) + b"\n")
        out.write(b"committer GitHub <noreply@github.com> " + _stamp(moment) + b"\n")
        body = c.get("body") or ""
        message = f"{c['title']} (#{number})" + (f"\n\n{body}" if body.strip() else "")
        _data(out, message.encode())
        out.write(b"from :%d\n" % (i + 1))
        for f in c["files"]:
            current = lines.setdefault(f["path"], [])
            del current[: f["deletions"] or 0]
            current.extend(f"{number} {j}" for j in range(f["additions"] or 0))
            if not f["additions"] and not f["deletions"]:
                current.append(f"{number} touched")
            out.write(f"M 100644 inline {folder(k)}{f['path']}\n".encode())
            _data(out, "".join(f"{line}\n" for line in current).encode())


def build(
    data: Path, target: Path, count: int, start: datetime, end: datetime, *, spread: bool = True
) -> Path:
    """A repository at ``target`` whose main branch holds ``count`` PRs from ``data``'s week, merged
    between ``start`` and ``end``, numbered from FIRST_NUMBER on, over one baseline commit; each
    repetition of the week under a folder of its own (``spread``), or all on the same files."""
    commits = json.loads(data.read_text())
    subprocess.run(["git", "init", "-q", "-b", "main", str(target)], check=True)
    proc = subprocess.Popen(
        ["git", "-C", str(target), "fast-import", "--quiet"], stdin=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None
    try:
        _stream(commits, count, start, end, proc.stdin, spread)
        proc.stdin.close()
        if proc.wait(timeout=600) != 0:
            detail = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"git fast-import failed: {detail}")
    finally:
        if proc.poll() is None:
            proc.kill()
    return target  # no checkout: git log reads the history alone
