"""help: generated from the command registry, in the asker's language."""

from __future__ import annotations

from prdigest.handlers.commands import COMMANDS, Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import HelpLine, Reply
from prdigest.handlers.scope import text_reply
from prdigest.i18n import texts
from prdigest.render.markdown import escape

# The order help lists the commands in: the weekly questions first, admin commands last.
ORDER = (
    "report",
    "risks",
    "top",
    "explain",
    "authors",
    "hot",
    "ask",
    "preview",
    "subscriptions",
    "subscribe",
    "unsubscribe",
    "mute",
    "unmute",
    "dismiss",
    "undismiss",
)


def help_lines(lang: str) -> list[HelpLine]:
    t = texts(lang)
    ranked = sorted(COMMANDS, key=lambda c: ORDER.index(c.name) if c.name in ORDER else len(ORDER))
    return [HelpLine(usage=t[f"usage_{c.name}"], about=t[f"about_{c.name}"]) for c in ranked]


@command("help", en=("help", "?"), zh=("帮助",))
def show_help(intent: Intent, ctx: Context, svc: Services) -> Reply:
    lang = intent.lang
    t = texts(lang)
    lines = []
    if intent.suggestion:
        lines += [t["help_suggest"].format(text=escape(intent.question[:80]), word=intent.suggestion), ""]
    lines += [f"**{t['help_title']}**", "", t["help_intro"], ""]
    lines += [f"- `{h.usage}`: {h.about}" for h in help_lines(lang)]
    return text_reply("help", lang, "\n".join(lines), title=t["help_title"], help=help_lines(lang))
