"""The web server: WSGI routes, what it refuses, a burst of connections, a client that stalls, and a stop that
ends its threads (bounded requests in detail: test_web_limits.py)."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from prdigest.bot.web import BODY_LIMIT, WebApp

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def echo(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    head = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}?{environ['QUERY_STRING']} "
    head += f"{environ.get('HTTP_X_THING', '-')} {environ.get('CONTENT_TYPE', '-')} "
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [head.encode(), body]


def failing(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    raise RuntimeError("a route that fails")


@pytest.fixture
def web() -> Iterator[tuple[WebApp, str]]:
    app = WebApp()
    app.mount("/echo", echo, methods=("GET", "HEAD", "POST"))
    app.mount("/fail", failing)
    host, port = app.start("127.0.0.1", 0)
    yield app, f"http://{host}:{port}"
    app.stop()


def raw(base: str, request: bytes) -> bytes:
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_routes_get_the_request_as_wsgi_describes_it(web: tuple[WebApp, str]) -> None:
    _, base = web
    assert NO_PROXY.open(f"{base}/healthz", timeout=5).read() == b"ok\n"
    request = urllib.request.Request(
        f"{base}/echo/a%20b?x=1", data=b"hello", headers={"X-Thing": "yes", "Content-Type": "text/x"}
    )
    assert NO_PROXY.open(request, timeout=5).read() == b"POST /echo/a b?x=1 yes text/x hello"
    with pytest.raises(urllib.error.HTTPError) as missing:
        NO_PROXY.open(f"{base}/nowhere", timeout=5)
    assert missing.value.code == 404


def test_bad_requests_are_refused_and_a_failing_route_is_a_500(
    web: tuple[WebApp, str], caplog: pytest.LogCaptureFixture
) -> None:
    _, base = web
    assert raw(base, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.0 400")
    big = f"POST /echo HTTP/1.0\r\nContent-Length: {BODY_LIMIT + 1}\r\n\r\n".encode()
    assert raw(base, big).startswith(b"HTTP/1.0 413")
    chunked = (
        b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    )
    assert raw(base, chunked).startswith(b"HTTP/1.1 200")
    assert raw(base, b"GET /fail HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 500")
    assert "a route that fails" in caplog.text
    head = raw(base, b"HEAD /healthz HTTP/1.0\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and head.endswith(b"\r\n\r\n")  # headers, no body
    assert NO_PROXY.open(f"{base}/healthz", timeout=5).read() == b"ok\n"  # still serving


def test_a_burst_of_connections_is_served_in_full(web: tuple[WebApp, str]) -> None:
    _, base = web
    ready = threading.Barrier(60)

    def call(n: int) -> bytes:
        ready.wait(5)
        request = urllib.request.Request(f"{base}/echo/{n}", data=str(n).encode())
        return bytes(NO_PROXY.open(request, timeout=10).read())

    with ThreadPoolExecutor(60) as pool:
        bodies = list(pool.map(call, range(60)))
    form = "application/x-www-form-urlencoded"  # urllib's type for a body
    assert bodies == [f"POST /echo/{n}? - {form} {n}".encode() for n in range(60)]


def test_stop_ends_the_threads_and_refuses_new_connections() -> None:
    def ours() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith(("prdigest-web", "waitress-"))]

    app = WebApp()
    host, port = app.start("127.0.0.1", 0)
    assert NO_PROXY.open(f"http://{host}:{port}/healthz", timeout=5).read() == b"ok\n"
    assert "prdigest-web" in ours()
    app.stop()
    assert ours() == []
    with pytest.raises(OSError):
        socket.create_connection((host, port), timeout=2).close()
    app.stop()  # a second stop is harmless


def test_a_client_that_stalls_mid_request_is_cut_off() -> None:
    app = WebApp(timeout_s=1)
    host, port = app.start("127.0.0.1", 0)
    try:
        with socket.create_connection((host, port), timeout=5) as sock:
            started = time.monotonic()
            sock.sendall(b"POST /healthz HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234")  # then nothing
            try:
                answer = sock.recv(100)
            except OSError:  # reset
                answer = b""
            assert answer == b""  # closed without an answer
        assert time.monotonic() - started < 3.5
    finally:
        app.stop()
