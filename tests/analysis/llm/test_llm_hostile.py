"""A hostile model server: answers no schema can take, and a reply dripped one byte a second.

Whatever a server answers, the run ends: an answer too deep, too large or of the wrong types is
invalid output for its PR (repaired once, then the rules answer for it), and a request ends at its
deadline however slowly the server sends.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import date

import pytest
from fakes.openai_api import FakeOpenAI, Reply, Request, analysis_json, pr_number, prdigest_answers
from test_llm_engine import WEEK, report_with_llm, settings, week_prs

from prdigest.analysis.ask import ask
from prdigest.analysis.followups.items import RiskItem
from prdigest.analysis.followups.llm import Asked, FollowupCheck
from prdigest.analysis.llm import Call, LLMClient, LLMEngine, LLMUnavailable, first_json_object
from prdigest.analysis.llm.schemas import Allowed, PRAnalysisOut
from prdigest.config import LLMSettings
from prdigest.handlers.commands import Intent
from prdigest.handlers.routing import route
from prdigest.storage import Store, llm_log

HOSTILE_PR = 4110
DEPTH = 100_000

# What a server can answer that no schema takes: each must end as invalid output, never a crash.
HOSTILE = {
    "nested-objects": '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "nested-lists": '{"summary": "ok", "related": ' + "[" * DEPTH + "]" * DEPTH + "}",
    "unclosed-nesting": '{"a":' * DEPTH,
    "huge": analysis_json(HOSTILE_PR, explanation="x" * 200_000),
    "wrong-types": json.dumps({"summary": {"a": [1]}, "importance": [], "insight": None, "tags": 5}),
    "long-number": '{"summary": "A change.", "importance": ' + "9" * 50_000 + "}",
}


@pytest.mark.parametrize("answer", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_answer_for_one_pr_leaves_it_to_the_rules(demo_store: Store, serve, answer: str) -> None:
    def answers(request: Request) -> Reply | str:
        if "<untrusted_pr_data>" in request.user and pr_number(request) == HOSTILE_PR:
            return answer
        return prdigest_answers(request)

    fake = serve(responder=answers)
    report, engine = report_with_llm(demo_store, settings(fake))
    assert report.stats.engines == {"llm": 29, "rules": 1}
    assert engine.usage().narrative == "llm"
    hostile = [
        c for c in llm_log.calls_of_run(demo_store, engine.run_id) if c.subject.endswith(f"#{HOSTILE_PR}")
    ]
    assert [c.outcome for c in hostile] == ["invalid", "invalid"]  # the answer, then its repair
    assert engine.usage().fallback == 1


@pytest.mark.parametrize(
    "answer", [HOSTILE["nested-objects"], HOSTILE["nested-lists"]], ids=["objects", "lists"]
)
def test_a_nested_narrative_or_ask_answer_falls_back(demo_store: Store, serve, answer: str) -> None:
    def answers(request: Request) -> Reply | str:
        return prdigest_answers(request) if "<untrusted_pr_data>" in request.user else answer

    fake = serve(responder=answers)
    report, engine = report_with_llm(demo_store, settings(fake))
    assert report.stats.engines == {"llm": 30}
    assert engine.usage().narrative == "rules"
    reply = ask(demo_store, "Who worked on the NVFP4 kernel?", report.repo, WEEK, settings(fake), "en")
    assert reply.engine == "rules" and reply.cited


def test_a_nested_follow_up_answer_keeps_the_rules_judgement(demo_store: Store, serve) -> None:
    fake = serve(responder=lambda _: HOSTILE["nested-objects"])
    risk, fix = week_prs(demo_store)[:2]
    assert risk.number is not None and fix.number is not None
    item = RiskItem("no_tests", "Add tests", (risk.number,), WEEK, "no test")
    check = FollowupCheck(LLMEngine(settings(fake), demo_store), risk.repo, "en")
    assert check.addressed_by([Asked(item, (fix,))], {risk.number: risk, fix.number: fix}) == [None]
    assert fake.calls == 2  # the answer and its repair


def test_nested_routing_arguments_leave_the_rules_reading(serve) -> None:
    rules = Intent("help", "en", question="gimme the juicy stuff")
    # Deeper than Python's parser recurses, within what the route's max_tokens allows.
    nested = '{"n":' * 1050 + "1" + "}" * 1050
    for arguments in (nested, HOSTILE["nested-objects"]):
        fake = serve(responder=lambda _, a=arguments: Reply(tool_calls=(("top", a),)))
        assert route(rules.question, rules, settings(fake), date(2026, 9, 14)) is rules


def test_first_json_object_refuses_depth_as_invalid_output() -> None:
    with pytest.raises(ValueError, match="nest"):
        first_json_object(HOSTILE["nested-objects"])
    call = Call("analyse_pr", "o/r#1", "v", "en", (), PRAnalysisOut, Allowed())
    for answer in (HOSTILE["nested-lists"], HOSTILE["wrong-types"], HOSTILE["long-number"]):
        with pytest.raises(ValueError):
            call.parse(answer)


# --- the deadline ----------------------------------------------------------------------------


def drip_settings(fake: FakeOpenAI, timeout: float) -> LLMSettings:
    return LLMSettings(
        base_url=fake.url, api_key=fake.key, model="fake-model", timeout=timeout, max_retries=0
    )


@pytest.mark.parametrize("where", ["body", "headers"])
def test_a_dripping_server_times_out_at_the_deadline(demo_store: Store, serve, where: str) -> None:
    fake = serve(
        responder=lambda _: Reply(content=analysis_json(1), drip=1.0, drip_headers=where == "headers")
    )
    call = Call(
        "analyse_pr", "o/r#1", "v", "en", ({"role": "user", "content": "hi"},), PRAnalysisOut, Allowed()
    )
    outcomes: list[str] = []
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="timeout"):
        LLMClient(drip_settings(fake, 2)).complete(call, lambda attempt: outcomes.append(attempt.outcome))
    assert time.monotonic() - started < 2 + 5  # the drip alone would hold it for minutes
    assert outcomes == ["timeout"]


@pytest.mark.timeout(60)
def test_a_dripping_pr_falls_back_alone(demo_store: Store, serve) -> None:
    def answers(request: Request) -> Reply | str:
        if "<untrusted_pr_data>" in request.user and pr_number(request) == HOSTILE_PR:
            return Reply(content=analysis_json(HOSTILE_PR), drip=1.0)
        return prdigest_answers(request)

    fake = serve(responder=answers)
    started = time.monotonic()
    report, engine = report_with_llm(demo_store, settings(fake, timeout=2, max_retries=1))
    assert time.monotonic() - started < 30
    assert report.stats.engines == {"llm": 29, "rules": 1}
    outcomes = Counter(c.outcome for c in llm_log.calls_of_run(demo_store, engine.run_id))
    assert outcomes == {"ok": 30, "timeout": 1}  # the SDK's retry, with a deadline of its own, is in one call
