"""Chat text -> Command, and the one registry of commands that help is generated from.

A message may start with an @mention or a slash; the command word may be English
or Chinese (the language of the reply follows it). Anything that names no
command is a free question, unless it is a short near-miss of a command word:
that gets help with the closest command.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from prdigest.i18n import detect_lang

if TYPE_CHECKING:
    from prdigest.handlers.context import Context, Services
    from prdigest.handlers.replies import Reply

Lang = Literal["zh", "en"]
Handler = Callable[["Command", "Context", "Services"], "Reply"]

MAX_MESSAGE_CHARS = 2000
_MENTION = re.compile(r"^\s*(?:<at\b[^>]*>.*?</at>|<@[A-Z0-9]+(?:\|[^>]*)?>|@\S+)\s*", re.I | re.S)
# A period said before the command ("上周风险", "last week top 3") moves behind it.
_PERIOD_FIRST = re.compile(r"^(本周|这周|上周|last week\b|this week\b)(?:'s\b)?\s*(.+)$", re.I | re.S)
# A short Chinese question that names what a command shows ("本周有什么风险？", "上周谁是主要作者"):
# that command, with the period the question names.
_ZH_TOPICS = (("风险", "risks"), ("热点", "hot"), ("作者", "authors"), ("重点", "top"), ("周报", "report"))
_ZH_PERIODS = re.compile(r"本周|这周|上周|\d{4}-?[wW]\d{1,2}")
_ZH_QUESTION_CHARS = 24
_GREETINGS = frozenset({"hi", "hello", "hey", "hallo", "yo", "你好", "您好", "嗨", "哈喽", "在吗"})


class Command(BaseModel):
    name: str
    args: str = ""
    lang: Lang = "en"
    # For help: the command word the user probably meant.
    suggestion: str | None = None


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


def _words() -> list[tuple[str, CommandSpec, Lang]]:
    words = [(w, c, "en") for c in COMMANDS for w in c.en] + [(w, c, "zh") for c in COMMANDS for w in c.zh]
    return sorted(words, key=lambda item: -len(item[0]))  # "show risks" before "show"


def parse(text: str) -> Command:
    text = clean(text)
    if not text or text.lower().strip(" !！.。?？~") in _GREETINGS:
        return Command(name="help", lang=detect_lang(text))
    if match := _PERIOD_FIRST.match(text):
        moved = _command(f"{match.group(2)} {match.group(1)}")
        if moved is not None:
            # A Chinese period before an English command word ("上周 top 3"): the answer is in Chinese.
            return moved.model_copy(update={"lang": "zh"}) if detect_lang(match.group(1)) == "zh" else moved
    if (found := _command(text)) is not None:
        return found
    lowered = text.lower()
    near = _closest(lowered)
    if near is not None:
        return Command(name="help", args=text, lang=detect_lang(text), suggestion=near)
    if (topic := _zh_topic(text)) is not None:
        return topic
    return Command(name="ask", args=text, lang=detect_lang(text))


def _command(text: str) -> Command | None:
    """The command whose word starts the text, with the rest as its arguments."""
    lowered = text.lower()
    for word, c, lang in _words():
        if lowered.startswith(word):
            rest = text[len(word) :]
            # English words end at a word boundary; Chinese ones may run into their argument ("解释#3128").
            if lang == "zh" or not rest or not (rest[0].isalnum() or rest[0] == "_"):
                return Command(name=c.name, args=rest.strip(" :：,，"), lang=lang)
    return None


def _zh_topic(text: str) -> Command | None:
    if detect_lang(text) != "zh" or len(text) > _ZH_QUESTION_CHARS or "#" in text:
        return None
    name = next((name for word, name in _ZH_TOPICS if word in text), None)
    if name is None:
        return None
    return Command(name=name, args=" ".join(_ZH_PERIODS.findall(text)), lang="zh")


def _closest(lowered: str) -> str | None:
    """A short message whose first word nearly spells a command word."""
    tokens = lowered.split()
    if not tokens or len(tokens) > 3:
        return None
    words = [w for w, _, _ in _words() if " " not in w]
    match = difflib.get_close_matches(tokens[0], words, n=1, cutoff=0.75)
    return match[0] if match else None
