"""The full report as one self-contained HTML page: inline CSS and SVG charts, no scripts, no requests.

Same six sections as the Markdown report, plus every PR with an anchor (`#pr-N`).
Untrusted text stays inert through jinja2's autoescape; links go only to the PRs'
own https URLs and to anchors on the page.
"""

from __future__ import annotations

import re
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from prdigest.i18n import report_texts, risk_name
from prdigest.i18n.report import tag_name
from prdigest.models import Report
from prdigest.render.charts import Bar, column_chart, hbar_chart
from prdigest.render.markdown import title
from prdigest.render.views import ReportRef, engine_note, key_prs, pr_url, score, window_text

# "#123" not preceded by "&" (an escaped entity such as &#39;) or an ASCII word character.
_PR_REF = re.compile(r"(?<![&0-9A-Za-z_])#(\d+)\b")
_SLASH = re.compile(r"/(?=\S)")
_TAG_BARS = 12
_AUTHOR_BARS = 10


def render_html(report: Report) -> str:
    t = report_texts(report.lang, report.window.since, report.window.until)
    numbers = {p.number for p in report.prs}
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            report=report,
            s=report.stats,
            t=t,
            title=title(report),
            window=window_text(t, ReportRef.of(report)),
            engine=engine_note(report, t),
            key=key_prs(report),
            charts=_charts(report, t),
            refs=lambda text: _link_refs(text, numbers),
            pr_url=pr_url,
            risk=lambda label: risk_name(label, report.lang),
            tag=lambda name: tag_name(name, report.lang),
            score=score,
        )
    )


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


def _link_refs(text: str, numbers: set[int]) -> Markup:
    """Escaped text in which "#N" of a PR on the page links to its anchor."""

    def link(m: re.Match[str]) -> str:
        number = int(m.group(1))
        return f'<a href="#pr-{number}">#{number}</a>' if number in numbers else m.group(0)

    return Markup(_PR_REF.sub(link, str(_wrap(text))))


def _charts(report: Report, t: dict[str, str]) -> list[tuple[str, Markup]]:
    s = report.stats
    charts = []
    if s.tags:
        bars = [Bar(tag_name(tag, report.lang), n, str(n)) for tag, n in list(s.tags.items())[:_TAG_BARS]]
        charts.append((t["tags"], hbar_chart(bars, title=t["tags"])))
    if s.authors:
        top = list(s.authors.items())[:_AUTHOR_BARS]
        bars = [Bar(a, n, f"{n} · {s.author_share.get(a, 0):.0%}") for a, n in top]
        charts.append((t["authors"], hbar_chart(bars, title=t["authors"])))
    if s.per_day:
        bars = [Bar(f"{day:%m-%d}", n, str(n)) for day, n in s.per_day.items()]
        charts.append((t["per_day"], column_chart(bars, title=t["per_day"])))
    if report.history:
        charts.append(_history_chart(report, t))
    return charts


def _history_chart(report: Report, t: dict[str, str]) -> tuple[str, Markup]:
    """Merged PRs by week (by month for a long window); a period not fully read shows "?" and is named."""
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
    return name, column_chart(bars, title=title, highlight_last=sum(h.current for h in report.history))
