"""Streamed answers (analysis/llm/stream.py): a server on this machine or a private network is read as a
stream, ended once the answer's JSON object closes, once it is too long to be valid, or at the deadline;
closing the stream tells the server to stop generating (the fake counts the clients that left)."""

from __future__ import annotations

import time

import pytest
from fakes.openai_api import Reply, analysis_json, pr_number
from test_llm_engine import settings, week_prs

from prdigest.analysis.llm import LLMEngine
from prdigest.analysis.llm.stream import TRAILING_SPACE, Chunks, JsonEnd, joined
from prdigest.config import LLMSettings, Taxonomy
from prdigest.pipeline.single import analyse_prs
from prdigest.storage import Store, llm_log

GOOD = analysis_json(4110)


def cut_at(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 3, 8, 1000])
def test_the_end_of_the_first_object_is_found_however_the_pieces_fall(size: int) -> None:
    tricky = 'Here it is: {"a": "} { \\" }", "b": {"c": [1, {"d": "x"}]}} and then {"more": 1}'
    assert joined(cut_at(tricky, size), True, 10_000) == tricky[: tricky.index("}} and") + 2]
    assert joined(cut_at(tricky, size), False, 10_000) == tricky  # the plain rung reads it all


def test_finished_answers_are_read_to_their_end_and_runaways_are_cut() -> None:
    # White space after the object is read on (the server's last chunks carry the usage) ...
    assert joined([GOOD, "\n", " ", "\n"], True, 10_000) == GOOD
    # ... but not without end, and not words.
    assert joined([GOOD, *["\n"] * (TRAILING_SPACE + 10), "never read"], True, 10_000) == GOOD
    assert joined([GOOD[:-1], "} Anything else?", "never read"], True, 10_000) == GOOD
    endless = ('{"summary": "' + "na " * 10) * 1_000  # an object that never closes
    assert len(joined(cut_at(endless, 8), True, 100)) <= 108


@pytest.mark.parametrize("size", [1, 5, 1000])
def test_an_object_that_begins_off_the_schema_is_cut_at_its_first_key(size: int) -> None:
    keys = frozenset({"summary", "importance"})
    off = '{"description": "' + "garbage " * 500 + '"}'
    assert joined(cut_at(off, size), True, 100_000, keys).startswith('{"description"')
    assert len(joined(cut_at(off, size), True, 100_000, keys)) < 20 + size
    on = '{"summary": "A \\"quoted\\" fix", "extra": 1, "importance": 5}'
    assert joined(cut_at(on, size), True, 100_000, keys) == on  # later keys are the schema's to judge
    assert joined(cut_at(off, size), True, 100_000) == off  # no keys given: read to its close


def test_the_scan_takes_linear_time_on_hostile_text() -> None:
    started = time.monotonic()
    end = JsonEnd()
    for piece in cut_at("{" * 200_000 + '"\\\\' * 100_000, 4096):
        end.feed(piece)
    assert time.monotonic() - started < 10  # a bound against a quadratic scan, not a speed goal


def ask_one(store: Store, llm: LLMSettings) -> LLMEngine:
    pr = next(p for p in week_prs(store) if p.number == 4110)
    engine = LLMEngine(llm, store)
    engine.analyse([pr], analyse_prs(store, [pr], Taxonomy(), "en"), Taxonomy(), "en")
    return engine


def test_a_local_server_is_streamed_and_left_once_the_json_has_closed(demo_store: Store, serve) -> None:
    # A weak model writes on after its answer, a chunk every 50 ms: 2,000 more characters, 12 s.
    fake = serve(responder=lambda _: Reply(content=GOOD + " I hope this helps!" * 100, drip=0.05))
    engine = ask_one(demo_store, settings(fake))
    assert fake.requests[-1].body["stream"] is True
    assert engine.usage().analysed == 1
    assert fake.wait_left(1) == 1  # the client closed the stream: the server stops generating


def test_a_stream_still_running_at_the_deadline_is_ended(demo_store: Store, serve) -> None:
    endless = '{"summary": "' + "and so on " * 2_000
    fake = serve(responder=lambda _: Reply(content=endless, drip=0.1))
    engine = ask_one(demo_store, settings(fake, timeout=1))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert [c.outcome for c in calls] == ["timeout"] and calls[0].latency_ms < 5_000
    assert fake.wait_left(1) == 1  # the server was told, not left generating for the next request to wait on


