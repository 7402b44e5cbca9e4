"""A chat message decided once, when it arrives: the rules' reading of it (the command and the language of
its answer) and who asks where. The lane, the working notice and the handler all take this one decision."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

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

    @property
    def routable(self) -> bool:
        """Whether an LLM, when one is configured, routes the message: one no command word nor PR number
        placed (the rules read it as a question, or as help); the rules' reading stands when the model's is
        invalid."""
        return self.text is not None and self.error is None and not self.intent.placed


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


def describe(reading: Reading, today: date, tz: str) -> dict[str, object]:
    """The reading as `prdigest parse` prints it: periods resolved to ISO dates in ``tz`` on ``today``; what
    makes the message unanswerable as written (a PR number, a period) as ``error``, in English."""
    intent, error, window = reading.intent, reading.error, None
    if error is None:
        try:
            window = intent.window_in(today, tz)
        except PrdigestError as exc:  # a period that names no days, or only future ones
            error = exc
    described: dict[str, object] = {
        "command": intent.command,
        "since": window.since.isoformat() if window else None,
        "until": window.until.isoformat() if window else None,
        "n": intent.n,
        "pr": intent.pr,
        "repo": intent.repo,
        "lang": intent.lang,
        "question": intent.question or None,
    }
    if error is not None:
        described["error"] = str(error)
    return described


def request(message: str | Intent, ctx: Context) -> Request:
    return Request(read(message, ctx.lang), ctx)
