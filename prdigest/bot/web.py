"""The web app: one HTTP server for the platforms' HTTP event endpoints, /healthz and report pages.

Routes are WSGI apps mounted on a path prefix, so Slack's own WSGI handler mounts as
it is and the Lark adapter adds a small one. The server is a small one of our own: a fixed
pool of daemon threads that each accept a connection, read one request, call the app and
close. A burst of 50 events measured 0.8 ms a request with wsgiref's threading server (a
thread started per connection, headers read by the email parser): the acks' budget.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote

log = logging.getLogger("prdigest.web")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

THREADS = 16  # requests served at once; more wait in the backlog
BACKLOG = 128  # a platform's burst of events is not refused
HEAD_LIMIT = 64 * 1024
BODY_LIMIT = 1 << 20  # no event is that big
TIMEOUT_S = 10.0  # a client that stops sending frees its thread


class _BadRequest(Exception):
    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


class WebApp:
    def __init__(self) -> None:
        self._routes: list[tuple[str, WSGIApp]] = []
        self.mount("/healthz", _healthz)
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []

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
        """Serve in daemon threads; returns the bound address (port 0 picks a free one)."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host, port), family=family, backlog=BACKLOG)
        self._threads = [
            threading.Thread(target=self._serve, args=(self._sock,), name=f"prdigest-web-{i}", daemon=True)
            for i in range(THREADS)
        ]
        for thread in self._threads:
            thread.start()
        host_bound, port_bound = self._sock.getsockname()[:2]
        return str(host_bound), int(port_bound)

    def stop(self) -> None:
        """Stop accepting; requests being served finish (each within its timeout)."""
        if self._sock is None:
            return
        sock, self._sock = self._sock, None
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes the threads blocked in accept()
        sock.close()
        for thread in self._threads:
            thread.join(TIMEOUT_S)
        self._threads = []

    def _serve(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, peer = sock.accept()
            except OSError:  # the server stopped
                return
            with conn:
                conn.settimeout(TIMEOUT_S)
                try:
                    self._one(conn, peer)
                except OSError as exc:  # the client went away or stalled: nothing to answer
                    log.debug("%s: %s", peer, exc)
                except Exception:
                    log.exception("the web server failed on a request")

    def _one(self, conn: socket.socket, peer: Any) -> None:
        try:
            environ = _read_request(conn, peer)
        except _BadRequest as bad:
            conn.sendall(_response(bad.status, [("Content-Type", "text/plain")], [bad.status.encode()]))
            return
        if environ is None:
            return
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, headers]
            return chunks.append  # WSGI's write(): rarely used

        chunks: list[bytes] = []
        try:
            result = self(environ, start_response)
            try:
                chunks.extend(result)
            finally:
                if hasattr(result, "close"):
                    result.close()
        except Exception:
            log.exception("%s %s failed", environ["REQUEST_METHOD"], environ["PATH_INFO"])
            started[:] = ["500 Internal Server Error", [("Content-Type", "text/plain")]]
            chunks = [b"internal error\n"]
        status, headers = started
        if environ["REQUEST_METHOD"] == "HEAD":
            chunks = []
        conn.sendall(_response(status, headers, chunks))
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s %s %s", peer, environ["REQUEST_METHOD"], environ["PATH_INFO"], status)


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


def _read_request(conn: socket.socket, peer: Any) -> dict[str, Any] | None:
    """One request as a WSGI environ; None when the client closed without sending one."""
    deadline = time.monotonic() + TIMEOUT_S  # for the whole request: a client that trickles is cut off
    data = bytearray()
    while (end := data.find(b"\r\n\r\n")) < 0:
        if len(data) > HEAD_LIMIT:
            raise _BadRequest("431 Request Header Fields Too Large")
        chunk = _recv(conn, 65536, deadline)
        if not chunk:
            if data:
                raise _BadRequest("400 Bad Request")
            return None
        data += chunk
    lines = data[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _BadRequest("400 Bad Request")
    method, target, protocol = parts
    environ: dict[str, Any] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _BadRequest("400 Bad Request")
        key = name.upper().replace("-", "_")
        key = key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key
        value = value.strip()
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    if "HTTP_TRANSFER_ENCODING" in environ:
        raise _BadRequest("411 Length Required")  # platforms send a Content-Length
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise _BadRequest("400 Bad Request") from None
    if length < 0 or length > BODY_LIMIT:
        raise _BadRequest("413 Content Too Large")
    body = bytearray(data[end + 4 :])
    if len(body) < length and environ.get("HTTP_EXPECT", "").lower() == "100-continue":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    while len(body) < length:
        chunk = _recv(conn, min(65536, length - len(body)), deadline)
        if not chunk:
            raise _BadRequest("400 Bad Request")
        body += chunk
    path, _, query = target.partition("?")
    host, port = conn.getsockname()[:2]
    environ.update({
        "REQUEST_METHOD": method, "PATH_INFO": unquote(path, "latin-1"), "QUERY_STRING": query,
        "SERVER_PROTOCOL": protocol, "SERVER_NAME": str(host), "SERVER_PORT": str(port),
        "REMOTE_ADDR": str(peer[0]) if isinstance(peer, tuple) else "", "SCRIPT_NAME": "",
        "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(bytes(body[:length])),
        "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    })  # fmt: skip
    environ.setdefault("CONTENT_LENGTH", str(length))
    return environ


def _recv(conn: socket.socket, size: int, deadline: float) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request took too long to arrive")
    conn.settimeout(left)
    return conn.recv(size)


def _response(status: str, headers: list[tuple[str, str]], chunks: list[bytes]) -> bytes:
    """The whole response, sent in one write; the connection closes after it."""
    size = sum(len(chunk) for chunk in chunks)
    named = {name.lower() for name, _ in headers}
    lines = [f"HTTP/1.1 {status}", *(f"{name}: {value}" for name, value in headers)]
    if "content-length" not in named:
        lines.append(f"Content-Length: {size}")
    lines += [f"Date: {formatdate(usegmt=True)}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + b"".join(chunks)
