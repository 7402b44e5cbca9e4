"""A total deadline per LLM request, enforced on every socket operation.

httpx's timeouts bound each wait for a byte, not the request: a server that drips one byte a second
holds a request "timed out at 3 s" for as long as it likes. Here each request (each attempt of the
SDK's retries) gets ``seconds`` from its start for connecting, sending and reading, headers and body
alike: every socket wait is cut to the time left, and one past it is httpx's own ``ReadTimeout``
(``ConnectTimeout``, ``WriteTimeout``), which the SDK turns into ``APITimeoutError``.

The deadline is kept per thread: a synchronous request runs on its caller's thread from its first
byte sent to its last byte read, and only requests through ``DeadlineTransport`` use these sockets.
"""

from __future__ import annotations

import functools
import threading
import time
import urllib.request
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable

_deadline = threading.local()


def _left(timeout: float | None, late: type[httpcore2.TimeoutException]) -> float:
    """The time a socket wait may take: ``timeout`` cut to the request's time left; ``late`` past it."""
    left = getattr(_deadline, "at", 0.0) - time.monotonic()
    if left <= 0:
        raise late("the request's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class DeadlineTransport(httpx2.HTTPTransport):
    """httpx's transport, each request of which ends ``seconds`` after it started at the latest."""

    def __init__(self, seconds: float, proxy: str | None = None):
        # Shared by the whole process (see `deadline_client`): its callers bound how many requests run.
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=32)
        super().__init__(proxy=proxy, limits=limits)
        # httpx builds its connection pool without a way to name the network backend: the pool's
        # (and a proxy pool's) connections are made by it when they are needed, so it is swapped here.
        self._pool._network_backend = _Backend()
        self.seconds = seconds

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        _deadline.at = time.monotonic() + self.seconds
        return super().handle_request(request)


def deadline_client(base_url: str, seconds: float) -> httpx2.Client:
    """The SDK's client for ``base_url``, its requests ending ``seconds`` after they start; through the
    proxy the environment names for it, as the SDK's own client would (it follows redirects too)."""
    url = urlsplit(base_url)
    proxy = (
        None
        if urllib.request.proxy_bypass(url.hostname or "")
        else urllib.request.getproxies().get(url.scheme)
    )
    return _shared_client(seconds, proxy)


@functools.lru_cache(maxsize=8)
def _shared_client(seconds: float, proxy: str | None) -> httpx2.Client:
    """One client (its TLS context, some 20 ms of CPU to load, and its pool) for every request of the
    process with this deadline and proxy: a worker builds hundreds of reports, each with its LLM client."""
    return httpx2.Client(transport=DeadlineTransport(seconds, proxy), timeout=seconds, follow_redirects=True)
