"""The LLM rate limit ([llm] requests_per_minute, tokens_per_minute): requests spaced evenly by their
share of each limit, waited for within a run's deadline (a few seconds outside one), refused before
they are sent past it; and through the real SDK, a burst a server would answer 429 never reaches it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.openai_api import FakeOpenAI
from test_llm_engine import analyse, settings, week_prs

from prdigest.analysis.llm import LLMClient, LLMUnavailable, tool_call
from prdigest.analysis.llm.patience import waiting_out_rate_limits
from prdigest.analysis.llm.rate import WAIT_WITHOUT_DEADLINE_S, Limiter, LocalTurns, _local_turns
from prdigest.config import load_settings
from prdigest.errors import ConfigError
from prdigest.storage import Store


@pytest.fixture(autouse=True)
def fresh_lines() -> Iterator[None]:
    """Each test's fake servers start with an empty line, whatever port an earlier test's had."""
    _local_turns.cache_clear()
    yield
    _local_turns.cache_clear()


class Clock:
    """A fake monotonic clock; its sleep records the wait and, when ``passes``, lets that time pass."""

    def __init__(self, passes: bool = True):
        self.now = 1000.0
        self.passes = passes
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.passes:
            self.now += seconds


def limited(rpm: int | None = None, tpm: int | None = None, passes: bool = True) -> tuple[Limiter, Clock]:
    clock = Clock(passes)
    return Limiter(LocalTurns(clock), rpm, tpm, clock.sleep), clock


def prompt(tokens: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": "word" * tokens}]  # four ASCII characters a token


FAR = float("inf")  # a deadline that never comes


def test_requests_are_spaced_evenly_and_an_idle_endpoint_saves_no_burst() -> None:
    limiter, clock = limited(rpm=60)
    for _ in range(3):
        limiter.take(prompt(10), 0, FAR, "pr")
    assert clock.slept == [1.0, 1.0]  # the first at once, then one a second
    clock.now += 30  # half a minute unused is not spent at once afterwards
    limiter.take(prompt(10), 0, FAR, "pr")
    limiter.take(prompt(10), 0, FAR, "pr")
    assert clock.slept == [1.0, 1.0, 1.0]


def test_a_request_holds_the_endpoint_for_its_share_of_the_tokens() -> None:
    limiter, clock = limited(rpm=60, tpm=6000)  # 1 s a request, 0.01 s a token
    assert limiter.occupancy(50) == 1.0 and limiter.occupancy(300) == pytest.approx(3.0)
    limiter.take(prompt(250), 50, FAR, "pr")  # the prompt's estimate plus its max_tokens: 3 s
    limiter.take(prompt(20), 10, FAR, "pr")  # waits those 3 s, then holds the request's 1 s
    limiter.take(prompt(20), 10, FAR, "pr")
    assert clock.slept == pytest.approx([3.0, 1.0])


def test_a_turn_past_the_deadline_raises_at_once_and_takes_no_turn() -> None:
    limiter, clock = limited(rpm=6)  # 10 s a request
    limiter.take(prompt(10), 0, None, "first")
    with pytest.raises(LLMUnavailable, match="second: rate_limited") as raised:
        limiter.take(prompt(10), 0, time.monotonic() + 8, "second")
    assert not raised.value.fatal and clock.slept == []
    with pytest.raises(LLMUnavailable):
        limiter.take(prompt(10), 0, time.monotonic() - 1, "past")  # a deadline gone: 10 s is too long
    limiter.take(prompt(10), 0, time.monotonic() + 60, "third")
    assert clock.slept == [10.0]  # the refused requests booked nothing


def test_a_delivery_past_its_deadline_still_waits_as_long_as_a_chat_answer() -> None:
    """A catch-up hours after its fire time asks the model still: its requests wait a few seconds each,
    not none (every one would fall to the rules)."""
    limiter, clock = limited(rpm=60)  # 1 s a request
    gone = time.monotonic() - 3600
    for _ in range(3):
        limiter.take(prompt(10), 0, gone, "late")
    assert clock.slept == [1.0, 1.0]


def test_without_a_deadline_a_turn_is_waited_for_a_few_seconds_at_most() -> None:
    assert 1 <= WAIT_WITHOUT_DEADLINE_S <= 10
    limiter, clock = limited(rpm=20, passes=False)  # 3 s a request; nobody's turn passes here
    limiter.take(prompt(10), 0, None, "chat")
    limiter.take(prompt(10), 0, None, "chat")  # 3 s away: waited for
    with pytest.raises(LLMUnavailable, match="rate_limited"):
        limiter.take(prompt(10), 0, None, "chat")  # 6 s away
    assert clock.slept == [3.0]


def test_without_a_limit_nothing_is_booked() -> None:
    class Refuses:
        def book(self, seconds: float, patience: float) -> float | None:
            raise AssertionError("booked")

    Limiter(Refuses(), None, None).take(prompt(10_000), 4000, None, "pr")


def test_threads_sharing_a_limiter_each_get_a_turn_of_their_own() -> None:
    """Real time, a short turn: the k-th request of all the threads' goes k turns after the start at the
    earliest (a lower bound only: a slow machine sends later, never earlier)."""
    turn = 0.02
    limiter = Limiter(LocalTurns(), 3000, None)
    sent: list[float] = []
    lock = threading.Lock()
    start = time.monotonic()

    def send() -> None:
        for _ in range(5):
            limiter.take(prompt(10), 0, time.monotonic() + 30, "pr")
            with lock:
                sent.append(time.monotonic())

    threads = [threading.Thread(target=send, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(sent) == 40
    assert all(at >= start + k * turn - 1e-6 for k, at in enumerate(sorted(sent)))


# --- through the SDK, against the fake OpenAI server --------------------------------------------------


@pytest.mark.parametrize("limit", [{}, {"requests_per_minute": 2}, {"tokens_per_minute": 20_000}])
def test_a_burst_the_server_would_answer_429_never_reaches_it(
    demo_store: Store, serve, limit: dict[str, int]
) -> None:
    """A report asked from the command line (no deadline), six PRs at once, a server taking two requests
    a minute: unlimited, it answers 429; limited, the next turn is past the few seconds such a report
    waits (30 s, or ~9 s for a prompt plus max_tokens of ~3,000 at 20,000 a minute), so the rules
    analyse those PRs and no request is sent for them. The turns are booked in the store's line."""
    fake = serve(rate_per_minute=2)
    prs = week_prs(demo_store)[:6]
    analyses, engine = analyse(demo_store, settings(fake, concurrency=3, **limit), prs)
    by_llm = sum(analyses[pr.number].engine == "llm" for pr in prs)
    if not limit:
        assert fake.calls == 6 and fake.rate_limited == 4 and by_llm == 2
        assert engine.usage().not_analysed == {"rate_limited": 4}
    else:
        assert fake.calls == 1 and fake.rate_limited == 0 and by_llm == 1
        assert engine.usage().calls == 1  # a request refused before it was sent costs nothing
        assert engine.usage().not_analysed == {"rate_limited": 5}  # counted as the 429s were


