"""A chat command is one registration plus its texts: help, the parser, the LLM router's tools, the lanes
and the default period all find it there."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import demo_services

from prdigest.config import load_settings
from prdigest.handlers import Context, Reply, Services, handle
from prdigest.handlers.commands import COMMANDS, Intent, command, spec, words
from prdigest.handlers.help import help_lines
from prdigest.handlers.lanes import lane_of
from prdigest.handlers.request import request
from prdigest.handlers.routing import tools
from prdigest.handlers.scope import text_reply
from prdigest.handlers.tool_args import PeriodArgs
from prdigest.handlers.understand import understand
from prdigest.i18n import chat, texts
from prdigest.models import LANGS
from prdigest.storage import Store

CONSOLE = Context(platform="console", chat_id="console", user_id="me")


@pytest.fixture
def standup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What a new command's module and its texts would hold, registered for one test."""
    monkeypatch.setitem(chat.TEXT["en"], "usage_standup", "standup [last week | 2026-W37]")
    monkeypatch.setitem(chat.TEXT["en"], "about_standup", "the period in three lines, for the standup")
    monkeypatch.setitem(chat.TEXT["zh"], "usage_standup", "站会 [上周 | 2026-W37]")
    monkeypatch.setitem(chat.TEXT["zh"], "about_standup", "三行说完本周期，开站会用")
    texts.cache_clear()  # the merged tables are built once
    registered = list(COMMANDS)

    @command(
        "standup", en=("standup",), zh=("站会",), order=35, period=True, lane="cached",
        said=words(r"\bstand-?up\b", "站会"), specific=0,
        tool=PeriodArgs, tool_about="The period in three lines, for a standup meeting.",
    )  # fmt: skip
    def standup(intent: Intent, ctx: Context, svc: Services) -> Reply:
        window = intent.window_in(svc.clock().date(), svc.settings.report.timezone)
        assert window is not None
        return text_reply("text", intent.lang, f"standup {window.since}..{window.until}")

    yield
    COMMANDS[:] = registered
    texts.cache_clear()  # emptied before monkeypatch takes the texts back: built again without them


@pytest.mark.usefixtures("standup")
def test_a_command_registered_in_one_place_is_in_help_the_parser_and_the_routers_tools(
    demo_store: Store,
) -> None:
    # Help: its texts, in its order (after top, before explain), in both languages.
    for lang in LANGS:
        usages = [line.usage for line in help_lines(lang)]
        assert usages.index(texts(lang)["usage_standup"]) == usages.index(texts(lang)["usage_top"]) + 1
    # The parser: its leading word, its words in a sentence, its period and its language.
    assert understand("standup last week").command == "standup"
    assert understand("站会 上周").lang == "zh" and understand("站会 上周").period is not None
    assert understand("anything for the stand-up?").command == "standup"
    # The router: a tool of its name, with its arguments' schema.
    tool = next(t for t in tools() if t["function"]["name"] == "standup")
    assert tool["function"]["parameters"]["properties"].keys() >= {"since", "until", "repo"}
    # Dispatch and the default period: a command about a period that names none gets the last week.
    svc = demo_services(load_settings(env={}), demo_store)
    reply = handle("standup", CONSOLE, svc)
    assert reply.text == "standup 2026-09-07..2026-09-13"
    # The lanes: as the other commands answered from the period's report.
    assert lane_of(request("standup", CONSOLE), svc) == lane_of(request("risks", CONSOLE), svc)


def test_every_command_has_its_texts_in_every_language() -> None:
    assert len(COMMANDS) >= 18 and len({c.name for c in COMMANDS}) == len(COMMANDS)
    for lang in LANGS:
        t = texts(lang)
        for c in COMMANDS:
            for key in c.text_keys:
                assert t.get(key, "").strip(), (lang, key)
        # ...and no texts of a command that is not registered.
        usages = {key.removeprefix("usage_") for key in t if key.startswith("usage_")}
        assert usages == {c.name for c in COMMANDS}, (lang, usages ^ {c.name for c in COMMANDS})


def test_the_registry_decides_the_lanes_and_the_period() -> None:
    fast = {c.name for c in COMMANDS if c.lane == "fast"}
    assert fast == {"help", "subscriptions", "subscribe", "unsubscribe"}
    assert {c.name for c in COMMANDS if c.period} == {"report", "risks", "top", "authors", "hot", "reviewers"}
    assert spec("mute").leads and spec("mute").admin and not spec("risks").leads
    # The router's tools are the commands with an argument model, in help's order.
    assert [t["function"]["name"] for t in tools()] == [
        "report", "risks", "top", "explain", "authors", "hot", "open", "reviewers", "ask", "help",
    ]  # fmt: skip
