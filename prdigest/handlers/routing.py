"""Messages the rules cannot place, routed by the LLM with tool calling over the same commands.

The model sees one tool per command and names one, with arguments that are validated
here; a failed call, no tool call or arguments that do not validate leave the rules'
reading as it was.
"""

from __future__ import annotations

import logging
from datetime import date
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prdigest.config import LLMSettings
from prdigest.handlers.commands import Intent
from prdigest.periods import fixed
from prdigest.prompts import load_prompt

if TYPE_CHECKING:
    from prdigest.analysis.llm.client import ChatCompletionToolParam

log = logging.getLogger("prdigest.handlers")

REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PeriodArgs(_Args):
    since: date | None = Field(default=None, description="First day, YYYY-MM-DD")
    until: date | None = Field(default=None, description="Last day, YYYY-MM-DD (inclusive)")
    repo: str | None = Field(default=None, pattern=REPO_PATTERN, description="owner/name, when named")

    @model_validator(mode="after")
    def _ordered(self) -> PeriodArgs:
        if (self.since is None) != (self.until is None):
            raise ValueError("since and until go together")
        if self.since and self.until and self.until < self.since:
            raise ValueError("until is before since")
        return self


class CountArgs(PeriodArgs):
    n: int | None = Field(default=None, ge=1, le=50, description="How many to list")


class ExplainArgs(_Args):
    pr: int = Field(ge=1, le=10**9, description="The pull request's number")
    repo: str | None = Field(default=None, pattern=REPO_PATTERN)


class AskArgs(PeriodArgs):
    question: str = Field(min_length=1, max_length=2000, description="The question, as asked")


TOOLS: dict[str, tuple[type[_Args], str]] = {
    "report": (PeriodArgs, "The weekly report of a period (default: last week)."),
    "risks": (PeriodArgs, "The risks of the pull requests merged in a period."),
    "top": (CountArgs, "The most important pull requests of a period."),
    "authors": (CountArgs, "Who authored the pull requests of a period, most first."),
    "hot": (CountArgs, "The files that many pull requests of a period changed."),
    "explain": (ExplainArgs, "What one pull request does, why it matters, its risks."),
    "ask": (AskArgs, "A free question answered from the merged pull requests, citing them."),
    "help": (_Args, "What the bot can do: for greetings, thanks and anything that is not a request."),
}


def tools() -> list[ChatCompletionToolParam]:
    return [
        {
            "type": "function",
            "function": {"name": name, "description": about, "parameters": model.model_json_schema()},
        }
        for name, (model, about) in TOOLS.items()
    ]


def route(message: str, rules: Intent, llm: LLMSettings, today: date) -> Intent:
    """The command the model names for ``message``; ``rules`` (the rules' reading) when it names none
    that validates, or cannot be asked. ``today`` is the asker's day, that "last week" counts from."""
    from prdigest.analysis.llm import json_value, tool_call  # the openai SDK, only with an LLM configured

    prompt = load_prompt("route", "en")
    messages = [
        {"role": "system", "content": prompt.render("system", today=today.isoformat())},
        {"role": "user", "content": prompt.render("user", message=message[:2000])},
    ]
    called = tool_call(llm, messages, tools())
    if called is None or called[0] not in TOOLS:
        log.info("the model named no command for a message: the rules' reading stands")
        return rules
    name, arguments = called
    try:
        # Arguments too long or nested too deep are a ValueError too: the rules' reading stands.
        args = TOOLS[name][0].model_validate(json_value(arguments, llm.max_output_tokens.route))
    except (ValidationError, ValueError) as exc:
        log.info("the model's %s call did not validate (%s): the rules' reading stands", name, exc)
        return rules
    return _intent(name, args, rules, message)


def _intent(name: str, args: _Args, rules: Intent, message: str) -> Intent:
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
