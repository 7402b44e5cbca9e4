"""Work lanes: cached answers never wait behind LLM calls; a queued request gets its notice; clean close."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import demo_monday_after, demo_source, open_access
from fakes.openai_api import KEY, FakeOpenAI, Reply, Request, prdigest_answers

from prdigest.bot.app import BotCore, Inbound
from prdigest.config import load_settings
from prdigest.handlers import Context, Services
from prdigest.handlers import Reply as ChatReply
from prdigest.handlers.commands import Intent
from prdigest.handlers.lanes import lane_of
from prdigest.handlers.request import request
from prdigest.models import Window
from prdigest.pipeline.single import read_window
from prdigest.storage import Store

DEMO = demo_source()
CTX = Context(platform="slack", chat_id="C1", user_id="U1")
ANSWER = '{"answer": "It was #4107.", "cited": [4107]}'


@pytest.fixture
def week(tmp_path: Path) -> Iterator[Store]:
    """The demo week in the cache, its days recorded as read (as a sync leaves them)."""
    store = Store(tmp_path / "lanes.db")
    read_window(store, DEMO, DEMO.window)
    yield store
    store.close()


class HangingLLM:
    """A fake LLM that answers analyses and narratives at once, and holds questions while ``hang`` is set."""

    def __init__(self) -> None:
        self.hang = threading.Event()
        self.fake = FakeOpenAI(responder=self.answer)

    def answer(self, request: Request) -> Reply | str:
        question = not any(tag in request.user for tag in ("<untrusted_pr_data>", "<untrusted_week_data>"))
        if self.hang.is_set() and question:
            return Reply(content=ANSWER, delay=60)  # released by close()
        return prdigest_answers(request)

    def wait_in_flight(self, n: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while self.fake.in_flight < n:
            assert time.monotonic() < deadline, f"{n} questions never reached the LLM"
            time.sleep(0.01)


@pytest.fixture
def llm() -> Iterator[HangingLLM]:
    hanging = HangingLLM()
    hanging.fake.start()
    yield hanging
    hanging.fake.close()


def services(store: Store, llm: HangingLLM | None = None) -> Services:
    env = {}
    if llm is not None:
        env = {
            "PRDIGEST_LLM_BASE_URL": llm.fake.url,
            "PRDIGEST_LLM_MODEL": "fake-model",
            "PRDIGEST_LLM_API_KEY": KEY,
        }
    monday = demo_monday_after()
    return Services(
        settings=open_access(load_settings(env=env)),
        store=store,
        default_repo=DEMO.repo,
        clock=lambda: monday,
    )


_ids = iter(range(1, 1_000_000))


def submit(
    core: BotCore, text: str, notices: list[str] | None = None
) -> tuple[threading.Event, list[ChatReply]]:
    done, replies = threading.Event(), []

    def respond(reply: ChatReply) -> None:
        replies.append(reply)
        done.set()

    inbound = Inbound(platform="slack", event_id=f"EvL{next(_ids)}", chat_id="C1", user_id="U1", text=text)
    core.submit(inbound, respond, None if notices is None else notices.append)
    return done, replies


def chat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("prdigest-chat")]


def closed_cleanly(core: BotCore) -> Callable[[], None]:
    def close() -> None:
        core.close()
        assert not chat_threads(), "a chat thread outlived close()"

    return close


def test_a_cached_command_answers_while_the_llm_holds_every_slow_worker(week: Store, llm: HangingLLM) -> None:
    core = BotCore(services(week, llm), workers=2)
    try:
        for text in ("risks", "explain #4107"):  # the first run of each fills the LLM's caches
            done, _ = submit(core, text)
            assert done.wait(30)
        llm.hang.set()
        questions = [submit(core, f"ask what changed in {topic}?") for topic in ("CI", "memory", "kernel")]
        llm.wait_in_flight(2)  # both slow workers wait for the LLM; the third question is queued
        started = time.monotonic()
        answers = [submit(core, text) for text in ("risks", "top 3", "explain #4107", "help")]
        for done, replies in answers:
            assert done.wait(10), "a cached answer waited behind the LLM"
            assert replies[0].kind != "error"
        assert time.monotonic() - started < 10
        assert not any(done.is_set() for done, _ in questions)  # still hanging: the lanes are apart
        assert [r[0].kind for _, r in answers] == ["risks", "prs", "explain", "help"]
    finally:
        llm.fake.close()  # releases the questions
        closed_cleanly(core)()
    assert all(done.is_set() for done, _ in questions)


def test_a_queued_slow_request_gets_the_notice_before_it_runs(week: Store, llm: HangingLLM) -> None:
    core = BotCore(services(week, llm), workers=1, notice_after=0.2)
    try:
        llm.hang.set()
        first, _ = submit(core, "ask what changed in CI?")
        llm.wait_in_flight(1)
        notices: list[str] = []
        queued, _ = submit(core, "ask 文档有什么变化？", notices)
        deadline = time.monotonic() + 5
        while not notices and time.monotonic() < deadline:
            time.sleep(0.02)
        assert notices == ["正在处理，请稍候……"]
        assert llm.fake.in_flight == 1 and not queued.is_set()  # it never ran: the notice counted from submit
    finally:
        llm.fake.close()
        closed_cleanly(core)()
    assert first.is_set() and queued.is_set()


def test_a_fast_answer_gets_no_notice_and_close_ends_every_thread(week: Store) -> None:
    core = BotCore(services(week), notice_after=0.3)
    notices: list[str] = []
    done, replies = submit(core, "top 3", notices)
    assert done.wait(10) and replies[0].kind == "prs"
    time.sleep(0.5)
    assert notices == []
    closed_cleanly(core)()


def test_a_delivery_claimed_by_another_process_is_not_answered_again(week: Store) -> None:
    """The in-memory check drops this process's repeats at once; the database's claim, made off the
    ack path, drops a delivery another replica (or this one before a restart) took: one reply."""
    replies: list[ChatReply] = []
    inbound = Inbound(platform="slack", event_id="EvOnce", chat_id="C1", user_id="U1", text="help")
    first, again = BotCore(services(week)), BotCore(services(week))
    try:
        future = first.submit(inbound, replies.append)
        assert future is not None
        future.result(10)
        assert first.submit(inbound, replies.append) is None
        future = again.submit(inbound, replies.append)  # a fresh memory: only the database knows
        assert future is not None
        future.result(10)
    finally:
        first.close()
        again.close()
    assert len(replies) == 1


def test_lanes_of_commands(week: Store, llm: HangingLLM) -> None:
    plain, with_llm = services(week), services(week, llm)
    assert not lane_of(request("help", CTX), with_llm).slow
    assert not lane_of(request("subscriptions", CTX), with_llm).slow
    assert lane_of(request("report", CTX), plain).slow  # a sync and a whole report
    assert lane_of(request("ask what changed?", CTX), with_llm).slow
    assert not lane_of(request("ask what changed?", CTX), plain).slow  # a search of the cache
    # A question is answered from its week's PRs first: a week the cache lacks may read the source.
    assert lane_of(request("what did the team merge in 2025-W10?", CTX), plain).slow
    assert lane_of(request("the weather is nice today", CTX), with_llm).slow  # routed by the LLM
    assert not lane_of(request("risks", CTX), plain).slow
    assert not lane_of(request("explain #4107", CTX), plain).slow
    assert lane_of(request("explain #99999", CTX), plain).slow  # not cached: a source may fetch it
    assert lane_of(request("risks 2025-W10", CTX), plain).slow  # days the cache lacks
    # With an LLM, the first run of a report fills its caches; the next ones, and its PRs, are fast.
    first = lane_of(request("risks", CTX), with_llm)
    assert first.slow and first.warms is not None
    assert not lane_of(request("top 3", CTX), with_llm, {first.warms}).slow
    assert not lane_of(request("explain #4107", CTX), with_llm, {first.warms}).slow
    assert lane_of(request("explain #4107", CTX), with_llm).slow
    window = Window(since=DEMO.window.since, until=DEMO.window.until, tz=DEMO.window.tz)
    button = Intent("risks", lang="en", repo=DEMO.repo, window=window)
    assert not lane_of(request(button, CTX), plain).slow


def test_a_report_the_llm_fell_short_on_stays_in_the_slow_lane(week: Store) -> None:
    with FakeOpenAI(responder=lambda request: "not what was asked") as fake:
        env = {
            "PRDIGEST_LLM_BASE_URL": fake.url,
            "PRDIGEST_LLM_MODEL": "fake-model",
            "PRDIGEST_LLM_API_KEY": KEY,
        }
        svc = Services(
            settings=open_access(load_settings(env=env)),
            store=week,
            default_repo=DEMO.repo,
            clock=demo_monday_after,
        )
        core = BotCore(svc)
        try:
            done, replies = submit(core, "risks")
            assert done.wait(30) and replies[0].report is not None
            assert (
                replies[0].report.llm_usage is not None and replies[0].report.llm_usage.narrative == "rules"
            )
            inbound = Inbound(platform="slack", event_id="EvNext", chat_id="C1", user_id="U1", text="risks")
            assert core.lane(
                core.request(inbound)
            ).slow  # the LLM is tried again next time: never in the fast lane
        finally:
            closed_cleanly(core)()