def test_the_usage_a_finished_stream_ends_with_is_kept(demo_store: Store, serve) -> None:
    fake = serve(responder=lambda _: GOOD)
    engine = ask_one(demo_store, settings(fake))
    (call,) = llm_log.calls_of_run(demo_store, engine.run_id)
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}
    assert call.output_tokens == -(-len(GOOD) // 4) and fake.left == 0  # the fake's billing, read whole


def test_streaming_is_for_local_servers_unless_the_settings_say(demo_store: Store, serve) -> None:
    assert LLMSettings(model="m", base_url="http://10.0.0.7:8000/v1").streams
    assert not LLMSettings(model="m", base_url="https://api.example.com/v1").streams
    assert not LLMSettings(model="m").streams  # OpenAI itself
    assert LLMSettings(model="m", base_url="https://api.example.com/v1", stream=True).streams
    fake = serve(responder=lambda _: GOOD)
    assert ask_one(demo_store, settings(fake, stream=False)).usage().analysed == 1
    assert "stream" not in fake.requests[0].body


def test_a_stream_the_server_takes_back_is_asked_again_one_at_a_time(demo_store: Store, serve) -> None:
    fake = serve(responder=lambda _: GOOD)
    fake.enqueue(Reply(content=GOOD, interrupted=True))  # [DONE] with no finish reason: not a blank answer
    engine = ask_one(demo_store, settings(fake))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert [(c.rung, c.outcome) for c in calls] == [("json_schema", "interrupted"), ("json_schema", "ok")]
    assert engine.client.serial and engine.usage().analysed == 1


def test_a_server_that_serves_one_stream_at_a_time_gets_one(demo_store: Store, serve) -> None:
    # llama-cpp-python takes a stream back when another request arrives: two workers would end each
    # other's answers; after the first such end the client sends one at a time, and every PR is answered.
    fake = serve("weak", responder=lambda r: Reply(content=analysis_json(pr_number(r)), drip=0.01))
    prs = week_prs(demo_store)[:6]
    engine = LLMEngine(settings(fake, concurrency=2), demo_store)
    engine.analyse(prs, analyse_prs(demo_store, prs, Taxonomy(), "en"), Taxonomy(), "en")
    outcomes = [c.outcome for c in llm_log.calls_of_run(demo_store, engine.run_id)]
    assert engine.usage().analysed == 6 and "interrupted" in outcomes and engine.client.serial


def test_an_answer_that_begins_off_the_schema_is_left_at_once(demo_store: Store, serve) -> None:
    off = '{"description": "' + "more words " * 200 + '"}'  # 2,200 characters, 14 s at a chunk per 50 ms
    fake = serve(responder=lambda _: Reply(content=off, drip=0.05))
    engine = ask_one(demo_store, settings(fake))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert [c.outcome for c in calls] == ["invalid", "invalid"]  # the answer and its repair, both cut
    assert fake.wait_left(2) == 2 and all(c.latency_ms < 5_000 for c in calls)


def test_every_client_of_one_endpoint_shares_one_connection_pool() -> None:
    """A worker builds hundreds of reports, each with its own LLM client: loading a TLS context and
    opening connections for each would cost more CPU than their answers."""
    from prdigest.analysis.llm.client import sdk_client

    one = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout=30)
    first, second = sdk_client(one), sdk_client(one.model_copy())
    assert first is not second and first._client is second._client
    other = sdk_client(one.model_copy(update={"timeout": 5}))  # its deadline is the transport's own
    assert other._client is not first._client


def test_chunks_of_any_shape_give_their_text_and_nothing_else() -> None:
    """Servers differ: chunks are read as parsed, and what is not of the chunk's shape holds no text."""
    chunks = Chunks([
        {"choices": [{"delta": {"role": "assistant"}}]},
        {"choices": [{"delta": {"content": '{"a": '}}, "not a choice"]},
        "not a chunk", None, {"choices": "not a list"}, {"choices": [{"delta": "not a delta"}]},
        {"choices": [{"delta": {"content": 1}}, {"delta": {"content": "1}"}, "finish_reason": None}]},
        {"choices": [{"delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}},
    ])  # fmt: skip
    assert (chunks.finished, chunks.ended) == (False, False)
    assert "".join(chunks) == '{"a": 1}'
    assert (chunks.finished, chunks.ended, chunks.tokens()) == (True, True, (12, 5))
    odd = Chunks([{"choices": [], "usage": {"prompt_tokens": "12", "completion_tokens": -1}}])
    assert (list(odd), odd.tokens(), odd.finished) == ([], (0, 0), False)
