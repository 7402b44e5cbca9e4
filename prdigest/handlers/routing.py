"""Messages the rules cannot place, routed by the LLM with tool calling over the same commands.

The model sees one tool per command and names one, with arguments that are validated
here; a failed call, no tool call or arguments that do not validate leave the rules'
reading as it was.
"""

from __future__ import annotations

import logging
from datetime import date
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from prdigest.config import LLMSettings
from prdigest.handlers.commands import CommandSpec, Intent, ranked
from prdigest.periods import fixed
from prdigest.prompts import load_prompt

if TYPE_CHECKING:
    from prdigest.analysis.llm.client import ChatCompletionToolParam
    from prdigest.storage import Store

log = logging.getLogger("prdigest.handlers")


def tool_specs() -> list[CommandSpec]:
    """The commands the model may name, in help's order."""
    return [c for c in ranked(lambda c: c.order) if c.tool is not None]


def tools() -> list[ChatCompletionToolParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": c.name,
                "description": c.tool_about,
                "parameters": c.tool.model_json_schema(),
            },
        }
        for c in tool_specs()
        if c.tool is not None
    ]


def route(message: str, rules: Intent, llm: LLMSettings, today: date, store: Store | None = None) -> Intent:
    """The command the model names for ``message``; ``rules`` (the rules' reading) when it names none
    that validates, or cannot be asked. ``today`` is the asker's day, that "last week" counts from."""
    from prdigest.analysis.llm import json_value, tool_call  # the openai SDK, only with an LLM configured

    prompt = load_prompt("route", "en")
    messages = [
        {"role": "system", "content": prompt.render("system", today=today.isoformat())},
        {"role": "user", "content": prompt.render("user", message=message[:2000])},
    ]
    called = tool_call(llm, messages, tools(), store)
    routed = {c.name: c.tool for c in tool_specs() if c.tool is not None}
    if called is None or called[0] not in routed:
        log.info("the model named no command for a message: the rules' reading stands")
        return rules
    name, arguments = called
    try:
        # Arguments too long or nested too deep are a ValueError too: the rules' reading stands.
        args = routed[name].model_validate(json_value(arguments, llm.max_output_tokens.route))
    except (ValidationError, ValueError) as exc:
        log.info("the model's %s call did not validate (%s): the rules' reading stands", name, exc)
        return rules
    return _intent(name, args, rules, message)


def _intent(name: str, args: BaseModel, rules: Intent, message: str) -> Intent:
    values = args.model_dump()
    since, until = values.get("since"), values.get("until")
    return Intent(
        name,
        rules.lang,
        period=fixed(since, until) if since and until else None,
        n=values.get("n"),
        pr=values.get("pr"),
        repo=values.get("repo"),
        question=values.get("question") or message,
    )