def test_within_a_deadline_requests_wait_their_turn_and_all_are_answered(demo_store: Store, serve) -> None:
    fake = serve()
    llm = settings(fake, concurrency=4, requests_per_minute=240)  # a turn of 0.25 s
    prs = week_prs(demo_store)[:4]
    start = time.monotonic()
    with waiting_out_rate_limits(30):  # a scheduled delivery's run
        analyses, _ = analyse(demo_store, llm, prs, client=LLMClient(llm))
    assert {analyses[pr.number].engine for pr in prs} == {"llm"}
    arrived = sorted(request.at for request in fake.requests)  # the fake's clock is time.monotonic
    assert len(arrived) == 4
    assert all(at >= start + k * 0.25 - 1e-6 for k, at in enumerate(arrived))


def test_chat_routing_waits_its_turn_too(serve) -> None:
    fake: FakeOpenAI = serve(responder=lambda _: "It names no command.")
    llm = settings(fake, requests_per_minute=1)
    messages = [{"role": "user", "content": "what changed in the loader?"}]
    tool_call(llm, messages, [])
    assert fake.calls == 1
    assert tool_call(llm, messages, []) is None  # the next turn is a minute away: the rules' reading
    assert fake.calls == 1


def test_chat_routing_books_its_turn_in_the_stores_line(serve, tmp_path: Path) -> None:
    """Two processes' stores on one file: a route of one takes the turn the other would have had."""
    fake: FakeOpenAI = serve(responder=lambda _: "It names no command.")
    llm = settings(fake, requests_per_minute=1)
    messages = [{"role": "user", "content": "what changed in the loader?"}]
    one, other = Store(tmp_path / "cache.db"), Store(tmp_path / "cache.db")
    try:
        tool_call(llm, messages, [], one)
        _local_turns.cache_clear()  # the other process has a line of its own: only the store's is shared
        assert tool_call(llm, messages, [], other) is None
        assert fake.calls == 1
    finally:
        one.close()
        other.close()


def test_a_bad_limit_is_named_in_the_config_error(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[llm]\nmodel = "m"\nrequests_per_minute = 0\ntokens_per_minute = 90000\n')
    with pytest.raises(ConfigError, match=r"llm\.requests_per_minute: Input should be greater than or equal"):
        load_settings(path, env={})
    path.write_text('[llm]\nmodel = "m"\nrequests_per_minute = 500\ntokens_per_minute = 90000\n')
    llm = load_settings(path, env={}).llm
    assert llm is not None and (llm.requests_per_minute, llm.tokens_per_minute) == (500, 90_000)
