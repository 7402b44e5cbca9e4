"""The Lark adapter's connections: the long connection (mode "ws") and the HTTP events endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from prdigest.bot.lark.dispatch import EventDispatcher
from prdigest.bot.lark.messages import lark_headers
from prdigest.bot.lark.sdk import LogLevel, RawRequest, ws_client_module
from prdigest.bot.web import WSGIApp, read_body, respond

log = logging.getLogger("prdigest.lark")

THREAD_TIMEOUT_S = 5.0  # how long start() and stop() wait for the long connection's thread


def events_app(events: EventDispatcher) -> WSGIApp:
    """Events and card callbacks posted by Lark, for ``events`` to check and dispatch."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return respond(start_response, "405 Method Not Allowed", b"", "text/plain")
        request = RawRequest()
        request.uri = environ.get("PATH_INFO", "")
        request.headers = lark_headers(environ)
        request.body = read_body(environ)
        # Checks the token, the signature and decrypts; the answer to url_verification too.
        answer = events.do(request)
        status = f"{answer.status_code} {HTTPStatus(answer.status_code).phrase}"
        content_type = answer.headers.get("Content-Type", "application/json; charset=utf-8")
        return respond(start_response, status, answer.content or b"", content_type)

    return app


def ws_module() -> Any:
    """`lark_oapi.ws.client`, imported when a long connection first starts (mode "http" and the
    delivery-only client never load it)."""
    return ws_client_module(EventDispatcher)


def ws_client(app_id: str, secret: str, events: EventDispatcher, domain: str) -> Any:
    """The SDK's long-connection client, its events to ``events``."""
    # At INFO the SDK logs the connection URL and its ticket.
    return ws_module().Client(app_id, secret, event_handler=events, domain=domain, log_level=LogLevel.WARNING)


class LongConnection:
    """`lark_oapi.ws.Client` in a daemon thread on its own event loop.

    lark-oapi 1.7.5 runs the client on a module-level loop (`lark_oapi.ws.client.loop`)
    and has no stop: the thread points that global at its own loop (so one long
    connection runs per process), and stop() cancels the loop's tasks from outside,
    then closes the websocket and the loop.
    """

    def __init__(self, make_client: Callable[[], Any]):
        self._make_client = make_client
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping = threading.Event()
        self._ws: Any = None

    def start(self) -> None:
        self._ws = ws_module()  # here, not in the thread: an import there would race the main thread's
        self._thread = threading.Thread(target=self._run, name="prdigest-lark-ws", daemon=True)
        self._thread.start()
        self._ready.wait(THREAD_TIMEOUT_S)

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._stopping.set()
        deadline = time.monotonic() + THREAD_TIMEOUT_S
        # Again until the thread ends: a cancel can land between two of the SDK's run_until_complete calls.
        while self._thread.is_alive() and time.monotonic() < deadline:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._cancel_all)
            self._thread.join(0.1)
        if self._thread.is_alive():
            log.warning("Lark: the long connection did not stop within %s s", THREAD_TIMEOUT_S)
        self._thread = None

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._ws.loop = loop
        self._loop = loop
        self._client = self._make_client()  # after set_event_loop: its cache schedules a task on the loop
        self._ready.set()
        try:
            self._client.start()
        except asyncio.CancelledError:
            pass  # stop()
        except Exception as exc:  # e.g. refused credentials: the SDK gives up without retrying
            if not self._stopping.is_set():
                log.error("Lark: the long connection ended: %s", exc)
        finally:
            self._close(loop)

    def _cancel_all(self) -> None:
        self._client._auto_reconnect = False  # a closed socket must not start a reconnect
        for task in asyncio.all_tasks():
            task.cancel()

    def _close(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            conn = getattr(self._client, "_conn", None)
            if conn is not None:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(asyncio.wait_for(conn.close(), THREAD_TIMEOUT_S))
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=1))
        finally:
            loop.close()
