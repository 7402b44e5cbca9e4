"""A chat message decided once, when it arrives: the rules' reading of it (the command and the language of
its answer) and who asks where. The lane, the working notice and the handler all take this one decision."""

from __future__ import annotations

from dataclasses import dataclass, replace

from prdigest.errors import PrdigestError
from prdigest.handlers.commands import Intent, clean
from prdigest.handlers.context import Context
from prdigest.handlers.understand import understand
from prdigest.i18n import detect_lang
from prdigest.models import Lang


@dataclass(frozen=True)
class Reading:
    """What a message asks, by the rules, its language final; or the error reading it raised."""

    intent: Intent
    text: str | None = None  # the message as written, for the LLM router; None for a button
    error: PrdigestError | None = None

    @property
    def lang(self) -> Lang:
        """The language the answer, and any notice before it, speaks."""
        return self.intent.lang


@dataclass(frozen=True)
class Request:
    reading: Reading
    ctx: Context


def read(message: str | Intent, lang: Lang | None = None) -> Reading:
    """The rules' reading of a message (a button's Intent as it is). ``lang``, a language the caller forces
    (the console's --lang), wins; else the message's own ("周报 in English" asks for English)."""
    if isinstance(message, Intent):
        return Reading(replace(message, lang=lang or message.lang))
    try:
        intent = understand(message)
    except PrdigestError as exc:  # a PR number out of range: the one command whose reading can fail
        return Reading(Intent("explain", lang or detect_lang(clean(message))), message, exc)
    return Reading(replace(intent, lang=lang or intent.lang), message)


def request(message: str | Intent, ctx: Context) -> Request:
    return Request(read(message, ctx.lang), ctx)
