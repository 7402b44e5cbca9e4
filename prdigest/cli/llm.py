"""`prdigest llm check`: what the configured LLM endpoint supports, and the rung reports will use."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from prdigest.cli.support import common, open_store, progress_shown, settings_from, stderr, stdout_console

if TYPE_CHECKING:
    from prdigest.analysis.llm.probe import ServerCheck

# Exit statuses: the LLM answers no way of asking (the rules will), and no LLM is configured (usage).
EX_UNUSABLE = 1
EX_NO_MODEL = 2

_SHOWN = {"prompt": "plain prompt", "tools": "tools (chat routing)"}


@click.group()
def llm() -> None:
    """The LLM endpoint ([llm] in the config file, PRDIGEST_LLM_*)."""


@llm.command("check")
@common
def llm_check(config: str | None, db: str | None) -> None:
    """Ask the endpoint once per way of asking for JSON (json_schema, json_object, a plain prompt) and
    with a tool; print what it supports, its context length where it says it, and the verdict. The rung
    that works is remembered, so reports start there."""
    from prdigest.analysis.llm.client import endpoint_key
    from prdigest.analysis.llm.probe import check_server
    from prdigest.redact import scrub
    from prdigest.storage import llm_log

    settings = settings_from(config, db)
    if settings.llm is None:
        click.echo("no LLM configured ([llm] model or PRDIGEST_LLM_MODEL): the rules engine writes reports")
        sys.exit(EX_NO_MODEL)
    endpoint = endpoint_key(settings.llm)
    with progress_shown(stderr(), f"asking {scrub(endpoint)} ({settings.llm.model})…"):
        check = check_server(settings.llm)
    _show(check, scrub(endpoint), settings.llm.model)
    if check.rung is None:
        sys.exit(EX_UNUSABLE)
    store = open_store(settings)
    llm_log.remember_rung(store, endpoint, settings.llm.model, check.rung)
    store.close()


def _show(check: ServerCheck, endpoint: str, model: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    from prdigest.redact import scrub

    console = stdout_console()
    table = Table("way of asking", "result", "what the server said", title=f"{endpoint} · {model}")
    style = {"ok": "green", "rejected": "yellow", "ignored": "yellow"}
    for c in check.rungs:
        result = f"[{style.get(c.outcome, 'red')}]{c.outcome}[/]"
        table.add_row(_SHOWN.get(c.rung, c.rung), result, escape(scrub(c.detail)))
    console.print(table)
    if not check.reachable:
        console.print(
            "verdict: unusable, the server cannot be reached or refuses the key or the model; "
            "the rules engine writes reports"
        )
        return
    context = f"{check.context} tokens ({check.context_source})" if check.context else "unknown (not said)"
    console.print(f"context length: {context}")
    routing = "the model" if check.tools else "the rules (the model calls no tool)"
    if check.rung is None:
        console.print("verdict: unusable, no way of asking for JSON works; the rules engine answers")
    else:
        console.print(f"verdict: reports ask on the {check.rung} rung; chat is routed by {routing}")
