"""GET /readyz: whether `prdigest serve` can do its work now, part by part.

``{"ready": bool, "parts": {name: {"ok": bool, "detail": str}}}``, 200 when every part is ok, 503
otherwise: the database takes a write, each chat platform is connected (its API probed, cached a few
seconds), the scheduler runs, the last weekly delivery went out. /healthz stays liveness only.
A detail names what failed, scrubbed: never a secret.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prdigest.bot.connector import Part, describe
from prdigest.storage import Store

log = logging.getLogger("prdigest.web")

Check = Callable[[], Part]
PROBE_BUSY_MS = 1000  # the write probe waits this long for another process's write, not the store's 30 s


class Readiness:
    def __init__(self, checks: Mapping[str, Check]):
        self.checks = dict(checks)

    def parts(self) -> dict[str, Part]:
        parts = {}
        for name, check in self.checks.items():
            try:
                parts[name] = check()
            except Exception as exc:  # a broken check is a part not ready, not a failed request
                parts[name] = Part(False, describe(exc))
        return parts

    def wsgi_app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        parts = self.parts()
        ready = all(part.ok for part in parts.values())
        body = json.dumps(
            {"ready": ready, "parts": {name: {"ok": p.ok, "detail": p.detail} for name, p in parts.items()}}
        ).encode()
        status = "200 OK" if ready else "503 Service Unavailable"
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                   ("Cache-Control", "no-store")]  # fmt: skip
        start_response(status, headers)
        return [body]


def database_check(store: Store) -> Check:
    """A write transaction begun and rolled back: the file is there, writable, and not locked for long."""

    def check() -> Part:
        store.probe_write(PROBE_BUSY_MS)
        return Part(True, "writable")

    return check


def scheduler_check(running: Callable[[], bool]) -> Check:
    return lambda: Part(True, "running") if running() else Part(False, "not running")


def last_delivery_check(store: Store, failing: Callable[[], list[str]]) -> Check:
    """Not ok while a weekly run fails (``failing``: their delivery keys; a failed run claims nothing);
    else the delivery claimed last: done, in progress, or left uncertain by a send that failed."""

    def check() -> Part:
        keys = failing()
        if keys:
            return Part(False, f"failing, retried by the scheduler: {', '.join(keys)}")
        with store.reading() as tx:
            # PostgreSQL's deliveries table has a rowid column, as SQLite's tables have one.
            sql = "select key, status, claimed_by, completed_at from deliveries order by rowid desc limit 1"
            row = tx.one(sql)
        if row is None:
            return Part(True, "no delivery yet")
        if row["status"] != "claimed":
            return Part(True, f"{row['key']}: {row['status']} at {row['completed_at']}")
        if not row["claimed_by"]:
            return Part(
                False, f"{row['key']}: a send failed and may have gone out; to be checked and retried"
            )
        return Part(True, f"{row['key']}: in progress")

    return check
