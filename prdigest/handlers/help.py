"""help: generated from the command registry, in the asker's language."""

from __future__ import annotations

from prdigest.handlers.commands import Intent, command, ranked
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import HelpLine, Reply
from prdigest.handlers.scope import text_reply
from prdigest.handlers.tool_args import NoArgs
from prdigest.i18n import texts
from prdigest.render.markdown import escape


def help_lines(lang: str) -> list[HelpLine]:
    t = texts(lang)
    keys = [c.text_keys for c in ranked(lambda c: c.order)]
    return [HelpLine(usage=t[usage], about=t[about]) for usage, about in keys]


@command(
    "help", en=("help", "?"), zh=("帮助",), order=1000, leads=True, lane="fast", tool=NoArgs,
    tool_about="What the bot can do: for greetings, thanks and anything that is not a request.",
)  # fmt: skip
def show_help(intent: Intent, ctx: Context, svc: Services) -> Reply:
    lang = intent.lang
    t = texts(lang)
    lines = []
    if intent.suggestion:
        lines += [t["help_suggest"].format(text=escape(intent.question[:80]), word=intent.suggestion), ""]
    lines += [f"**{t['help_title']}**", "", t["help_intro"], ""]
    lines += [f"- `{h.usage}`: {h.about}" for h in help_lines(lang)]
    return text_reply("help", lang, "\n".join(lines), title=t["help_title"], help=help_lines(lang))
