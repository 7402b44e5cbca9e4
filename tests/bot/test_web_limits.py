"""Bounded requests: a body over the cap is refused before any route sees it, methods and headers
of pages, and idle connections dropped."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from prdigest.bot.web import BODY_LIMIT, WebApp

ENDPOINTS = ("/slack/events", "/lark/events", "/healthz", "/reports/abc")
FILLER = b"Z" * 65536


def page(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = b"<!doctype html><p>report</p>"
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture
def served() -> Iterator[tuple[WebApp, tuple[str, int], list[str]]]:
    called: list[str] = []

    def event(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        called.append(environ["PATH_INFO"])
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))]

    app = WebApp(timeout_s=1)
    app.mount_events("/slack/events", event)
    app.mount_events("/lark/events", event)
    app.mount("/reports", page)
    address = app.start("127.0.0.1", 0)
    yield app, address, called
    app.stop()


def exchange(address: tuple[str, int], request: bytes, body_bytes: int = 0) -> bytes:
    """Send ``request`` then up to ``body_bytes`` of filler (stopping if the server closes); the answer."""
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request)
        sent = 0
        try:
            while sent < body_bytes:
                sock.sendall(FILLER)
                sent += len(FILLER)
        except OSError:  # the server answered and closed: the rest is never read
            pass
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except OSError:
            pass
    return b"".join(chunks)


@pytest.mark.parametrize("path", ENDPOINTS)
def test_an_oversize_post_is_refused_quickly_and_never_logged(
    served: tuple[WebApp, tuple[str, int], list[str]],
    path: str,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    _, address, called = served
    caplog.set_level(logging.DEBUG)
    head = f"POST {path} HTTP/1.1\r\nContent-Length: {150 << 20}\r\nContent-Type: application/json\r\n\r\n"
    started = time.monotonic()
    answer = exchange(address, head.encode(), body_bytes=4 << 20)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert time.monotonic() - started < 3
    assert called == []  # no route (no parsing, no signature check) saw it
    out, err = capfd.readouterr()
    assert "ZZZZ" not in caplog.text + out + err
    assert b"X-Content-Type-Options: nosniff" in answer


def test_a_body_at_the_cap_still_reaches_the_route(served: tuple[WebApp, tuple[str, int], list[str]]) -> None:
    _, address, called = served
    body = b"{" + b" " * (BODY_LIMIT - 2) + b"}"
    head = f"POST /slack/events HTTP/1.0\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    answer = exchange(address, head + body)
    assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(body)
    assert called == ["/slack/events"]


def test_a_chunked_body_past_the_cap_is_refused(served: tuple[WebApp, tuple[str, int], list[str]]) -> None:
    _, address, called = served
    chunk = b"%x\r\n" % len(FILLER) + FILLER + b"\r\n"
    head = b"POST /lark/events HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = exchange(address, head + chunk * ((BODY_LIMIT // len(FILLER)) + 2))
    assert answer.startswith(b"HTTP/1.1 413")
    assert called == []


@pytest.mark.parametrize("path", ["/healthz", "/reports/abc"])
@pytest.mark.parametrize("method", ["PUT", "DELETE", "TRACE", "POST", "OPTIONS"])
def test_pages_answer_only_get_and_head(
    served: tuple[WebApp, tuple[str, int], list[str]], path: str, method: str
) -> None:
    _, address, _ = served
    answer = exchange(address, f"{method} {path} HTTP/1.0\r\nContent-Length: 0\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.0 405")
    assert b"\r\nAllow: GET, HEAD\r\n" in answer


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_event_endpoints_answer_only_post(
    served: tuple[WebApp, tuple[str, int], list[str]], method: str
) -> None:
    _, address, called = served
    answer = exchange(address, f"{method} /slack/events HTTP/1.0\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.0 405") and b"\r\nAllow: POST\r\n" in answer
    assert called == []


@pytest.mark.parametrize("path", ["/healthz", "/reports/abc"])
def test_head_gets_the_headers_and_no_body(
    served: tuple[WebApp, tuple[str, int], list[str]], path: str
) -> None:
    _, address, _ = served
    get = exchange(address, f"GET {path} HTTP/1.0\r\n\r\n".encode())
    head = exchange(address, f"HEAD {path} HTTP/1.0\r\n\r\n".encode())
    assert get.startswith(b"HTTP/1.0 200") and not get.endswith(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200") and head.endswith(b"\r\n\r\n")
    assert head.split(b"\r\n\r\n")[0].count(b"\r\n") >= 4


@pytest.mark.parametrize("request_line", ["GET /healthz", "GET /reports/abc", "GET /nowhere", "PUT /healthz"])
def test_every_answer_carries_the_security_headers(
    served: tuple[WebApp, tuple[str, int], list[str]], request_line: str
) -> None:
    _, address, _ = served
    answer = exchange(address, f"{request_line} HTTP/1.0\r\n\r\n".encode()).split(b"\r\n\r\n")[0]
    assert (
        b"\r\nContent-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:" in answer
    )
    assert b"\r\nX-Content-Type-Options: nosniff" in answer
    assert b"\r\nReferrer-Policy: no-referrer" in answer


def test_an_idle_connection_is_dropped_after_the_timeout(
    served: tuple[WebApp, tuple[str, int], list[str]],
) -> None:
    _, address, _ = served
    with socket.create_connection(address, timeout=5) as sock:
        started = time.monotonic()
        try:
            answer = sock.recv(100)
        except OSError:
            answer = b""
        assert answer == b""  # closed without an answer
        assert time.monotonic() - started < 3.5
