"""One entry for every adapter: text in, Reply out; never a traceback."""

from __future__ import annotations

import logging

from prdigest.errors import PrdigestError
from prdigest.handlers.commands import parse, spec
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Answer, text_reply
from prdigest.i18n import texts

log = logging.getLogger("prdigest.handlers")


def handle(text: str, ctx: Context, svc: Services) -> Reply:
    cmd = parse(text)
    lang = ctx.lang or cmd.lang
    try:
        return spec(cmd.name).handler(cmd, ctx, svc)
    except Answer as answer:
        return answer.reply
    except PrdigestError as exc:
        t = texts(lang)
        error = t[exc.key].format(**exc.params) if exc.key in t else str(exc).rstrip(".")
        return text_reply(
            "error", lang, t["bad_input"].format(error=error, usage=f"`{t[f'usage_{cmd.name}']}`")
        )
    except Exception:
        log.exception("command %r failed", cmd.name)
        return text_reply("error", lang, texts(lang)["error_apology"])
