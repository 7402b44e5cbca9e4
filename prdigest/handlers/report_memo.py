"""Chat's period reports, built once per (repository, window, language, engine, source, cache revision)
and shared by every command and button until the cache changes.

A 2,000-PR week costs about half a second to build from the cache; `risks`, `top`, `authors`, `hot`
and a card's buttons all read the same report. The cache's revision (storage/revision.py) changes on
any write to PRs, analyses or coverage, by this process or another, so a memoised report is never
older than the cache; one that leaves out a snoozed item is built again when the snooze runs out (a
snooze's end changes no row). Callers must treat the report as read-only: it is shared between replies.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.models import Report
from prdigest.storage import Store
from prdigest.storage.revision import revision

# Reports kept per store: a chat asks about a few periods at a time, and a 2,000-PR report is a few MB.
SIZE = 4


@dataclass(frozen=True)
class Key:
    repo: str
    since: str
    until: str
    tz: str
    lang: str
    engine: str  # the LLM's model, else "rules": the narrative and analyses depend on it
    source: str  # the source kind: which signals the report says it lacks
    shaping: str = ""  # the chat's subscription's filters and muted rules (they change no revision)


@dataclass
class _Entry:
    report: Report
    revision: int
    settings: Settings  # the settings the report was built with (compared by identity)
    # When the first snooze it honours runs out: the report is then built again, the item back in it.
    expires: datetime | None = None


@dataclass
class _Flight:
    """One build of one key at a time: the others wait for it and take its report."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    built: Report | None = None
    after: int = -1  # the cache's revision when `built` was done
    settings: Settings | None = None  # the settings it was built with


class ReportMemo:
    def __init__(self, size: int = SIZE):
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._flights: dict[Key, _Flight] = {}

    def get(self, key: Key, rev: int, settings: Settings) -> Report | None:
        with self._lock:
            entry = self._entries.get(key) if self.size > 0 else None  # size 0: off
            if entry is None or entry.revision != rev or entry.settings is not settings:
                return None
            if entry.expires is not None and utc_now() >= entry.expires:
                return None
            self._entries.move_to_end(key)
            return entry.report

    def put(self, key: Key, rev: int, settings: Settings, report: Report) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = _Entry(report, rev, settings, _expires(report))
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def report(
        self,
        store: Store,
        settings: Settings,
        key: Key,
        build: Callable[[], Report],
        keep: Callable[[Report], bool] = lambda _: True,
    ) -> Report:
        """The memoised report of ``key`` at the cache's current revision, else one ``build``: a single
        build however many threads ask at once, its report shared with those that waited for it;
        ``keep`` says whether a built report may answer later requests."""
        found = self.get(key, revision(store, key.repo), settings)
        if found is not None:
            return found
        with self._lock:
            flight = self._flights.setdefault(key, _Flight())
            flight.users += 1
        try:
            with flight.lock:
                before = revision(store, key.repo)
                found = self.get(key, before, settings)
                if found is not None:  # built and kept while this thread waited
                    return found
                if flight.built is not None and flight.after == before and flight.settings is settings:
                    return flight.built  # built while this thread waited, and the cache is as it left it
                built = build()
                flight.built, flight.after, flight.settings = built, revision(store, key.repo), settings
                # A build that wrote to the cache (analyses of new PRs, days read) may also have raced
                # another writer: only a build the revision stood still over is known to match it. The
                # next request's build, over an unchanged cache, is kept.
                if flight.after == before and keep(built):
                    self.put(key, before, settings, built)
                return built
        finally:
            with self._lock:
                flight.users -= 1
                if flight.users == 0:
                    del self._flights[key]


def _expires(report: Report) -> datetime | None:
    ends = [s.until for shown in (report, *report.parts) for s in shown.snoozed if s.until is not None]
    return min(ends, default=None)


_memos: weakref.WeakKeyDictionary[Store, ReportMemo] = weakref.WeakKeyDictionary()
_memos_lock = threading.Lock()


def memo_for(store: Store) -> ReportMemo:
    """The store's memo: reports are only valid against the database they were read from."""
    with _memos_lock:
        memo = _memos.get(store)
        if memo is None:
            memo = _memos[store] = ReportMemo()
        return memo
