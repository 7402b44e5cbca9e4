"""The web app: one HTTP server for the platforms' HTTP event endpoints, /healthz and report pages.

Routes are WSGI apps mounted on a path prefix, so Slack's own WSGI handler mounts as it is and
the Lark adapter adds a small one. waitress serves them: its I/O loop reads requests without a
thread (an idle or slow client holds a socket, not a worker), hands a request to the bounded pool
only once it is complete, refuses a body over ``BODY_LIMIT`` with a 413 before reading it, and
drops a connection idle for ``timeout_s``. Pages and /healthz answer GET and HEAD only; every
answer, waitress's own error pages too, carries the security headers.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer, create_server
from waitress.task import ErrorTask

log = logging.getLogger("prdigest.web")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

THREADS = 8  # requests served at once; complete requests wait in waitress's queue
CONNECTIONS = 256  # open connections; more wait in the backlog
BACKLOG = 128  # a platform's burst of events is not refused
HEAD_LIMIT = 64 * 1024
BODY_LIMIT = 1 << 20  # no event is that big
TIMEOUT_S = 10  # a connection idle that long is closed (waitress counts whole seconds)
PAGE_METHODS: tuple[str, ...] = ("GET", "HEAD")
EVENT_METHODS: tuple[str, ...] = ("POST",)  # a platform posts its events; nothing else is asked there
SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
     "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]  # fmt: skip


class _SecureErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's own error answers (400, 413, 431, ...) with the security headers."""

    def execute(self) -> None:
        self.response_headers.extend(SECURITY_HEADERS)
        super().execute()


class _Channel(HTTPChannel):  # type: ignore[misc]
    error_task_class = _SecureErrorTask


class WebApp:
    def __init__(self, *, timeout_s: int = TIMEOUT_S, threads: int = THREADS) -> None:
        self.timeout_s = max(1, int(timeout_s))
        self.threads = threads
        self._routes: list[tuple[str, WSGIApp, tuple[str, ...]]] = []
        self.mount("/healthz", _healthz)
        self._server: TcpWSGIServer | None = None
        self._loop: threading.Thread | None = None

    def mount(self, prefix: str, app: WSGIApp, methods: tuple[str, ...] = PAGE_METHODS) -> None:
        """Serve paths under ``prefix`` with ``app`` for ``methods`` (a page's GET and HEAD by default);
        the longest matching prefix wins."""
        self._routes.append((prefix.rstrip("/"), app, methods))
        self._routes.sort(key=lambda route: -len(route[0]))

    def mount_events(self, prefix: str, app: WSGIApp) -> None:
        """Serve a platform's event endpoint (its adapter's ``events_path``): POST only."""
        self.mount(prefix, app, EVENT_METHODS)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def secure_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            named = {name.lower() for name, _ in headers}
            extra = [header for header in SECURITY_HEADERS if header[0].lower() not in named]
            return start_response(status, [*headers, *extra], exc_info)

        method = environ.get("REQUEST_METHOD", "")
        path = environ.get("PATH_INFO", "")
        for prefix, app, allowed in self._routes:
            if path == prefix or path.startswith(prefix + "/"):
                if method not in allowed:
                    allow = ", ".join(allowed)
                    return _plain(
                        secure_start, "405 Method Not Allowed", b"method not allowed\n", [("Allow", allow)]
                    )
                try:
                    result = app(environ, secure_start)
                except Exception:
                    log.exception("%s %s failed", method, path)
                    return _plain(
                        start_response, "500 Internal Server Error", b"internal error\n", SECURITY_HEADERS
                    )
                if method == "HEAD":  # headers only; the page's Content-Length stays as a GET's
                    _close(result)
                    return []
                return result
        return _plain(secure_start, "404 Not Found", b"not found\n")

    def start(self, host: str, port: int) -> tuple[str, int]:
        """Serve from a daemon thread; returns the bound address (port 0 picks a free one)."""
        host = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0]  # one address: one socket
        server = create_server(
            self, host=host, port=port, threads=self.threads, connection_limit=CONNECTIONS,
            backlog=BACKLOG, channel_timeout=self.timeout_s, cleanup_interval=1,
            asyncore_loop_timeout=1, max_request_body_size=BODY_LIMIT + 1,  # refused: this size or more
            max_request_header_size=HEAD_LIMIT, ident="prdigest", clear_untrusted_proxy_headers=True,
        )  # fmt: skip
        if not isinstance(server, TcpWSGIServer):  # one host and port: one listening socket
            server.close()
            raise RuntimeError(f"cannot serve on {host}:{port}")
        server.channel_class = _Channel
        self._server = server
        self._loop = threading.Thread(target=server.run, name="prdigest-web", daemon=True)
        self._loop.start()
        return str(server.effective_host), int(server.effective_port)

    def stop(self) -> None:
        """Stop accepting, let the pool finish what it has (up to 5 s), close every connection."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()  # the listening socket
        server.task_dispatcher.shutdown(cancel_pending=False)
        for channel in list(server._map.values()):  # connections: the loop ends when none is left
            channel.close()
        if self._loop is not None:
            self._loop.join(self.timeout_s)
            self._loop = None


def _healthz(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
    return [b"ok\n"]


def _plain(
    start_response: Callable[..., Any], status: str, body: bytes, headers: Iterable[tuple[str, str]] = ()
) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), *headers])
    return [body]


def _close(result: Iterable[bytes]) -> None:
    close = getattr(result, "close", None)
    if close is not None:
        close()


def read_body(environ: dict[str, Any], limit: int = BODY_LIMIT) -> bytes:
    """The request body, at most ``limit`` bytes (the server refused a larger one already)."""
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
