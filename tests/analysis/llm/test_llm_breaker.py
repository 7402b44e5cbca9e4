"""A run stops asking a model that keeps failing it (analysis/llm/breaker.py): after three failed requests
and no good one, the rules answer for the PRs left and write the narrative, the report says so in its
language, and nothing of it is cached; a model that has answered well once is asked every PR."""

from __future__ import annotations

import threading

import pytest
from fakes.openai_api import Request, analysis_json, pr_number
from test_llm_engine import report_with_llm, settings

from prdigest.analysis.llm.breaker import FAILS_TO_STOP, Breaker, LLMStopped
from prdigest.i18n import texts
from prdigest.storage import Store


def test_the_breaker_opens_after_three_failures_without_a_good_answer() -> None:
    breaker = Breaker()
    for outcome in ("rejected", "rate_limited", "invalid", "gate"):  # a refused rung, a server's trouble
        breaker.note(outcome)
        breaker.check()
    with pytest.raises(LLMStopped):  # the third failure stops the run at once
        breaker.note("timeout")
    with pytest.raises(LLMStopped):  # and every request after it
        breaker.check()
    assert breaker.stopped == 2
    assert "failed 3 of this run's 3 requests" in (breaker.note_text("tiny", "en") or "")
    assert "3 个请求中失败了 3 个" in (breaker.note_text("tiny", "zh") or "")
    good_first = Breaker()
    for outcome in ("ok", *["invalid"] * 10):
        good_first.note(outcome)
    good_first.check()  # once good, never stopped
    assert good_first.note_text("tiny", "en") is None


def test_a_model_that_fails_every_pr_is_asked_no_more(demo_store: Store, serve) -> None:
    fake = serve(responder=lambda _: '{"summary": "}, {"}')
    report, engine = report_with_llm(demo_store, settings(fake, concurrency=1), lang="zh")
    usage = engine.usage()
    # One worker: the first PR's answer and its repair, the second's answer; then nothing, not even that
    # answer's repair, nor the narrative.
    assert fake.calls == FAILS_TO_STOP
    assert usage.fallback == 30 and usage.not_analysed == {"invalid": 2, "stopped": 28}
    assert usage.narrative == "rules"
    note = texts("zh")["llm_stopped"].format(model="fake-model", failed=3, asked=3)
    assert note in report.warnings
    # Nothing was cached: the next report asks the model again.
    _, again = report_with_llm(demo_store, settings(fake, concurrency=1), lang="zh")
    assert fake.calls == 2 * FAILS_TO_STOP and again.usage().cached == 0


def test_a_model_that_answered_well_once_is_asked_every_pr(demo_store: Store, serve) -> None:
    lock, first = threading.Lock(), []

    def good_once(request: Request) -> str:
        with lock:
            fresh = not first
            first.append(1)
        if "<untrusted_pr_data>" in request.user and fresh:
            return analysis_json(pr_number(request))
        return '{"summary": "}, {"}'

    fake = serve(responder=good_once)
    report, engine = report_with_llm(demo_store, settings(fake, concurrency=1))
    usage = engine.usage()
    assert "stopped" not in usage.not_analysed and usage.analysed == 1
    # PR after PR asked and repaired, until the report's own request cap (its PRs + 20) ends it.
    asked = {pr_number(r) for r in fake.requests if "<untrusted_pr_data>" in r.user}
    assert len(asked) >= 20 and usage.not_analysed.get("capped", 0) == 30 - len(asked)
    assert not any("rules engine analysed the PRs left" in w for w in report.warnings)
