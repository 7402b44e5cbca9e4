"""The one registry of chat commands (help, the parser, the LLM router and the lanes derive from it) and
the Intent a message is read as.

`prdigest.handlers.understand` reads a message into an Intent; a button or a card's
thread builds one directly. Handlers get the Intent, never the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from prdigest.models import Lang, Window
from prdigest.periods import Period, default_window

if TYPE_CHECKING:
    from pydantic import BaseModel

    from prdigest.handlers.context import Context, Services
    from prdigest.handlers.replies import Reply

Handler = Callable[["Intent", "Context", "Services"], "Reply"]
# How a command's request is run (handlers/lanes.py): "fast" reads and writes a few rows; "question" calls
# the LLM when one is configured; "cached" answers from the period's report; "pr" from one PR's analysis;
# "slow" reads a source or builds a whole report.
LaneKind = Literal["fast", "question", "cached", "pr", "slow"]

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
        return default_window(today, tz) if spec(self.command).period else None


@dataclass(frozen=True)
class CommandSpec:
    """A chat command: all that help, the parser, the LLM router and the lanes know of it. Its texts are
    ``usage_<name>`` and ``about_<name>`` in every language (prdigest/i18n/chat.py)."""

    name: str
    en: tuple[str, ...]  # the words that start it
    zh: tuple[str, ...]
    handler: Handler
    order: int  # its place in help: the weekly questions first, admin commands last
    admin: bool = False
    period: bool = False  # about a period: one that names none gets the last complete week
    # Read only from its leading word ("mute no_tests" is no question about tests)...
    leads: bool = False
    # ...or from these words anywhere in a short message ("show me the risks"); when several commands'
    # words are there, the lowest ``specific`` wins.
    said: re.Pattern[str] | None = None
    specific: int = 0
    asked: bool = False  # its words name it in a question too ("which repos does this chat follow?")
    names_pr: bool = False  # a command that must lead and names a PR: its number is read as explain's is
    lane: LaneKind = "slow"
    # The LLM router's tool: its arguments' model (pydantic) and what it is for; None: never routed.
    tool: type[BaseModel] | None = None
    tool_about: str = ""

    @property
    def text_keys(self) -> tuple[str, str]:
        return f"usage_{self.name}", f"about_{self.name}"


COMMANDS: list[CommandSpec] = []


def command(
    name: str, en: tuple[str, ...], zh: tuple[str, ...], order: int, **facts: Any
) -> Callable[[Handler], Handler]:
    """Register a handler under its English and Chinese command words, with its facts (`CommandSpec`)."""

    def register(fn: Handler) -> Handler:
        COMMANDS.append(CommandSpec(name, en, zh, fn, order, **facts))
        return fn

    return register


def spec(name: str) -> CommandSpec:
    return next(c for c in COMMANDS if c.name == name)


def ranked(by: Callable[[CommandSpec], int]) -> list[CommandSpec]:
    return sorted(COMMANDS, key=by)


def words(*patterns: str) -> re.Pattern[str]:
    """A command's words, as ``said``: any of the patterns, case aside."""
    return re.compile("|".join(patterns), re.I)


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
