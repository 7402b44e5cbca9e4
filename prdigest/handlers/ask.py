"""ask QUESTION, and any sentence that names no command: an answer from the cached PRs, citing them.

A question that names people, risks, paths or a ranking is answered from the period's PRs by those
fields (analysis/asked.py); the others by a full-text search of the cache (analysis/ask.py)."""

from __future__ import annotations

from prdigest.analysis.asked import read_asked, select
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import (
    Scope,
    asked_week,
    period_text,
    resolve,
    text_reply,
    week_report,
    window_of,
)
from prdigest.handlers.tool_args import AskArgs
from prdigest.i18n import texts
from prdigest.models import Window
from prdigest.render.markdown import escape

LISTED = 50  # PRs a structured answer lists and cites; the rest are counted


@command(
    "ask", en=("ask",), zh=("提问",), order=70, leads=True, lane="question",
    tool=AskArgs, tool_about="A free question answered from the merged pull requests, citing them.",
)  # fmt: skip
def ask(intent: Intent, ctx: Context, svc: Services) -> Reply:
    from prdigest.analysis.ask import ask as answer_question  # with the LLM engine: costs ~0.5 s to import

    scope = resolve(intent, ctx, svc)
    # A question names a period only when it says one (or asks in a card's thread); else it is asked
    # of everything cached, or, when it names people, risks, paths or a ranking, of the last week.
    window = window_of(intent, ctx, scope, svc)
    structured = _by_structure(intent, ctx, scope, window, svc)
    if structured is not None:
        return structured
    answer = answer_question(svc.store, intent.question, scope.repo, window, svc.settings.llm, scope.lang)
    # Markdown hard breaks keep the answer's lines apart (a list of PRs, or paragraphs).
    text = answer.text.replace("\n", "  \n")
    return text_reply("text", scope.lang, text, repo=scope.repo, cited=answer.cited)


def _by_structure(
    intent: Intent, ctx: Context, scope: Scope, window: Window | None, svc: Services
) -> Reply | None:
    """The answer read from the period's PRs' fields; None for a question that names none of them in a
    period it does not name either (the full-text search answers it)."""
    week = window or asked_week(intent, ctx, scope, svc)
    report = week_report(svc, scope, week)
    prs = svc.store.prs_in_window(scope.repo, week, excerpts=False)
    asked = read_asked(intent.question, prs, svc.store.authors(scope.repo))
    t, period = texts(scope.lang), period_text(week, scope.lang)
    if window is not None and not any(pr.number for pr in prs):  # direct pushes are no PRs
        return text_reply("text", scope.lang, t["ask_empty"].format(period=period), repo=scope.repo)
    if not asked.named:
        return None
    numbers = select(asked, prs, report.prs)
    if not numbers:
        return text_reply("text", scope.lang, t["ask_none"].format(period=period), repo=scope.repo)
    by_number = {p.number: p for p in report.prs}
    lines = [t["ask_found"].format(period=period, n=len(numbers))]
    for number in numbers[:LISTED]:
        pr = by_number.get(number)
        if pr is not None:
            summary = escape(pr.summary or pr.title)
            lines.append(t["ask_line"].format(number=number, summary=summary, author=escape(pr.author),
                                              merged=pr.merged_at.astimezone(week.zone)))  # fmt: skip
    if len(numbers) > LISTED:
        lines.append(t["ask_more"].format(n=len(numbers) - LISTED))
    cited = numbers[:LISTED]
    return text_reply("text", scope.lang, "  \n".join(lines), repo=scope.repo, cited=cited)
