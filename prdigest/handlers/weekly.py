"""Commands about a period: risks, top, authors, hot files, report. Each: parse, gather, decide, reply."""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.handlers.commands import Intent, command, spec, words
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import (
    Answer,
    Scope,
    newest_of,
    period_text,
    resolve,
    team_report,
    text_reply,
    week_report,
    window_of,
)
from prdigest.handlers.tool_args import CountArgs, PeriodArgs
from prdigest.i18n import texts
from prdigest.models import Report, ReportPR, Window, iso_week_label
from prdigest.render.markdown import escape, render_markdown

# What each period command's question sounds like in a short message ("show me the risks").
# fmt: off
RISK_WORDS = words(
    r"\brisk(?:s|y)?\b", r"\b(?:could|might|may|will|can|would)\s+(?:\w+\s+)?(?:break|go wrong|fail)\b",
    r"\bbr(?:eak(?:ing|s)?|oken?)\b", r"\bdanger(?:s|ous)?\b", r"\bconcerns?\b", r"\bworr(?:y|ies|ied)\b",
    r"\bwatch out\b", r"\bred flags?\b", r"\bregressions?\b", r"\bsecurity\b", r"\bvulnerab",
    r"\bwithout tests\b", r"\bno tests\b", "没有测试", "缺少测试", r"安全(?:问题|相关|隐患|漏洞)",
    "风险", "隐患", "危险", "破坏性", "要注意", "注意什么", "会不会(?:坏|出问题|出错)",
    "可能(?:会)?(?:坏|出问题|出错)",
)
HOT_WORDS = words(
    r"\bhot\b", r"\bhot\s*spots?\b", r"\bfiles\b", r"\bchurn\b", "热点", "哪些文件", r"文件.{0,8}最多",
    r"最多的文件", "改动最多",
)
AUTHOR_WORDS = words(
    r"\bauthors?\b", r"\bcontributors?\b", r"\bcontributed\b", r"\bmost active\b",
    r"\bwho\s+(?:\w+\s+)?(?:committed|merged|wrote|shipped|submitted|authored|landed|contributes)\b",
    "作者", "贡献者", "贡献", "最活跃", r"谁.{0,6}(?:提交|合并|写|贡献)",
)
TOP_WORDS = words(
    r"\btop\b", r"\bmost important\b", r"\b(?:biggest|largest|key|major|notable|significant|main)\s+"
    r"(?:prs?|pull requests?|changes?|merges?)\b", r"\bhighlights?\b", r"\bimportant\b",
    "重点", "重要", "最大的", "关键", "亮点", r"主要的?(?:PR|改动|变更|变化)",
    r"前\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*(?:个|名|大)?(?!\s*(?:天|日|周|星期|个?月|年|季度))",
)
REPORT_WORDS = words(
    r"\breports?\b", r"\bdigest\b", r"\bsummar(?:y|ies|i[sz]e)\b", r"\brecap\b", r"\boverview\b",
    r"\bweekly\b", r"\bwhat (?:happened|is new)\b", r"\bwhat'?s new\b", r"\bnews\b", r"\brundown\b",
    r"\btl;?dr\b", r"\bstate of (?:things|play|affairs)\b", r"^how\s+(?:was|were|did)\b[^?]{0,12}[?？]?\s*$",
    "报告", "周报", "月报", "总结", "汇总", "概况", "概览", "发生了什么", "有什么变化",
    r"\bhow many\b.*\b(?:prs|pull requests|merged)\b", r"(?:多少|几)\s*个?\s*PR",
)
# fmt: on
# Answered from the period's report; the most specific question's words win (risks before top).
CACHED = {"period": True, "lane": "cached"}

DEFAULT_TOP = 5
MAX_TOP = 24
MAX_HOT = 20


@dataclass
class Week:
    """What a period command gathers before it decides: its intent, scope, and the period's report."""

    intent: Intent
    scope: Scope
    report: Report
    t: dict[str, str]
    period: str


def period_of(intent: Intent, ctx: Context, scope: Scope, svc: Services) -> Window:
    window = window_of(intent, ctx, scope, svc)
    assert window is not None  # every period command has a default period
    return window


def gather(intent: Intent, ctx: Context, svc: Services) -> Week:
    """The period's report; a period without PRs is answered at once, pointing to the source's newest PR."""
    scope = resolve(intent, ctx, svc)
    window = period_of(intent, ctx, scope, svc)
    report = week_report(svc, scope, window)
    w = Week(intent, scope, report, texts(scope.lang), period_text(window, scope.lang))
    if not w.report.prs:
        # The report's warnings say which days no source gave and where the newest PR is.
        text = noted(w.t["prs_none"].format(repo=scope.repo, period=w.period), w.report)
        newest = newest_of(svc, scope)
        if newest is not None and not window.contains(newest[2]):
            words = spec(intent.command).zh if scope.lang == "zh" else spec(intent.command).en
            example = f"{words[0]} {iso_week_label(window.local_day(newest[2]))}"
            text += " " + w.t["newest_hint"].format(example=example)
        raise Answer(text_reply("text", scope.lang, text, repo=scope.repo))
    return w


