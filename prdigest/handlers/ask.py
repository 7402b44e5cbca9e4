"""ask QUESTION, and any sentence that names no command: an answer from the cached PRs, citing them."""

from __future__ import annotations

from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import resolve, text_reply, window_of
from prdigest.handlers.tool_args import AskArgs


@command(
    "ask", en=("ask",), zh=("提问",), order=70, leads=True, lane="question",
    tool=AskArgs, tool_about="A free question answered from the merged pull requests, citing them.",
)  # fmt: skip
def ask(intent: Intent, ctx: Context, svc: Services) -> Reply:
    from prdigest.analysis.ask import ask as answer_question  # with the LLM engine: costs ~0.5 s to import

    scope = resolve(intent, ctx, svc)
    # A question names a period only when it says one (or asks in a card's thread); else it is asked
    # of everything cached.
    window = window_of(intent, ctx, scope, svc)
    answer = answer_question(svc.store, intent.question, scope.repo, window, svc.settings.llm, scope.lang)
    # Markdown hard breaks keep the answer's lines apart (a list of PRs, or paragraphs).
    text = answer.text.replace("\n", "  \n")
    return text_reply("text", scope.lang, text, repo=scope.repo, cited=answer.cited)
