"""The report in a terminal: the Markdown report, drawn by rich (headings, tables, lists)."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown

from prdigest.models import Report
from prdigest.render.markdown import render_markdown


def render_terminal(report: Report, console: Console) -> None:
    console.print(Markdown(render_markdown(report), hyperlinks=False))
