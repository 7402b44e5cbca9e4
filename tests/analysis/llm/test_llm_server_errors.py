"""What a self-hosted server's errors mean: a refused way of asking for JSON steps down the ladder, a
full context is no refused format, generation is bounded, and a local server is not flooded."""

from __future__ import annotations

import logging

import pytest
from fakes.openai_api import Reply, Request, analysis_json, pr_number, prdigest_answers
from test_llm_engine import DEMO, settings, week_prs

from prdigest.analysis.llm import LLMClient, LLMEngine
from prdigest.config import LLMSettings, Taxonomy
from prdigest.config.models import HOSTED_WORKERS, LOCAL_WORKERS, is_local_url
from prdigest.pipeline.single import analyse_prs
from prdigest.storage import Store, llm_log


def analyse_two(store: Store, llm: LLMSettings) -> LLMEngine:
    prs = store.prs_in_window(DEMO.repo, DEMO.window)[:2]
    engine = LLMEngine(llm, store, LLMClient(llm))
    engine.analyse(prs, analyse_prs(store, prs, Taxonomy(), "en"), Taxonomy(), "en")
    return engine


def test_a_500_that_names_the_schema_steps_down_to_json_object(demo_store: Store, serve) -> None:
    def no_schema(request: Request) -> str | Reply:  # llama-cpp-python's answer to a schema
        if request.format == "json_schema":
            return Reply(status=500, message="Failed to parse the response_format json_schema into a grammar")
        return prdigest_answers(request)

    fake = serve(responder=no_schema)
    engine = analyse_two(demo_store, settings(fake, concurrency=1))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert [(c.rung, c.outcome) for c in calls] == [
        ("json_schema", "rejected"),
        ("json_object", "ok"),
        ("json_object", "ok"),
    ]


def test_a_full_context_is_no_refused_format_and_says_why(demo_store: Store, serve, caplog) -> None:
    fake = serve(responder=lambda _: Reply(status=400, message="Context size has been exceeded (n_ctx 8192)"))
    with caplog.at_level(logging.INFO, logger="prdigest.llm"):
        engine = analyse_two(demo_store, settings(fake, concurrency=1))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert {c.outcome for c in calls} == {"context"} and {c.rung for c in calls} == {"json_schema"}
    assert engine.client.rung == "json_schema"  # the ladder is not walked down for it
    assert len(calls) == 4  # each PR asked once more with less evidence
    # Why, where a user looks: the usage counts it, the log has a line per failed request.
    assert engine.usage().not_analysed == {"context": 2}
    assert sum("context on the json_schema rung" in r.getMessage() for r in caplog.records) == 4


def test_a_prompt_over_the_context_is_asked_again_with_half_the_evidence(demo_store: Store, serve) -> None:
    first, second = week_prs(demo_store)[:2]
    long_body = "The loader now reads the shards in the order the index gives. " * 800  # 50,000 characters
    big = [pr.model_copy(update={"body": long_body}) for pr in (first, second)]

    def fits(request: Request) -> str | Reply:  # a server with a 3,000-token context
        if len(request.text) > 4 * 3000:
            return Reply(status=400, message="Requested tokens (6100) exceed context window of 3000")
        return analysis_json(pr_number(request))

    fake = serve(responder=fits)
    engine = LLMEngine(settings(fake, concurrency=1, input_budget_tokens=5000), demo_store)
    out = engine.analyse(big, analyse_prs(demo_store, big, Taxonomy(), "en"), Taxonomy(), "en")
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    # The first PR overflows, then fits with half the evidence; the second is sent at once at that size.
    assert [c.outcome for c in calls] == ["context", "ok", "ok"]
    assert {a.engine for a in out.values()} == {"llm"}
    assert len(fake.requests[1].text) < 0.7 * len(fake.requests[0].text)


def test_a_plain_server_error_is_no_refused_format(demo_store: Store, serve) -> None:
    fake = serve(responder=lambda _: Reply(status=500, message="out of memory"))
    engine = analyse_two(demo_store, settings(fake, concurrency=1))
    assert {c.outcome for c in llm_log.calls_of_run(demo_store, engine.run_id)} == {"error"}


def test_every_request_bounds_what_the_model_generates(demo_store: Store, serve) -> None:
    fake = serve()
    caps = {"analyse_pr": 700}
    analyse_two(demo_store, settings(fake, concurrency=1, max_output_tokens=caps))
    assert [r.body.get("max_tokens") for r in fake.requests] == [700, 700]
    assert LLMSettings(model="m").max_output_tokens.narrate > LLMSettings(model="m").max_output_tokens.route
    with pytest.raises(ValueError, match="max_output_tokens"):
        LLMSettings(model="m", max_output_tokens={"analyse_pr": 0})


@pytest.mark.parametrize(
    ("url", "workers"),
    [
        ("http://127.0.0.1:8080/v1", LOCAL_WORKERS),
        ("http://localhost:11434/v1", LOCAL_WORKERS),
        ("http://10.1.2.3:8000/v1", LOCAL_WORKERS),
        ("http://gpu-box.local:8000/v1", LOCAL_WORKERS),
        ("https://api.deepseek.com/v1", HOSTED_WORKERS),
        (None, HOSTED_WORKERS),
    ],
)
def test_a_local_server_gets_fewer_requests_at_once(url: str | None, workers: int) -> None:
    assert LLMSettings(model="m", base_url=url).workers == workers
    assert LLMSettings(model="m", base_url=url, concurrency=5).workers == 5  # as set


def test_a_timed_out_request_to_a_local_server_is_not_sent_again(demo_store: Store, serve) -> None:
    # The local server is still generating the abandoned answer: a retry would only queue behind it.
    fake = serve(responder=lambda request: Reply(content=prdigest_answers(request), delay=3))
    llm = settings(fake, concurrency=1, timeout=1, max_retries=None)
    assert is_local_url(llm.base_url) and llm.retries == 0
    analyse_two(demo_store, llm)
    assert len(fake.requests) == 2  # one a PR, none sent again
    assert LLMSettings(model="m", base_url="https://api.deepseek.com/v1").retries == 2
    assert LLMSettings(model="m", base_url="http://127.0.0.1:8080/v1", max_retries=1).retries == 1  # as set


def test_a_refused_rung_is_skipped_and_remembered_even_when_the_next_one_times_out(
    demo_store: Store, serve
) -> None:
    def slow_without_schema(request: Request) -> str | Reply:
        if request.format == "json_schema":
            return Reply(status=500, message="Failed to parse the response_format json_schema into a grammar")
        return Reply(content=prdigest_answers(request), delay=3)  # a weak model, past its deadline

    fake = serve(responder=slow_without_schema)
    engine = analyse_two(demo_store, settings(fake, concurrency=1, timeout=1))
    calls = llm_log.calls_of_run(demo_store, engine.run_id)
    assert [(c.rung, c.outcome) for c in calls] == [
        ("json_schema", "rejected"),
        ("json_object", "timeout"),
        ("json_object", "timeout"),  # the second PR is not sent the refused schema again
    ]
    assert llm_log.known_rung(demo_store, fake.url, engine.settings.model) == "json_object"
