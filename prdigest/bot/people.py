"""Who a GitHub login is in a chat: the person's id for the platform in ``[[people]]``, else the platform's
user with one of the person's emails (asked through the adapter, the answer kept a day in the cache),
else nobody, and the name stays plain.

A mention is a courtesy: nothing here fails a delivery. An app without the permission to find users by
email is said once per platform in the log (asked again a day later, in case it was granted); any other
failure is a warning and stops the asking for that report. Every id, from the settings, the platform or
the cache, is checked against the platform's shape before it reaches a mention's markup.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import datetime

from prdigest.bot.adapters import ChatAdapter, LookupDenied
from prdigest.config import Settings
from prdigest.config.models import CHAT_USER_IDS, chat_user_id
from prdigest.storage.chat_users import KEPT, looked_up, remember
from prdigest.storage.db import Store

log = logging.getLogger("prdigest.people")

MAX_EMAIL = 254  # RFC 5321's longest address: a longer "owner" is not one


def mentions(
    settings: Settings,
    store: Store,
    adapter: ChatAdapter,
    platform: str,
    logins: Iterable[str],
    now: datetime,
) -> dict[str, str]:
    """``logins`` (GitHub logins in any capitals, CODEOWNERS emails or teams) -> ``adapter.mention`` of
    the platform's user, for each one found; the others are left out and stay plain names (a team
    always: it is no one person). ``now`` (timezone-aware) dates the cache's answers."""
    found: dict[str, str] = {}
    if platform not in CHAT_USER_IDS:
        return found  # a platform whose ids prdigest cannot check is never given one
    directory = _Directory(settings, store, adapter, platform, now)
    try:
        for login in logins:
            user = directory.user_of(login) if login not in found else None
            if user is not None:
                found[login] = adapter.mention(user)
    except Exception as exc:  # the cache failing, say: the report goes out with the names found so far
        log.warning("%s: could not look up who to mention (%s); the other names stay plain", platform, exc)
    return found


class _Directory:
    """One report's look-ups on one platform."""

    def __init__(self, settings: Settings, store: Store, adapter: ChatAdapter, platform: str, now: datetime):
        self.people = {p.github.casefold(): p for p in settings.people}
        self.logins = settings.logins()  # email -> login
        self.store, self.adapter, self.platform, self.now = store, adapter, platform, now
        self.asking = True  # until a look-up fails: the rest of the report is not held up by a broken API

    def user_of(self, login: str) -> str | None:
        if "/" in login:
            return None  # a team ("org/team"): no one person
        if "@" in login:  # a CODEOWNERS email: its [[people]] entry's id, else its own user
            if login.count("@") != 1 or len(login) > MAX_EMAIL or login != login.strip():
                return None
            person = self.people.get(self.logins.get(login.casefold(), "").casefold())
            emails = [login]
        else:
            person = self.people.get(login.casefold())
            emails = person.email if person is not None else []
        configured = getattr(person, self.platform, None)
        if configured is not None:
            return chat_user_id(self.platform, configured)
        return next((user for user in map(self._by_email, emails) if user is not None), None)

    def _by_email(self, email: str) -> str | None:
        cached = looked_up(self.store, self.platform, email, self.now)
        if cached is not None and (cached.user_id is None or chat_user_id(self.platform, cached.user_id)):
            return cached.user_id
        if not self.asking or _DENIALS.denied(self.platform, self.now):
            return None
        try:
            user = self.adapter.user_by_email(email)
        except LookupDenied as exc:
            self.asking = False
            _DENIALS.deny(self.platform, self.now, exc)
            return None
        except Exception as exc:  # the platform down or refusing: this report's names stay plain
            self.asking = False
            log.warning(
                "%s: could not find a user by email (%s); names stay plain in this report", self.platform, exc
            )
            return None
        if user is not None and chat_user_id(self.platform, user) is None:
            log.warning("%s: found a user id that is not one (%.40r); not used", self.platform, user)
            return None
        remember(self.store, self.platform, email, user, self.now)
        return user


class _Denials:
    """Per platform: since when it refuses look-ups by email (asked again a day later), and whether the
    log said so already (once per process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since: dict[str, datetime] = {}
        self._told: set[str] = set()

    def denied(self, platform: str, now: datetime) -> bool:
        with self._lock:
            since = self._since.get(platform)
            return since is not None and since <= now < since + KEPT

    def deny(self, platform: str, now: datetime, exc: LookupDenied) -> None:
        with self._lock:
            self._since[platform] = now
            told = platform in self._told
            self._told.add(platform)
        if not told:
            log.warning("%s; names of people without a %s id in [[people]] stay plain", exc, platform)


_DENIALS = _Denials()
