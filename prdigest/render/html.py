"""The full report as one self-contained HTML page: inline CSS and SVG charts, no scripts, no requests.

Same six sections as the Markdown report, plus every PR with an anchor (`#pr-N`). Read on a phone first:
its first screen holds the week's judgement (risk level and what drives it), its headline figures and the
top story; the distributions, hot files and the PR list follow in the appendix, each long list showing
its top TOP and the rest collapsed. Each figure is shown once, as a chart only where a chart tells more
than a line (see chart_choice). Every "#N" of a PR links to the PR where the source knows its link, else
to its row on the page. Untrusted text stays inert through jinja2's autoescape; links go only to the PRs'
own https URLs and to anchors on the page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from prdigest.i18n import report_texts, risk_name
from prdigest.i18n.tags import tag_name, tag_share
from prdigest.models import OpenPR, Report, RiskFollowup
from prdigest.render.attention import (
    checks_warning,
    dismissal_words,
    open_pr_urls,
    open_prs,
    reason_words,
    snooze_words,
)
from prdigest.render.chart_choice import dominant_tag, per_day_chart_worth, tag_chart_worth
from prdigest.render.charts import Bar, column_chart, hbar_chart
from prdigest.render.digest import verdict
from prdigest.render.flow import flow_lines
from prdigest.render.markdown import title
from prdigest.render.team import team_name, top_risk
from prdigest.render.views import ReportRef, engine_note, key_prs, pr_urls, ranked, score, window_text
from prdigest.render.week_words import (
    basis,
    capped,
    change_text,
    cited_urls,
    continues_words,
    figure_with_change,
    followup_words,
    followups_counts,
    followups_shown,
)

# Hot files, authors, key PRs and PRs shown before "and N more". The top ten stay visible, the rest closed:
# the ones a reader came for need no click, and the count on the closed part says how much is left.
TOP = 10

# "#123" not preceded by "&" (an escaped entity such as &#39;) nor touching an ASCII word character: Chinese
# text runs on after a number ("#12和"), which \b would not count as its end.
_PR_REF = re.compile(r"(?<![&0-9A-Za-z_])#(\d+)(?![0-9A-Za-z_])")
_SLASH = re.compile(r"/(?=\S)")


def render_html(report: Report) -> str:
    """The page of one repository's report, or of a team's: its figures and repositories, then each
    repository's sections (anchors prefixed "rN-", so every PR's stays unique on the page)."""
    t = report_texts(report.lang, report.window.since, report.window.until)
    page = dict(report=report, s=report.stats, t=t, window=window_text(t, ReportRef.of(report)))
    if not report.parts:
        body = _sections(report, t, "", 2, overview=False)
        return (
            _env()
            .get_template("report.html.j2")
            .render(
                **page,
                title=title(report),
                parts=[],
                body=body,
                attention=_attention(report, t),
                flow=flow_lines(report, t),
            )
        )
    parts = [
        (part, _sections(part, report_texts(part.lang, part.window.since, part.window.until), f"r{i}-", 3))
        for i, part in enumerate(report.parts, start=1)
    ]
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            **page,
            title=title(report, team_name(report, t)),
            parts=parts,
            body=_sections(report, t, "", 2, overview=True),
            repos=[_repo_row(part, t) for part in report.parts],
            attention=None,
        )
    )


def _sections(report: Report, t: dict[str, str], a: str, h: int, overview: bool = False) -> Markup:
    """A report's sections under headings <h``h``>, their anchors prefixed ``a``; a team's ``overview``:
    its summary only."""
    link = _linker(report, a)
    return Markup(
        _env()
        .get_template("sections.html.j2")
        .render(
            report=report,
            s=report.stats,
            t=t,
            a=a,
            h=h,
            top=TOP,
            overview=overview,
            engine=engine_note(report, t),
            lead=_lead(report, t, overview),
            figures=_figures(report, t),
            key=key_prs(report),
            prs=ranked(report.prs),
            tag_chart=_tag_chart(report, t),
            tag_lead=_tag_lead(report),
            per_day_chart=_per_day_chart(report, t),
            history_chart=_history_chart(report, t),
            continues=lambda numbers: _link_refs(continues_words(numbers, t), link),
            followups=_followups(report),
            followup_counts=followups_counts(report, t),
            followup=lambda f: _link_refs(followup_words(f, report.lang, t), link),
            capped=capped,
            link=link,
            refs=lambda text: _link_refs(text, link),
            risk=lambda label: risk_name(label, report.lang),
            risk_count=lambda label, n: figure_with_change(report, label, n, t),
            tag=lambda name: tag_name(name, report.lang),
            score=score,
            attention=_attention(report, t),
            flow=flow_lines(report, t),
            dismissed=[] if overview else [dismissal_words(d, report.lang, t) for d in report.dismissed],
            snoozed=[] if overview else [snooze_words(s, report.lang, t) for s in report.snoozed],
        )
    )


def _lead(report: Report, t: dict[str, str], overview: bool) -> str:
    """The judgement that opens the page: the model's summary when the LLM wrote one (its brief is the week
    and its risk in a few sentences) and a team's; else the verdict, as the rules' summary paragraph
    repeats the figures the tiles below it show."""
    usage = report.llm_usage
    if overview or (usage is not None and usage.narrative == "llm"):
        return report.summary
    return verdict(report, t)


def _figures(report: Report, t: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """The headline tiles as (Stats field, name, value, change on the earlier periods or "")."""
    s = report.stats

    def change(name: str, value: int) -> str:
        trend = s.trend.get(name)
        return f"{change_text(trend, value, t)} · {basis(report, t)}" if trend else ""

    return [
        ("merged_prs", t["merged_prs"], str(s.merged_prs), change("merged_prs", s.merged_prs)),
        ("key_prs", t["key_prs"], str(s.key_prs), change("key_prs", s.key_prs)),
        ("avg_scores", t["avg_scores"], f"{score(s.avg_importance)} / {score(s.avg_insight)}", ""),
        ("files_changed", t["files_changed"], str(s.files_changed), ""),
        ("lines", t["lines"], f"+{s.additions} / -{s.deletions}", ""),
    ]


def _followups(report: Report) -> list[RiskFollowup]:
    """Every follow-up, those the chat and the Markdown show first, so the page opens on the same ones."""
    followups = followups_shown(report)
    return [*followups.shown, *followups.left]


def _attention(report: Report, t: dict[str, str]) -> tuple[str, list[tuple[OpenPR, str]]] | None:
    """A red default branch's warning and the open PRs needing attention with why; None when neither."""
    red, prs = checks_warning(report.attention, t), open_prs(report)
    return (red, [(op, reason_words(op, t)) for op in prs]) if red or prs else None


