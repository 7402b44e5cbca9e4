"""Which chats a user is in, as each platform's adapter says, remembered for a few minutes: a direct
message sees the repositories of its asker's chats (handlers/access.py), and asking the platform on
every message would spend its rate limit."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection

Lookup = Callable[[str, Collection[str]], set[str] | None]  # (user id, chat ids) -> the user's among them

TTL_S = 300.0  # a user who joins or leaves a chat is seen so much later at most
MAX_ENTRIES = 10_000


class Membership:
    """``member_chats(platform, user, chats)`` for `Services`, over the adapters' lookups."""

    def __init__(self, lookups: dict[str, Lookup], ttl_s: float = TTL_S):
        self.lookups = lookups
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str, frozenset[str]], tuple[float, set[str] | None]] = {}

    def __call__(self, platform: str, user_id: str, chat_ids: Collection[str]) -> set[str] | None:
        lookup = self.lookups.get(platform)
        if lookup is None:
            return None
        key = (platform, user_id, frozenset(chat_ids))
        now = time.monotonic()
        with self._lock:
            known = self._known.get(key)
        if known is not None and now - known[0] < self.ttl_s:
            return known[1]
        found = lookup(user_id, chat_ids)
        with self._lock:
            if len(self._known) >= MAX_ENTRIES:
                self._known.clear()  # a burst of new askers: start over rather than grow
            # A refusal (None) is asked again soon too: the permission may be granted meanwhile.
            self._known[key] = (now, found)
        return found
