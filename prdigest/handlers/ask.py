"""ask QUESTION, and any sentence that names no command: an answer from the cached PRs, citing them."""

from __future__ import annotations

from prdigest.analysis.ask import ask as answer_question
from prdigest.handlers.args import read_args
from prdigest.handlers.commands import Command, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import resolve, text_reply, window_of


@command("ask", en=("ask",), zh=("提问",))
def ask(cmd: Command, ctx: Context, svc: Services) -> Reply:
    args = read_args(cmd.args)
    scope = resolve(cmd, ctx, svc, args)
    # A question names a period only when it says one; else it is asked of everything cached.
    window = window_of(args, scope, svc) if args.period else None
    answer = answer_question(svc.store, cmd.args, scope.repo, window, svc.settings.llm, scope.lang)
    # Markdown hard breaks keep the answer's lines apart (a list of PRs, or paragraphs).
    text = answer.text.replace("\n", "  \n")
    return text_reply("text", scope.lang, text, repo=scope.repo, cited=answer.cited)
