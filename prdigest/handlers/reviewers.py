"""reviewers: who carried a period's reviews and how long its PRs waited, from the period's report
(`stats.review_flow`): the reviews by reviewer, the medians, the PRs slowest to a first review and those
merged without review. A source that keeps no reviews (a git clone) is answered that it cannot tell."""

from __future__ import annotations

from prdigest.handlers.commands import Intent, command, words
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import text_reply
from prdigest.handlers.tool_args import PeriodArgs
from prdigest.handlers.weekly import gather, heading
from prdigest.render.flow import medians_words, reviewers_words, slowest_words, unreviewed_words
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
REVIEWERS_SHOWN = 10  # reviewers a reply lists, the busiest first
PRS_CITED = 10  # PRs merged without review a reply names


@command(
    "reviewers", en=("reviewers",), zh=("评审",), order=67, period=True, lane="cached", said=REVIEW_WORDS,
    specific=1, tool=PeriodArgs, tool_about="Who reviewed the pull requests of a period, and how fast.",
)  # fmt: skip
def reviewers(intent: Intent, ctx: Context, svc: Services) -> Reply:
    w = gather(intent, ctx, svc)
    scope, report, t = w.scope, w.report, w.t
    flow = report.stats.review_flow
    if flow is None:
        source = t.get(f"src_{report.source}", report.source).strip()
        text = t["reviewers_unknown"].format(repo=escape(scope.repo), source=source)
        return text_reply("text", scope.lang, text, repo=scope.repo)
    title = t["reviewers_title"].format(repo=scope.repo, period=w.period, n=report.stats.merged_prs)
    load = reviewers_words(flow, t, REVIEWERS_SHOWN) or t["reviewers_nobody"]
    found = [medians_words(report, t), unreviewed_words(flow, t, PRS_CITED), slowest_words(flow, t)]
    lines = heading(title, report) + [f"- {escape(line)}" for line in [load, *found] if line]
    return text_reply("text", scope.lang, "\n".join(lines), title=title, repo=scope.repo, report=report)
