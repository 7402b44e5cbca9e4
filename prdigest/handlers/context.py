"""Who asks, where, and the services a handler may use."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import date, datetime

from pydantic import BaseModel

from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.models import Lang, Platform, Window
from prdigest.sources.base import Source
from prdigest.storage import Store


class Thread(BaseModel):
    """The report card a message answers in the thread of: its repository, period and language."""

    repo: str
    since: date
    until: date
    tz: str
    lang: Lang


class Context(BaseModel):
    platform: Platform
    chat_id: str
    user_id: str
    # A direct message: the asker sees the repositories of the chats they are in (handlers/access.py).
    direct: bool = False
    # A language forced by the caller (the console's --lang); else the message's own (see dispatch).
    lang: Lang | None = None
    # Follow-ups in a card's thread take its repository and period unless they name others.
    thread: Thread | None = None


@dataclass
class Services:
    settings: Settings
    store: Store
    # The repository of a chat with no subscription (the console's --repo/--git/--fixture).
    default_repo: str | None = None
    # Where to read a repository's PRs that the cache lacks; None: the cache is all there is.
    source_for: Callable[[str], Source | None] = lambda repo: None
    clock: Callable[[], datetime] = field(default=utc_now)
    # (platform, user id, chat ids): the chats among those the user is in; None when the platform
    # cannot say (the app lacks the permission, or no adapter of the platform runs).
    member_chats: Callable[[str, str, Collection[str]], set[str] | None] = lambda *_: None
    # Called after a chat command changed the subscriptions (the scheduler rebuilds its jobs).
    on_subscriptions_changed: Callable[[], None] = lambda: None
    # (platform, chat id, repository, week): redraw in place the chat's weekly card of that week and
    # repository, if one was posted (after a button changed what it says).
    redraw: Callable[[str, str, str, Window], None] = lambda *_: None

    def is_admin(self, ctx: Context) -> bool:
        if ctx.platform == "console":  # a private console session is its owner's
            return True
        return ctx.user_id in getattr(self.settings.admins, ctx.platform)
