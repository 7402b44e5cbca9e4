"""One entry for every adapter: a message (or a button's Intent) in, Reply out; never a traceback,
never a configured secret or a secret-shaped text (every string of the Reply is scrubbed)."""

from __future__ import annotations

import logging
import time

from prdigest.errors import PrdigestError
from prdigest.handlers.access import chat_sees
from prdigest.handlers.commands import Intent, spec
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.request import Reading, Request, request
from prdigest.handlers.scope import Answer, text_reply
from prdigest.i18n import texts
from prdigest.metrics import observe_command
from prdigest.periods import today_in
from prdigest.redact import scrub, scrub_value

log = logging.getLogger("prdigest.handlers")


def _said(exc: PrdigestError, t: dict[str, str]) -> str:
    """An error in the asker's language, with the error it gives as its reason (a param) said in it too."""
    if exc.key not in t:
        return str(exc).rstrip(".")
    params = {k: _said(v, t) if isinstance(v, PrdigestError) else v for k, v in exc.params.items()}
    return t[exc.key].format(**params)


def _routed(reading: Reading, svc: Services) -> Intent:
    """The rules' Intent; for a message they could not place, the LLM's tool call when one is configured
    (the rules' reading stands when the model's is unusable)."""
    intent = reading.intent
    if not reading.routable or svc.settings.llm is None or reading.text is None:
        return intent
    from prdigest.handlers.routing import route

    today = today_in(svc.clock(), svc.settings.report.timezone)
    return route(reading.text, intent, svc.settings.llm, today, svc.store)


def handle(message: str | Intent, ctx: Context, svc: Services) -> Reply:
    """A message read and answered at once (the console; the bot reads on arrival and calls `answer`)."""
    return answer(request(message, ctx), svc)


def answer(req: Request, svc: Services) -> Reply:
    # What a server answered or a PR says reaches chat: no secret in it is repeated.
    started = time.perf_counter()
    ctx = req.ctx
    command, reply = _answer(req.reading, ctx, svc)
    seconds, outcome = time.perf_counter() - started, "error" if reply.kind == "error" else "ok"
    observe_command(command, outcome, seconds)
    # One line per command, what the operator's log says of the chat: which command, where, how it went.
    log.info(
        "%s command %s in %s: %s in %.0f ms", ctx.platform, command, ctx.chat_id, outcome, seconds * 1000,
        extra={"platform": ctx.platform, "chat": ctx.chat_id, "command": command, "outcome": outcome,
               "reply": reply.kind, "ms": round(seconds * 1000, 1)},
    )  # fmt: skip
    if reply.report is None:
        return scrub_value(reply)
    # An answer the chat's subscriptions do not cover was the asker's (an admin, a direct message): so is
    # its page. With [access] open every page is the chat's, checked again should access close. Without
    # a public URL no page is linked: nothing to decide.
    pages = svc.settings.public_url is not None
    if pages and not svc.settings.access.open and not chat_sees(svc, ctx, reply.report.repo):
        reply = reply.model_copy(update={"page_viewer": "asker"})
    # Its report was scrubbed as it was built (scope.week_report): walking a large week's every string
    # again on each reply made a cached reply of 2,000 PRs take a second.
    return scrub_value(reply.model_copy(update={"report": None})).model_copy(update={"report": reply.report})


def _answer(reading: Reading, ctx: Context, svc: Services) -> tuple[str, Reply]:
    """The command the message was read as (the one it failed in, when reading it failed) and its Reply,
    in the language of the reading."""
    lang, name = reading.lang, reading.intent.command
    try:
        if reading.error is not None:
            raise reading.error
        intent = _routed(reading, svc)  # the router keeps the reading's language
        name = intent.command
        return name, spec(name).handler(intent, ctx, svc)
    except Answer as answered:
        return name, answered.reply
    except PrdigestError as exc:
        t = texts(lang)
        # An error may quote what a user pasted or a server answered: a secret in it is not repeated.
        error = scrub(_said(exc, t))
        usage = f"`{t[f'usage_{name}']}`"
        return name, text_reply("error", lang, t["bad_input"].format(error=error, usage=usage))
    except Exception:
        log.exception("command %r failed", name)
        return name, text_reply("error", lang, texts(lang)["error_apology"])
