"""[llm] monthly_token_budget against the fake OpenAI server: once this month's tokens of the endpoint reach
the budget, nothing more is sent, the rules analyse the rest, and the report and the log say so once."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import pytest
from fakes.openai_api import FakeOpenAI

from prdigest.analysis.ask import ask
from prdigest.analysis.llm import LLMBudgetSpent, LLMEngine, MonthlyBudget
from prdigest.analysis.report import build_report
from prdigest.clock import utc_now
from prdigest.config import LLMSettings, ReportSettings, Taxonomy
from prdigest.i18n import texts
from prdigest.models import Report
from prdigest.pipeline.single import analyse_prs
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store, llm_budget

DEMO = FixtureSource(demo_fixture_path())
assert DEMO.window is not None
WEEK = DEMO.window
PRS = 30  # in the demo week
BUDGET = 1_000_000  # tokens: a report of the demo week costs about 45,000


def settings(fake: FakeOpenAI, budget: int | None) -> LLMSettings:
    # One request at a time: the request that spends the budget is the last one sent.
    return LLMSettings(
        base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0,
        concurrency=1, monthly_token_budget=budget,
    )  # fmt: skip


def report_with_llm(store: Store, llm: LLMSettings, lang: str = "en") -> tuple[Report, LLMEngine]:
    """What pipeline.make_report does with an LLM configured."""
    prs = store.prs_in_window(DEMO.repo, WEEK)
    engine = LLMEngine(llm, store)
    analyses = engine.analyse(prs, analyse_prs(store, prs, Taxonomy(), lang), Taxonomy(), lang)
    report = build_report(
        DEMO.repo, WEEK, prs, source="fixture", unavailable=(), settings=ReportSettings(),
        analyses=analyses, taxonomy=Taxonomy(), lang=lang,
    )  # fmt: skip
    return engine.narrate(report, analyses), engine


def spent_before(store: Store, endpoint: str | None, tokens: int, at: datetime) -> None:
    """A call of an earlier run to ``endpoint`` (None: a run of unknown endpoint) that cost ``tokens``."""
    run = f"earlier-{endpoint}-{at.isoformat()}"
    if endpoint is not None:
        llm_budget.record_run(store, run, endpoint, "fake-model")
    with store.writing() as tx:
        tx.insert(
            "llm_calls",
            {"created_at": at.isoformat(), "run_id": run, "purpose": "analyse_pr", "subject": "x",
             "model": "m", "prompt_version": "v", "prompt_hash": "h", "rung": "json_schema",
             "input_tokens": tokens - 1, "output_tokens": 1, "latency_ms": 1, "outcome": "ok"}
        )  # fmt: skip


def budget_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.levelno == logging.WARNING and "monthly token budget" in r.getMessage()
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_once_spent_the_rules_analyse_the_rest(
    demo_store: Store, serve, caplog: pytest.LogCaptureFixture, lang: str
) -> None:
    fake = serve()
    with caplog.at_level(logging.WARNING, logger="prdigest.llm"):
        report, engine = report_with_llm(demo_store, settings(fake, budget=1), lang)
    # The first request spent the budget: no other reached the server.
    assert fake.calls == 1
    assert report.stats.engines == {"llm": 1, "rules": PRS - 1}
    usage = engine.usage()
    assert (usage.calls, usage.analysed, usage.fallback, usage.narrative) == (1, 1, PRS - 1, "rules")
    endpoint = fake.url.removeprefix("http://")
    note = texts(lang)["llm_budget_spent"].format(endpoint=endpoint, budget="1", n=PRS - 1)
    assert report.warnings == [note]
    assert endpoint in note and str(PRS - 1) in note
    assert len(budget_warnings(caplog)) == 1  # one line per run, not one per PR
    assert fake.key not in caplog.text


def test_a_budget_not_reached_changes_nothing(
    demo_store: Store, serve, caplog: pytest.LogCaptureFixture
) -> None:
    fake = serve()
    with caplog.at_level(logging.WARNING, logger="prdigest.llm"):
        report, engine = report_with_llm(demo_store, settings(fake, budget=10**9))
    assert fake.calls == PRS + 1  # every PR and the narrative
    assert report.stats.engines == {"llm": PRS}
    assert engine.usage().narrative == "llm" and report.warnings == []
    assert budget_warnings(caplog) == []


def test_only_this_months_calls_to_this_endpoint_count(demo_store: Store, serve) -> None:
    fake = serve()
    first_of_month, _ = llm_budget.month_bounds(utc_now())
    spent_before(demo_store, fake.url, 2 * BUDGET, first_of_month - timedelta(seconds=1))  # last month
    spent_before(
        demo_store, "https://elsewhere.example.com/v1", 2 * BUDGET, first_of_month
    )  # another endpoint
    assert llm_budget.month_tokens(demo_store, fake.url, utc_now()) == 0
    report, _ = report_with_llm(demo_store, settings(fake, budget=BUDGET))
    assert report.stats.engines == {"llm": PRS} and report.warnings == []
    calls = fake.calls
    assert llm_budget.month_tokens(demo_store, fake.url, utc_now()) > 0  # this run's calls count

    # This month's earlier spending reaches the budget of another endpoint: nothing is sent to it.
    other = serve()
    spent_before(demo_store, other.url, BUDGET, first_of_month)
    report, engine = report_with_llm(demo_store, settings(other, budget=BUDGET), "zh")  # nothing cached in zh
    assert other.calls == 0 and fake.calls == calls
    assert report.stats.engines == {"rules": PRS} and engine.usage().narrative == "rules"
    endpoint = other.url.removeprefix("http://")
    assert report.warnings == [
        texts("zh")["llm_budget_spent"].format(endpoint=endpoint, budget="1,000,000", n=PRS)
    ]


def test_calls_of_unknown_endpoint_count_against_every_budget(demo_store: Store, serve) -> None:
    fake = serve()
    spent_before(demo_store, None, 7, utc_now())  # logged before runs named their endpoint
    assert llm_budget.month_tokens(demo_store, fake.url, utc_now()) == 7
    report, engine = report_with_llm(demo_store, settings(fake, budget=7))
    assert fake.calls == 0
    assert report.stats.engines == {"rules": PRS} and engine.usage().fallback == PRS


def test_a_question_with_a_spent_budget_gets_the_full_text_answer(demo_store: Store, serve) -> None:
    fake = serve()
    spent_before(demo_store, fake.url, 100, utc_now())
    llm = settings(fake, budget=100)
    answer = ask(demo_store, "rank logs", DEMO.repo, WEEK, llm, "en")
    assert answer.engine == "rules" and answer.prs and fake.calls == 0
    with pytest.raises(LLMBudgetSpent, match="monthly token budget"):
        MonthlyBudget(demo_store, fake.url, 100).check()
