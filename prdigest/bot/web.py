"""The web app: one HTTP server for the platforms' HTTP event endpoints, /healthz and report pages.

Routes are WSGI apps mounted on a path prefix, so Slack's own WSGI handler mounts as
it is and the Lark adapter adds a small one. The server runs in a daemon thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

log = logging.getLogger("prdigest.web")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    # socketserver's default backlog (5) drops connections when a platform sends a burst of events.
    request_queue_size = 128


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class WebApp:
    def __init__(self) -> None:
        self._routes: list[tuple[str, WSGIApp]] = []
        self.mount("/healthz", _healthz)
        self._server: WSGIServer | None = None

    def mount(self, prefix: str, app: WSGIApp) -> None:
        """Serve paths under ``prefix`` with ``app``; the longest matching prefix wins."""
        self._routes.append((prefix.rstrip("/"), app))
        self._routes.sort(key=lambda route: -len(route[0]))

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        for prefix, app in self._routes:
            if path == prefix or path.startswith(prefix + "/"):
                return app(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found\n"]

    def start(self, host: str, port: int) -> tuple[str, int]:
        """Serve in a daemon thread; returns the bound address (port 0 picks a free one)."""
        self._server = make_server(
            host, port, self, server_class=_ThreadingServer, handler_class=_QuietHandler
        )
        threading.Thread(target=self._server.serve_forever, name="prdigest-web", daemon=True).start()
        host_bound, port_bound = self._server.server_address[:2]
        return str(host_bound), int(port_bound)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _healthz(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return [b"ok\n"]


def read_body(environ: dict[str, Any], limit: int = 1 << 20) -> bytes:
    """The request body, at most ``limit`` bytes (a larger one is cut: no event is that big)."""
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), limit)
    except ValueError:
        length = 0
    return environ["wsgi.input"].read(length) if length > 0 else b""


def respond(
    start_response: Callable[..., Any], status: str, body: bytes, content_type: str
) -> Iterable[bytes]:
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]
