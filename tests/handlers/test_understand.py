"""How the chat reads a message: the command, its period, count, PR and language, from the text alone;
`prdigest parse`; the LLM's routing of what the rules cannot place; follow-ups in a card's thread."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from conftest import demo_services, open_access
from fakes.openai_api import Reply as FakeReply
from fakes.openai_api import prdigest_answers

from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.handlers.commands import COMMANDS
from prdigest.handlers.context import Thread
from prdigest.handlers.request import describe
from prdigest.handlers.request import read as reading
from prdigest.storage import Store

WEDNESDAY = date(2026, 9, 16)
LAST_WEEK = ("2026-09-07", "2026-09-13")
THIS_WEEK = ("2026-09-14", "2026-09-16")
NO_PERIOD = (None, None)


def read(text: str) -> dict[str, object]:
    return describe(reading(text), WEDNESDAY, "Asia/Shanghai")


@pytest.mark.parametrize(
    ("text", "command", "period", "n", "pr", "lang"),
    [
        # the command words and their synonyms, anywhere in a short message
        ("risks", "risks", LAST_WEEK, None, None, "en"),
        ("what might go wrong this week?", "risks", THIS_WEEK, None, None, "en"),
        ("anything risky lately", "risks", LAST_WEEK, None, None, "en"),
        ("were there breaking changes last week", "risks", LAST_WEEK, None, None, "en"),
        ("本周有没有隐患", "risks", THIS_WEEK, None, None, "zh"),
        ("biggest PRs", "top", LAST_WEEK, None, None, "en"),
        ("top3 this week", "top", THIS_WEEK, 3, None, "en"),
        ("give me the top five", "top", LAST_WEEK, 5, None, "en"),
        ("前三个重点 PR", "top", LAST_WEEK, 3, None, "zh"),
        ("who contributed the most", "authors", LAST_WEEK, None, None, "en"),
        ("top 3 authors", "authors", LAST_WEEK, 3, None, "en"),
        ("最活跃的贡献者", "authors", LAST_WEEK, None, None, "zh"),
        ("which files were touched by many PRs", "hot", LAST_WEEK, None, None, "en"),
        ("热点", "hot", LAST_WEEK, None, None, "zh"),
        ("weekly digest for the week before last", "report", ("2026-08-31", "2026-09-06"), None, None, "en"),
        ("what happened last week?", "report", LAST_WEEK, None, None, "en"),
        ("上个月的总结", "report", ("2026-08-01", "2026-08-31"), None, None, "zh"),
        ("how many PRs were merged last week?", "report", LAST_WEEK, None, None, "en"),
        ("show me the PRs merged since Monday", "report", ("2026-09-14", "2026-09-16"), None, None, "en"),
        ("上周合并了哪些PR", "report", LAST_WEEK, None, None, "zh"),
        ("which PRs touched the rollout engine?", "ask", NO_PERIOD, None, None, "en"),  # says more
        ("what broke last week?", "risks", LAST_WEEK, None, None, "en"),
        # a PR number: explain, however it is asked
        ("tell me about #2126", "explain", NO_PERIOD, None, 2126, "en"),
        ("PR 1740 改了什么", "explain", NO_PERIOD, None, 1740, "zh"),
        ("why did #88 score so low?", "explain", NO_PERIOD, None, 88, "en"),
        ("说明一下 512", "explain", NO_PERIOD, None, 512, "zh"),
        ("42号PR是干什么的", "explain", NO_PERIOD, None, 42, "zh"),
        ("#31 有什么风险？", "explain", NO_PERIOD, None, 31, "zh"),
        # questions: "why" without a PR, and questions that name no command
        ("why is the trainer slower?", "ask", NO_PERIOD, None, None, "en"),
        ("why were the PRs merged without review?", "ask", NO_PERIOD, None, None, "en"),
        ("who touched the scheduler last week?", "ask", LAST_WEEK, None, None, "en"),
        ("explain the checkpoint change", "ask", NO_PERIOD, None, None, "en"),
        ("调度器为什么改了？", "ask", NO_PERIOD, None, None, "zh"),
        # a long question is asked as written, whatever words it uses
        ("is the risk in the checkpoint loader real or did the report misread how the loader is called?",
         "ask", NO_PERIOD, None, None, "en"),
        # help: greetings, questions about the bot, and noise (never search results)
        ("hello", "help", NO_PERIOD, None, None, "en"),
        ("what can you do?", "help", NO_PERIOD, None, None, "en"),
        ("how do I subscribe?", "help", NO_PERIOD, None, None, "en"),
        ("你能做什么", "help", NO_PERIOD, None, None, "zh"),
        ("qwpeoi zxcv 42 !!", "help", NO_PERIOD, None, None, "en"),
        # admin commands, leading or in a sentence
        ("subscriptions", "subscriptions", NO_PERIOD, None, None, "en"),
        ("list my subscriptions", "subscriptions", NO_PERIOD, None, None, "en"),
        ("please unsubscribe acme/widgets", "unsubscribe", NO_PERIOD, None, None, "en"),
        ("订阅 acme/widgets 周一 09:30", "subscribe", NO_PERIOD, None, None, "zh"),
        # the reply language asked for in words
        ("周报 in English", "report", LAST_WEEK, None, None, "en"),
        ("用中文解释 #12", "explain", NO_PERIOD, None, 12, "zh"),
    ],
)  # fmt: skip
def test_a_message_is_read_as_people_mean_it(
    text: str, command: str, period: tuple[str | None, str | None], n: int | None, pr: int | None, lang: str
) -> None:
    got = read(text)
    assert (got["command"], (got["since"], got["until"]), got["n"], got["pr"], got["lang"]) == (
        command, period, n, pr, lang,
    )  # fmt: skip


def test_the_repository_is_read_but_not_a_timezone_or_a_date() -> None:
    assert read("risks acme/widgets 2026/09/01")["repo"] == "acme/widgets"
    sub = read("subscribe acme/widgets mon 09:30 Asia/Shanghai")
    assert (sub["command"], sub["repo"]) == ("subscribe", "acme/widgets")
    assert read("report 2026/09/01")["repo"] is None


def test_a_bad_pr_number_is_an_error_not_a_guess(svc: Services) -> None:
    reply = handle("explain #0", CONSOLE, svc)
    assert reply.kind == "error" and "#0 is not a pull request number" in reply.text


def test_prdigest_parse_prints_one_json_object(run_cli) -> None:
    result = run_cli("parse", "上周最重要的 3 个 PR", "--today", "2026-09-16", "--tz", "Asia/Shanghai")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "command": "top", "since": "2026-09-07", "until": "2026-09-13", "n": 3, "pr": None, "repo": None,
        "lang": "zh", "question": None,
    }  # fmt: skip
    bad = run_cli("parse", "risks", "--today", "2026-02-30")
    assert bad.returncode != 0 and "bad --today date '2026-02-30'" in bad.stderr and bad.stdout == ""


# --- in a chat -------------------------------------------------------------------------------

CONSOLE = Context(platform="console", chat_id="console", user_id="me")


@pytest.fixture
def svc(demo_store: Store) -> Services:
    return demo_services(load_settings(env={}), demo_store)


def test_natural_questions_reach_their_commands(svc: Services) -> None:
    risks = handle("what could break last week?", CONSOLE, svc)
    assert risks.kind == "risks" and "2026-09-07" in risks.text
    authors = handle("who contributed the most last week", CONSOLE, svc)
    assert "hyzhang-ml: 7" in authors.text
    noise = handle("asdf qwer 77 !!!", CONSOLE, svc)
    assert noise.kind == "help" and noise.cited == []


def test_a_follow_up_in_a_cards_thread_is_about_that_card(svc: Services) -> None:
    # The demo week is W37; the chat's "last week" is W37 too, so the card is of the week before.
    card = Thread(
        repo="acme-ml/trainer", since="2026-08-31", until="2026-09-06", tz="Asia/Shanghai", lang="zh"
    )
    in_thread = CONSOLE.model_copy(update={"thread": card})
    empty = handle("risks", in_thread, svc)
    assert "from 2026-08-31 to 2026-09-06" in empty.text
    # A period named in the message wins over the card's.
    named = handle("risks 2026-W37", in_thread, svc)
    assert named.kind == "risks" and "2026-09-07" in named.text


def test_a_follow_up_under_a_posted_card_takes_its_week(svc: Services) -> None:
    from prdigest.bot.app import BotCore, Inbound
    from prdigest.storage.cards import remember_card

    report = handle("report 2026-W37", CONSOLE, svc).report
    assert report is not None
    remember_card(svc.store, "slack", "C1", "1700000000.000100", report)
    core = BotCore(svc, workers=1)
    try:
        # A week later: the chat's "last week" is W38 now.
        svc.clock = lambda: datetime(2026, 9, 21, 2, 0, tzinfo=UTC)
        follow = Inbound(platform="slack", event_id="f-1", chat_id="C1", user_id="U1", text="risks",
                         thread_id="1700000000.000100", card_id="1700000000.000100")  # fmt: skip
        reply = core.answer(core.request(follow))
        outside = core.answer(core.request(follow.model_copy(update={"event_id": "f-2", "card_id": None})))
    finally:
        core.close()
    assert reply.kind == "risks" and "2026-09-07" in reply.text
    assert "2026-09-14" in outside.text  # not in the thread: the chat's last week


# --- the LLM routes what the rules cannot place ------------------------------------------------


def llm_services(svc: Services, fake) -> Services:
    env = {"PRDIGEST_LLM_BASE_URL": fake.url, "PRDIGEST_LLM_MODEL": "fake-model",
           "PRDIGEST_LLM_API_KEY": fake.key}  # fmt: skip
    return Services(
        settings=open_access(load_settings(env=env)), store=svc.store, default_repo=svc.default_repo,
        source_for=svc.source_for, clock=svc.clock,
    )  # fmt: skip


def routing(*calls: tuple[str, str], answer: FakeReply | None = None):
    """A fake model that answers routing requests with ``calls`` (or ``answer``), and analyses as usual."""

    def respond(request):
        if "tools" not in request.body:
            return prdigest_answers(request)
        return answer or FakeReply(tool_calls=calls)

    return respond


def routed(fake) -> list:
    return [r for r in fake.requests if "tools" in r.body]


def test_the_model_routes_a_message_the_rules_cannot_place(serve, svc: Services) -> None:
    fake = serve(responder=routing(("top", '{"n": 2}')))
    llm_svc = llm_services(svc, fake)
    reply = handle("gimme the juicy stuff", CONSOLE, llm_svc)
    assert reply.kind == "prs" and len(reply.prs) == 2
    (request,) = routed(fake)
    names = {tool["function"]["name"] for tool in request.body["tools"]}
    assert names == {c.name for c in COMMANDS if c.tool is not None} >= {"report", "explain", "ask", "help"}
    assert "gimme the juicy stuff" in request.user
    # A message the rules place never reaches the router.
    assert handle("risks", CONSOLE, llm_svc).kind == "risks" and len(routed(fake)) == 1


@pytest.mark.parametrize("text", ["what can you do for us", "hi", "which PRs touched the scheduler?"])
def test_what_the_rules_read_as_help_or_a_question_goes_to_the_router_first(
    serve, svc: Services, text: str
) -> None:
    fake = serve(responder=routing(("risks", "{}")))
    llm_svc = llm_services(svc, fake)
    assert handle(text, CONSOLE, llm_svc).kind == "risks" and len(routed(fake)) == 1
    # A command's own word is never second-guessed.
    assert handle("help", CONSOLE, llm_svc).kind == "help" and len(routed(fake)) == 1


@pytest.mark.parametrize(
    "answer",
    [
        FakeReply(tool_calls=(("top", '{"n": 500}'),)),  # out of range
        FakeReply(tool_calls=(("report", '{"since": "2026-09-14", "until": "2026-09-01"}'),)),  # reversed
        FakeReply(tool_calls=(("drop_tables", "{}"),)),  # no such command
        FakeReply(tool_calls=(("explain", "not json"),)),
        FakeReply(content="I think you want the top PRs"),  # no tool call at all
        FakeReply(status=500),
    ],
)
def test_an_unusable_routing_leaves_the_rules_reading(serve, svc: Services, answer: FakeReply) -> None:
    fake = serve(responder=routing(answer=answer))
    reply = handle("gimme the juicy stuff", CONSOLE, llm_services(svc, fake))
    assert reply.kind == "help"  # the rules' reading of noise
    assert len(routed(fake)) >= 1


def test_a_routed_period_is_validated_and_kept(serve, svc: Services) -> None:
    fake = serve(responder=routing(("risks", '{"since": "2026-09-07", "until": "2026-09-13"}')))
    reply = handle("juicy stuff from the sprint", CONSOLE, llm_services(svc, fake))
    assert reply.kind == "risks" and "2026-09-07" in reply.text


def test_the_language_is_decided_once_for_the_answer_and_its_errors(svc: Services) -> None:
    assert handle("周报 in English", CONSOLE, svc).lang == "en"
    error = handle("解释 #0", CONSOLE, svc)
    assert error.kind == "error" and error.lang == "zh" and "#0" in error.text
    forced = CONSOLE.model_copy(update={"lang": "zh"})  # the console's --lang wins over the message
    assert handle("risks 2026-W37", forced, svc).lang == "zh"