def _repo_row(part: Report, t: dict[str, str]) -> dict[str, object]:
    """A team's repository in the page's table: its counts, level and top risk with its PRs' links."""
    top = top_risk(part)
    urls = pr_urls(part)
    return {
        "repo": part.repo,
        "merged": part.stats.merged_prs,
        "key": part.stats.key_prs,
        "level": t[f"level_name_{part.risk_level}"],
        "risk": risk_name(top.label, part.lang) if top and top.label else (top.title if top else ""),
        "prs": [(n, urls.get(n)) for n in top.prs[:3]] if top else [],
    }


@cache
def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("prdigest.render", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["wrap"] = _wrap
    return env


def _wrap(text: str) -> Markup:
    """Escaped text whose paths may wrap after each "/" (a <wbr> is no character: they copy as written)."""
    return Markup(_SLASH.sub("/<wbr>", str(escape(text))))


def _linker(report: Report, a: str) -> Callable[[int], Markup]:
    """A PR number as a link: to the PR where the source links PRs (the report's, the earlier ones it cites,
    the open ones), else to its row on the page (``a``: its report's anchor prefix), else plain "#N"."""
    urls = {**cited_urls(report), **open_pr_urls(report.attention)}
    rows = {p.number for p in report.prs}

    def link(n: int) -> Markup:
        if n in urls:
            return Markup('<a href="{}" rel="noopener noreferrer nofollow">#{}</a>').format(urls[n], n)
        return Markup('<a href="#{}pr-{}">#{}</a>').format(a, n, n) if n in rows else Markup(f"#{n}")

    return link


def _link_refs(text: str, link: Callable[[int], Markup]) -> Markup:
    """Escaped text (paths free to wrap) in which every "#N" is linked as ``link`` links it."""
    return Markup(_PR_REF.sub(lambda m: str(link(int(m.group(1)))), str(_wrap(text))))


def _tag_chart(report: Report, t: dict[str, str]) -> Markup | None:
    if not tag_chart_worth(report.stats):
        return None
    bars = [Bar(tag_name(tag, report.lang), n, str(n)) for tag, n in report.stats.tags.items()]
    return hbar_chart(bars, title=t["tags"])


def _tag_lead(report: Report) -> tuple[str, str] | None:
    """The dominant tag and its line, "22 of 30 PRs are testing" (the other tags follow as chips)."""
    top = dominant_tag(report.stats)
    return (top[0], tag_share(*top, report.stats.merged_prs, report.lang)) if top else None


def _per_day_chart(report: Report, t: dict[str, str]) -> Markup | None:
    if not per_day_chart_worth(report.stats):
        return None
    bars = [Bar(f"{day:%m-%d}", n, str(n)) for day, n in report.stats.per_day.items()]
    return column_chart(bars, title=t["per_day"])


def _history_chart(report: Report, t: dict[str, str]) -> tuple[str, Markup] | None:
    """Merged PRs by week (by month for a long window); a period not fully read shows "?" and is named.
    None without an earlier period to compare with."""
    if len(report.history) < 2:
        return None
    unit = report.history[0].unit
    label = "{:%Y-%m}" if unit == "month" else "{:%m-%d}"
    bars = [
        Bar(
            t["page_this_week"] if h.current and unit != "month" else label.format(h.since),
            h.merged_prs or 0,
            str(h.merged_prs) if h.complete else "?",
        )
        for h in report.history
    ]
    title = t[f"chart_{unit}s"]
    missing = [label.format(h.since) for h in report.history if not h.complete]
    name = t["chart_missing"].format(chart=title, periods=", ".join(missing)) if missing else title
    merged = report.stats.trend.get("merged_prs")
    mean = None
    if merged is not None and unit != "month":  # the level the week is compared with (see stats.trend)
        value = sum(merged.previous) / len(merged.previous)
        mean = Bar(basis(report, t), value, f"{basis(report, t)} {value:.3g}")
    current = sum(h.current for h in report.history)
    return name, column_chart(bars, title=title, highlight_last=current, reference=mean)
