"""The report as Markdown, laid out like the example reports."""

from __future__ import annotations

from prdigest.models import Report
from prdigest.render.i18n import texts


def escape(text: str) -> str:
    """Keep PR text inert in a Markdown table cell: no pipes, no markup, no mentions."""
    for char in "\\`*_[]<>|":
        text = text.replace(char, "\\" + char)
    return text.replace("@", "@\u200b").replace("\n", " ")


def render_markdown(report: Report) -> str:
    t = texts(report.lang)
    s = report.stats
    out = [
        f"# {t['title'].format(repo=report.repo, since=report.window.since, until=report.window.until)}",
        "",
    ]
    out += [f"## {t['summary']}", ""]
    if s.merged_prs == 0 and s.direct_pushes == 0:
        out += [t["none"], ""]
    out += [
        f"- {t['merged_prs']}: {s.merged_prs}",
        f"- {t['direct_pushes']}: {s.direct_pushes}",
        f"- {t['lines']}: +{s.additions} / -{s.deletions}",
        f"- {t['files_changed']}: {s.files_changed}",
    ]
    if s.authors:
        shares = ", ".join(f"{escape(a)} ({n}, {s.author_share[a]:.0%})" for a, n in s.authors.items())
        out.append(f"- {t['authors']}: {shares}")
    if s.hot_files:
        hot = ", ".join(f"`{h.path}` ({len(h.prs)})" for h in s.hot_files)
        out.append(f"- {t['hot_files'].format(n=s.hot_file_min_prs)}: {hot}")
    out.append(f"- {t['per_day']}: " + ", ".join(f"{d:%m-%d} {n}" for d, n in s.per_day.items()))
    out.append("")
    if report.prs:
        out += [f"## {t['pr_table']}", "", f"| {t['pr']} | {t['pr_title']} | {t['author']} | {t['churn']} |"]
        out.append("| --- | --- | --- | --- |")
        out += [
            f"| #{p.number} | {escape(p.title)} | {escape(p.author)} | +{p.additions}/-{p.deletions} |"
            for p in report.prs
        ]
        out.append("")
    if report.direct_pushes:
        out += [f"## {t['direct']}", ""]
        out += [f"- `{d.sha[:10]}` {escape(d.title)} ({escape(d.author)})" for d in report.direct_pushes]
        out.append("")
    if report.unavailable:
        out += [f"_{t['unavailable'].format(signals=', '.join(report.unavailable))}_", ""]
    out.append(f"_{t['engine'].format(engine=report.engine, source=report.source)}_")
    return "\n".join(out) + "\n"
