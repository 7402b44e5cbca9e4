"""The one registry of chat commands (help is generated from it) and the Intent a message is read as.

`prdigest.handlers.understand` reads a message into an Intent; a button or a card's
thread builds one directly. Handlers get the Intent, never the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from prdigest.models import Lang, Window
from prdigest.periods import Period, default_window

if TYPE_CHECKING:
    from prdigest.handlers.context import Context, Services
    from prdigest.handlers.replies import Reply

Handler = Callable[["Intent", "Context", "Services"], "Reply"]
NAMES = ("report", "risks", "top", "explain", "authors", "hot", "ask", "help", "subscribe", "unsubscribe",
         "subscriptions", "preview", "mute", "unmute", "dismiss", "undismiss")  # fmt: skip
# Commands about a period: one that names none gets the last complete week.
PERIOD_COMMANDS = frozenset({"report", "risks", "top", "authors", "hot"})

MAX_MESSAGE_CHARS = 2000
_MENTION = re.compile(r"^\s*(?:<at\b[^>]*>.*?</at>|<@[A-Z0-9]+(?:\|[^>]*)?>|@\S+)\s*", re.I | re.S)


@dataclass(frozen=True)
class Intent:
    """What a message asks for, decided once: the command, its period, count, PR, repository, language."""

    command: str
    lang: Lang = "en"
    period: Period | None = None  # as the message names it; days fixed in the asker's timezone
    window: Window | None = None  # a fixed window: a button's or the card a thread answers
    n: int | None = None
    pr: int | None = None
    repo: str | None = None
    question: str = ""  # ask: the question as written; help: the text not understood
    args: str = ""  # admin commands and preview: the words after the command
    suggestion: str | None = None  # help: the command word the user probably meant
    # False when no command word nor PR number placed the message (an LLM may route it).
    placed: bool = True

    def window_in(self, today: date, tz: str) -> Window | None:
        """The days this intent is about, in ``tz``; None for a command without a period."""
        if self.window is not None:
            return self.window
        if self.period is not None:
            return self.period.window(today, tz)
        return default_window(today, tz) if self.command in PERIOD_COMMANDS else None


@dataclass(frozen=True)
class CommandSpec:
    name: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    handler: Handler
    admin: bool = False


COMMANDS: list[CommandSpec] = []


def command(
    name: str, en: tuple[str, ...], zh: tuple[str, ...], admin: bool = False
) -> Callable[[Handler], Handler]:
    """Register a handler under its English and Chinese command words."""

    def register(fn: Handler) -> Handler:
        COMMANDS.append(CommandSpec(name, en, zh, fn, admin))
        return fn

    return register


def spec(name: str) -> CommandSpec:
    return next(c for c in COMMANDS if c.name == name)


def clean(text: str) -> str:
    """The message without leading @mentions, a leading slash or the bot's own name."""
    text = text[:MAX_MESSAGE_CHARS].replace("\u3000", " ")
    previous = None
    while previous != text:
        previous = text
        text = _MENTION.sub("", text, count=1)
    text = text.strip().lstrip("/").strip()
    if text.lower().startswith("prdigest"):
        text = text[len("prdigest") :].strip()
    return text
