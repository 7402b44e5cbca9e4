"""The report in a terminal, with rich: figures side by side, then the PR table."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from prdigest.models import Report
from prdigest.render.i18n import texts


def render_terminal(report: Report, console: Console) -> None:
    t = texts(report.lang)
    s = report.stats
    title = t["title"].format(repo=report.repo, since=report.window.since, until=report.window.until)
    figures = Table.grid(padding=(0, 3))
    figures.add_row(
        *(
            Text(f"{label}\n", style="dim") + Text(str(value), style="bold")
            for label, value in (
                (t["merged_prs"], s.merged_prs),
                (t["direct_pushes"], s.direct_pushes),
                (t["lines"], f"+{s.additions} / -{s.deletions}"),
                (t["files_changed"], s.files_changed),
            )
        )
    )
    authors = Text(t["authors"] + ": ", style="dim") + Text(
        ", ".join(f"{a} {n} ({s.author_share[a]:.0%})" for a, n in list(s.authors.items())[:6])
    )
    hot = Text(t["hot_files"].format(n=s.hot_file_min_prs) + ": ", style="dim") + Text(
        ", ".join(f"{h.path} ({len(h.prs)})" for h in s.hot_files[:5]) or "-"
    )
    days = Text(t["per_day"] + ": ", style="dim") + Text(
        "  ".join(f"{d:%m-%d} {n}" for d, n in s.per_day.items())
    )
    console.print(Panel(Group(figures, Text(""), authors, hot, days), title=title, expand=False))
    table = Table(title=t["pr_table"], show_lines=False)
    for column in ("pr", "pr_title", "author", "churn"):
        table.add_column(t[column], overflow="fold")
    for p in report.prs:
        # Text() keeps PR titles literal: no rich markup from untrusted input.
        table.add_row(f"#{p.number}", Text(p.title), Text(p.author), f"+{p.additions}/-{p.deletions}")
    console.print(table)
    if report.unavailable:
        console.print(Text(t["unavailable"].format(signals=", ".join(report.unavailable)), style="dim"))
