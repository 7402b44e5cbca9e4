"""The report pages of the web app: /reports/<token>, the full HTML of a delivered report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prdigest.bot.web import respond
from prdigest.storage import Store
from prdigest.storage.deliveries import report_id_for


def report_pages(store: Store) -> Callable[..., Iterable[bytes]]:
    """/reports/<token>: the full HTML page of a delivered report."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        from prdigest.redact import scrub, scrub_value
        from prdigest.render.html import render_html

        token = environ.get("PATH_INFO", "").removeprefix("/reports/").strip("/")
        report_id = report_id_for(store, token) if token else None
        report = store.get_report(report_id) if report_id is not None else None
        if report is None:
            return respond(start_response, "404 Not Found", b"no such report\n", "text/plain; charset=utf-8")
        page = scrub(render_html(scrub_value(report))).encode()  # its texts, then the page they make
        return respond(start_response, "200 OK", page, "text/html; charset=utf-8")

    return app
