"""A source read on a chat's behalf: at most so many days a command and so many points a chat an hour.

A chat message may name any period; read whole, one `report 2024-01-01..2026-08-31` would spend a
team's GitHub budget on one answer. A source that keeps its request budget (one that does not read
history cheaply: GitHub) is read through `BoundedSource` for a chat command: its reads together
cover at most ``days`` days, the latest of each read first, and none starts once the chat's points
for the hour are spent (a read under way finishes). What they leave is answered from the cache, and
the report says which days were not read. A local clone reads as it always does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, cast

from prdigest.i18n import texts
from prdigest.models import PullRequest, Window
from prdigest.storage import chat_points

if TYPE_CHECKING:
    from prdigest.config.models import AttentionSettings, ChatSettings
    from prdigest.models import Attention
    from prdigest.sources.base import BatchHook, Source
    from prdigest.storage import Store


class BoundedSource:
    """``source`` as the Source protocol gives it, its reads into the cache capped at ``days`` days and
    ``points`` request points (those the chat has left this hour, of ``points_limit``)."""

    def __init__(self, source: Source, lang: str, days: int, points: int, points_limit: int) -> None:
        self.source = source
        self.lang = lang
        self.days_left, self.days_limit = days, days
        self.points, self.points_limit = points, points_limit
        self._start = source.points_spent()
        self.kind = source.kind
        self.repo = source.repo
        self.unavailable = source.unavailable
        self.reads_history = source.reads_history
        self.finds_prs = source.finds_prs

    def read_into(self, store: Store, window: Window, each_batch: BatchHook | None = None) -> list[str]:
        days = (window.until - window.since).days + 1
        if self.points <= self.spent:
            return [self._unread("read_points_spent", self.points_limit, window, window.until)]
        read = min(days, self.days_left)
        self.days_left -= read
        warnings = []
        if read:
            part = Window(since=window.until - timedelta(days=read - 1), until=window.until, tz=window.tz)
            warnings = self.source.read_into(store, part, each_batch)
        if read < days:
            warnings.append(
                self._unread("read_capped", self.days_limit, window, window.until - timedelta(days=read))
            )
        return warnings

    @property
    def spent(self) -> int:
        """The points the source spent since the command began (its reads, what is open now, its file)."""
        return self.source.points_spent() - self._start

    def _unread(self, key: str, limit: int, window: Window, until: object) -> str:
        return texts(self.lang)[key].format(repo=self.repo, limit=limit, since=window.since, until=until)

    def fetch(self, window: Window) -> list[PullRequest]:
        return self.source.fetch(window)

    def fetch_pr(self, number: int) -> PullRequest | None:
        return self.source.fetch_pr(number)

    def read_for_counts(self, window: Window) -> Iterable[PullRequest] | None:
        return None  # a read of its own: the cap counts whole reads, and the cache answers for the rest

    def reading_ahead(self, whole: list[Window], counted: list[Window]) -> AbstractContextManager[object]:
        return nullcontext()  # each read is capped as it comes

    # Each of these costs a request too: once the points are spent, the cache answers alone.
    def diff(self, number: int, store: Store | None = None) -> str | None:
        return self.source.diff(number, store) if self.points > self.spent else None

    def newest_merged(self) -> tuple[int, datetime] | None:
        return self.source.newest_merged() if self.points > self.spent else None

    def extent(self) -> tuple[datetime | None, datetime | None]:
        return self.source.extent()

    # What is open now cannot be told, and the file comes from the cache.
    def begins(self) -> datetime | None:
        return self.source.begins()

    def attention(self, thresholds: AttentionSettings, now: datetime) -> Attention | None:
        return self.source.attention(thresholds, now) if self.points > self.spent else None

    def repo_file(self) -> str | None:
        return self.source.repo_file() if self.points > self.spent else None

    def points_spent(self) -> int:
        return self.source.points_spent()


@contextmanager
def chat_reads(
    store: Store,
    source_for: Callable[[str], Source | None],
    chat: str,
    lang: str,
    limits: ChatSettings,
    now: datetime,
) -> Iterator[Callable[[str], Source | None]]:
    """The sources one command of ``chat`` reads (``source_for``'s, bounded where they cost a request
    budget); the points they spent are counted against the chat's hour when the command is done."""
    made: list[BoundedSource] = []
    # What the chat spent before this command: read once, and only by a command with a remote source.
    earlier = cache(lambda: chat_points.spent(store, chat, now))

    def bounded_for(repo: str) -> Source | None:
        source = source_for(repo)
        if source is None or source.reads_history:
            return source
        left = limits.github_points_per_hour - earlier() - sum(b.spent for b in made)
        made.append(BoundedSource(source, lang, limits.max_sync_days, left, limits.github_points_per_hour))
        # A Source by structure: the protocol's class attributes are the wrapped source's, per instance.
        return cast("Source", made[-1])

    try:
        yield bounded_for
    finally:
        chat_points.add(store, chat, now, sum(b.spent for b in made))
