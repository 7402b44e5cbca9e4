"""ask QUESTION, and any sentence that names no command: an answer from the cached PRs, citing them."""

from __future__ import annotations

from prdigest.handlers.args import read_args
from prdigest.handlers.commands import Command, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import resolve, text_reply
from prdigest.render.markdown import escape


@command("ask", en=("ask",), zh=("提问",))
def ask(cmd: Command, ctx: Context, svc: Services) -> Reply:
    args = read_args(cmd.args)
    scope = resolve(cmd, ctx, svc, args)
    hits = svc.store.search_prs(cmd.args, repo=scope.repo, limit=5)
    lines = [f"- #{p.number} {escape(p.title)}" for p in hits]
    return text_reply(
        "text", scope.lang, "\n".join(lines) or "-", repo=scope.repo, cited=[p.number for p in hits]
    )
