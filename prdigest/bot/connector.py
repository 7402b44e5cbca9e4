"""A chat platform's connection as `prdigest serve` keeps it: started in the background, retried until
it starts, and probed (cached) for /readyz.

A platform that cannot be reached at start (down, 5xx, a timeout) must not take the other platform,
the scheduler and the web app with it: its adapter's ``start`` is tried in a daemon thread, again
after a capped exponential backoff (retries.py), until it succeeds or the service stops. A credential
the platform refuses (its adapter's ``refused`` says which errors mean that) is logged as such and
tried again only every few minutes (someone may fix it without a restart).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from prdigest.bot import retries
from prdigest.bot.adapters import ChatAdapter
from prdigest.errors import ConfigError
from prdigest.logs import adopt_library_loggers
from prdigest.redact import summary

log = logging.getLogger("prdigest.serve")

REFUSED_WAIT_S = 300.0  # between two tries of a refused credential
PROBE_TTL_S = 5.0  # a platform's API is probed at most this often, however often /readyz is asked
JOIN_S = 5.0  # how long stop() waits for a start in progress


@dataclass(frozen=True)
class Part:
    """One part of the service's readiness."""

    ok: bool
    detail: str


@runtime_checkable
class Probing(Protocol):
    """An adapter's outbound client that can tell whether the platform answers and accepts it now."""

    def probe(self) -> None: ...


def refused(adapter: ChatAdapter, exc: BaseException) -> bool:
    """Whether a failure is the platform refusing the credential (or a setting missing): retrying soon
    cannot help."""
    return isinstance(exc, ConfigError) or adapter.refused(exc)


def describe(exc: BaseException) -> str:
    """A failure as a short reason, for the log and /readyz: scrubbed of any secret."""
    return f"{type(exc).__name__}: {summary(str(exc))}"


class Connector:
    """One platform's adapter: started in the background until it starts; its readiness, probed."""

    def __init__(
        self,
        name: str,
        adapter: ChatAdapter,
        *,
        backoff: Callable[[int], float] = retries.backoff_s,
        refused_wait_s: float = REFUSED_WAIT_S,
        probe_ttl_s: float = PROBE_TTL_S,
    ):
        self.name = name
        self.adapter = adapter
        self.backoff = backoff
        self.refused_wait_s = refused_wait_s
        self.probe_ttl_s = probe_ttl_s
        self.connected = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._status = Part(False, "starting")
        self._probe_lock = threading.Lock()
        self._probed: tuple[float, Part] | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"prdigest-{self.name}-start", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the retries at once, wait a little for a start in progress, then stop the adapter."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(JOIN_S)
            if self._thread.is_alive():
                log.warning("%s: a start still in progress is left behind", self.name)
        self.adapter.stop()

    def _run(self) -> None:
        attempt = 0
        while not self._stopping.is_set():
            attempt += 1
            try:
                self.adapter.start()
            except Exception as exc:  # anything: the other platforms, the scheduler and the web app go on
                reason = describe(exc)
                if refused(self.adapter, exc):
                    wait = self.refused_wait_s
                    what = (
                        "is not configured right"
                        if isinstance(exc, ConfigError)
                        else "refused the credentials"
                    )
                    log.error("%s %s (%s); trying again in %.0f s", self.name, what, reason, wait)
                else:
                    wait = self.backoff(attempt)
                    log.warning("%s: could not connect (%s); trying again in %.1f s", self.name, reason, wait)
                self._status = Part(False, f"not connected: {reason}")
                self._stopping.wait(wait)
                continue
            adopt_library_loggers()  # any the adapter loaded as it started
            self._status = Part(True, "connected")
            self.connected.set()
            log.info("%s: connected", self.name)
            return

    def readiness(self) -> Part:
        """Not started yet: why; started: the platform's answer to a probe, at most every few seconds."""
        if not self.connected.is_set():
            return self._status
        probe = getattr(self.adapter, "out", None)
        if not isinstance(probe, Probing):
            return self._status
        with self._probe_lock:
            now = time.monotonic()
            if self._probed is None or now - self._probed[0] >= self.probe_ttl_s:
                self._probed = (now, _probe(self.adapter, probe))
            return self._probed[1]


def _probe(adapter: ChatAdapter, client: Probing) -> Part:
    try:
        client.probe()
    except Exception as exc:
        return Part(False, f"{'refused' if refused(adapter, exc) else 'unreachable'}: {describe(exc)}")
    return Part(True, "connected")