@command(
    "risks", en=("show risks", "risks", "risk"), zh=("风险",), order=20, said=RISK_WORDS, specific=1,
    tool=PeriodArgs, tool_about="The risks of the pull requests merged in a period.", **CACHED,
)  # fmt: skip
def risks(intent: Intent, ctx: Context, svc: Services) -> Reply:
    w = gather(intent, ctx, svc)
    scope, report, t, period = w.scope, w.report, w.t, w.period
    if not report.risk_observations:
        text = noted(
            t["risks_none"].format(repo=scope.repo, period=period, n=report.stats.merged_prs), report
        )
        return text_reply("risks", scope.lang, text, repo=scope.repo, report=report)
    title = t["risks_title"].format(repo=scope.repo, period=period)
    lines = heading(title, report)
    lines += [
        f"{i}. **{escape(o.title)}**: {escape(o.evidence)}" for i, o in enumerate(report.risk_observations, 1)
    ]
    return text_reply(
        "risks", scope.lang, "\n".join(lines), title=title, repo=scope.repo, report=report,
        risks=report.risk_observations,
    )  # fmt: skip


@command(
    "top", en=("top prs", "top"), zh=("重点", "重要"), order=30, said=TOP_WORDS, specific=4,
    tool=CountArgs, tool_about="The most important pull requests of a period.", **CACHED,
)  # fmt: skip
def top(intent: Intent, ctx: Context, svc: Services) -> Reply:
    w = gather(intent, ctx, svc)
    scope, report, t, period = w.scope, w.report, w.t, w.period
    count = min(max(w.intent.n or DEFAULT_TOP, 1), MAX_TOP)
    ranked = sorted(report.prs, key=lambda p: (-(p.importance or 0), p.number))[:count]
    if not ranked:
        return text_reply(
            "prs", scope.lang, t["prs_none"].format(repo=scope.repo, period=period), repo=scope.repo
        )
    title = t["top_title"].format(n=len(ranked), repo=scope.repo, period=period)
    lines = heading(title, report) + [f"{i}. {pr_line(p, t)}" for i, p in enumerate(ranked, 1)]
    return text_reply(
        "prs", scope.lang, "\n".join(lines), title=title, repo=scope.repo, prs=ranked, report=report
    )


def heading(title: str, report: Report) -> list[str]:
    """A reply's title, then what the reader must know about its data (days no source could give)."""
    return [f"**{escape(title)}**", *(f"> ⚠ {escape(w)}" for w in report.warnings), ""]


def noted(text: str, report: Report) -> str:
    return " ".join([text, *report.warnings])


def pr_line(p: ReportPR, t: dict[str, str]) -> str:
    return t["pr_line"].format(
        number=p.number, summary=escape(p.summary or p.title), imp=_score(p.importance), ins=_score(p.insight)
    )


@command(
    "authors", en=("authors",), zh=("作者",), order=50, said=AUTHOR_WORDS, specific=3,
    tool=CountArgs, tool_about="Who authored the pull requests of a period, most first.", **CACHED,
)  # fmt: skip
def authors(intent: Intent, ctx: Context, svc: Services) -> Reply:
    w = gather(intent, ctx, svc)
    scope, report, t, period, s = w.scope, w.report, w.t, w.period, w.report.stats
    if not s.authors:
        return text_reply(
            "text", scope.lang, t["prs_none"].format(repo=scope.repo, period=period), repo=scope.repo
        )
    title = t["authors_title"].format(repo=scope.repo, period=period, n=s.merged_prs)
    shown = list(s.authors.items())[: w.intent.n or None]
    lines = heading(title, report) + [
        "- " + t["authors_line"].format(author=escape(a), n=n, share=f"{s.author_share[a]:.0%}")
        for a, n in shown
    ]
    return text_reply("text", scope.lang, "\n".join(lines), title=title, repo=scope.repo, report=report)


@command(
    "hot", en=("hot files", "hotfiles", "hot"), zh=("热点文件", "热点"), order=60, said=HOT_WORDS, specific=2,
    tool=CountArgs, tool_about="The files that many pull requests of a period changed.", **CACHED,
)  # fmt: skip
def hot_files(intent: Intent, ctx: Context, svc: Services) -> Reply:
    w = gather(intent, ctx, svc)
    scope, report, t, period, s = w.scope, w.report, w.t, w.period, w.report.stats
    if not s.hot_files:
        text = noted(t["hot_none"].format(repo=scope.repo, period=period, min=s.hot_file_min_prs), report)
        return text_reply("text", scope.lang, text, repo=scope.repo)
    title = t["hot_title"].format(repo=scope.repo, period=period, min=s.hot_file_min_prs)
    lines = heading(title, report) + [
        "- " + t["hot_line"].format(path=escape(h.path), n=len(h.prs), prs=" ".join(f"#{n}" for n in h.prs))
        for h in s.hot_files[: w.intent.n or MAX_HOT]
    ]
    return text_reply("text", scope.lang, "\n".join(lines), title=title, repo=scope.repo, report=report)


@command(
    "report", en=("report", "weekly report"), zh=("报告", "周报"), order=10, said=REPORT_WORDS, specific=5,
    period=True, lane="slow",
    tool=PeriodArgs, tool_about="The weekly report of a period (default: last week).",
)  # fmt: skip
def report(intent: Intent, ctx: Context, svc: Services) -> Reply:
    scope = resolve(intent, ctx, svc, team=True)
    window = period_of(intent, ctx, scope, svc)
    if scope.team:  # the chat's team digest: its repositories in one report
        built = team_report(svc, scope, window)
    else:
        built = week_report(svc, scope, window, sync=True, save=True)
    return text_reply("report", scope.lang, render_markdown(built), repo=scope.repo, report=built)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"
