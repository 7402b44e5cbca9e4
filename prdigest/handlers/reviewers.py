"""reviewers: who carried a period's reviews. The review-flow figures are not computed yet: the command is
read, and says so, rather than answer a question about reviews with merged PRs."""

from __future__ import annotations

from prdigest.handlers.commands import Intent, command, words
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import resolve, text_reply
from prdigest.handlers.tool_args import PeriodArgs
from prdigest.i18n import texts
from prdigest.render.markdown import escape

# "who reviewed the most last week?", "review load", "谁评审最多"
REVIEW_WORDS = words(
    r"\breviewers?\b", r"\breview\s+(?:load|flow|burden|queue|stats|statistics|work)\b",
    r"\bwho(?:'s|’s)?\s+(?:\w+\s+){0,2}?(?:reviews|reviewed|reviewing|approved|approves)\b",
    r"\bcarr(?:y|ies|ied)\s+(?:the\s+)?reviews?\b", r"\b(?:most|many|more|fewest)\s+reviews\b",
    r"\bwho\b[^?.]{0,30}\b(?:code\s+)?review(?:s|ing|ed)?\b",
    r"评审(?:者|人|负担|量|最多|情况|工作)", "审查最多",
    r"谁.{0,6}(?:评审|审查|审核|审的|审了|审过|review|approve)",
)  # fmt: skip


@command(
    "reviewers", en=("reviewers",), zh=("评审",), order=67, period=True, lane="fast", said=REVIEW_WORDS,
    specific=1, tool=PeriodArgs, tool_about="Who reviewed the pull requests of a period, and how fast.",
)  # fmt: skip
def reviewers(intent: Intent, ctx: Context, svc: Services) -> Reply:
    scope = resolve(intent, ctx, svc)
    text = texts(scope.lang)["reviewers_unavailable"].format(repo=escape(scope.repo))
    return text_reply("text", scope.lang, text, repo=scope.repo)
