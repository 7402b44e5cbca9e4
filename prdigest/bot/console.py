"""The console chat: the same handlers as Lark and Slack, each reply drawn as a rich panel.

It acts as an admin in a private chat. Type `/cards` to also see what the Lark card
and the Slack message of each reply would be, `/quit` (or end the input) to leave.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from prdigest.handlers import Context, Reply, Services, handle
from prdigest.models import as_lang

QUIT = {"/quit", "/exit", "quit", "exit", "退出"}
INTRO = {
    "en": "prdigest console chat: type `help`, `risks`, `top 5`, `explain #N`… "
    "`/cards` shows the platform payloads, `/quit` leaves.",
    "zh": "prdigest 控制台对话：输入 `帮助`、`风险`、`重点 5`、`解释 #N`……"
    "`/cards` 显示平台消息，`/quit` 退出。",
}


def run_console(svc: Services, console: Console, lang: str | None = None, stdin: TextIO | None = None) -> int:
    """Read lines until the input ends; answer each. Returns the exit code (0)."""
    stdin = stdin or sys.stdin
    interactive = stdin.isatty()
    ctx = Context(
        platform="console", chat_id="console", user_id="console", lang=None if lang is None else as_lang(lang)
    )
    show_cards = False
    console.print(Markdown(INTRO.get(lang or "en", INTRO["en"])))
    while True:
        try:
            line = console.input("[bold]> [/bold]") if interactive else stdin.readline()
        except (EOFError, KeyboardInterrupt):
            break
        if not interactive and line == "":
            break  # end of input
        line = line.strip()
        if not line:
            continue
        if line.lower() in QUIT:
            break
        if line.lower() == "/cards":
            show_cards = not show_cards
            console.print(f"cards: {'on' if show_cards else 'off'}")
            continue
        reply = handle(line, ctx, svc)
        show(reply, console)
        if show_cards:
            show_payloads(reply, console)
    return 0


def show(reply: Reply, console: Console) -> None:
    style = {"error": "red", "refusal": "yellow"}.get(reply.kind, "cyan")
    console.print(
        Panel(Markdown(reply.text, hyperlinks=False), title=reply.kind, border_style=style, expand=False)
    )


def show_payloads(reply: Reply, console: Console) -> None:
    """What the adapters would send for this reply: a weekly report's thread replies follow its card."""
    from prdigest.bot.payloads import lark_payload, slack_payload
    from prdigest.render.lark import render_lark_thread
    from prdigest.render.slack import render_slack_thread

    report = reply.report if reply.kind == "report" else None
    console.print_json(data=lark_payload(reply))
    for card in render_lark_thread(report) if report else []:
        console.print_json(data=card)
    console.print_json(data=slack_payload(reply))
    for message in render_slack_thread(report) if report else []:
        console.print_json(data=message)
