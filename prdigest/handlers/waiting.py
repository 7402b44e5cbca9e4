"""open: the open PRs that need someone now (waiting for a review, approved but not merged, large and
unreviewed), read fresh from the repository's source, as the report's attention section reads them."""

from __future__ import annotations

from prdigest.analysis.noise import Noise
from prdigest.handlers.commands import Intent, command, words
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import resolve, text_reply
from prdigest.handlers.tool_args import RepoArgs
from prdigest.i18n import texts
from prdigest.render.attention import checks_warning, open_pr_urls, reason_words, snooze_words
from prdigest.render.markdown import escape
from prdigest.storage.snoozes import active_snoozes

# What a question about waiting PRs sounds like: "which PRs are stuck?", "还有哪些 PR 在等评审".
# fmt: off
WAITING_WORDS = words(
    r"\bopen\s+(?:prs?|pull\s+requests?)\b", r"\bawaiting\s+(?:a\s+)?reviews?\b",
    r"\b(?:waiting|wait|stuck|stale|blocked|pending)\s+(?:for|on|in)\s+(?:a\s+)?(?:reviews?|reviewers?|approvals?|merge)\b",
    r"\b(?:prs?|pull\s+requests?)\s+(?:are\s+)?(?:still\s+)?open\b|\bstill\s+open\b",
    r"\b(?:prs?|pull\s+requests?)\b.{0,30}?\b(?:stuck|stale|pending|waiting|unreviewed|not\s+(?:yet\s+)?reviewed)\b",
    r"\bneed(?:s|ing)?\s+(?:(?:a|my|our|your)\s+)?reviews?\b",
    r"\bwaiting\s+(?:on|for)\s+(?:me|us|you|someone|somebody|anyone|anybody)\b",
    "待处理", "待评审", r"等(?:待|着)?(?:评审|审核|review|合并)", "卡住", r"没人(?:看|评审|审|review)",
    "还没合并", "未合并", "待合并", "还开着", "打开的\\s*PR",
)
# fmt: on


@command(
    "open", en=("open prs", "open"), zh=("待处理",), order=65, lane="slow", said=WAITING_WORDS, specific=0,
    tool=RepoArgs, tool_about="The open pull requests that wait for a review, a merge or a fix, now.",
)  # fmt: skip
def open_prs(intent: Intent, ctx: Context, svc: Services) -> Reply:
    scope = resolve(intent, ctx, svc)
    lang, t = scope.lang, texts(scope.lang)
    source, now = svc.source_for(scope.repo), svc.clock()
    read = source.attention(svc.settings.attention, now) if source is not None else None
    if read is None:  # a clone, or the cache alone: open PRs are GitHub's to tell
        return text_reply("text", lang, t["open_untold"].format(repo=scope.repo), repo=scope.repo)
    # What a card's buttons snoozed or acknowledged stays out, as in the reports, and is said below.
    found, quieted = Noise(snoozes=tuple(active_snoozes(svc.store, scope.repo, now))).quiet_open(read)
    urls = open_pr_urls(found)
    lines = [f"**{t['att_heading']} · {escape(scope.repo)}**", ""]
    for op in found.open_prs:
        number = f"[#{op.number}]({urls[op.number]})" if op.number in urls else f"#{op.number}"
        lines.append(f"- {number} {escape(op.title)} · {escape(op.author)} · {reason_words(op, t)}")
    if not found.open_prs:
        lines.append(t["open_none"].format(repo=escape(scope.repo)))
    if warning := checks_warning(found, t):
        lines += ["", escape(warning)]
    if quieted:
        lines += ["", f"_{t['sn_heading']}_", *(f"- {escape(snooze_words(s, lang, t))}" for s in quieted)]
    return text_reply("text", lang, "\n".join(lines), repo=scope.repo)
