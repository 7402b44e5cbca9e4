"""Free questions: full-text candidates, an LLM answer citing only them, the best matches without one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes.openai_api import FakeOpenAI, Reply, Request, listed_numbers, prdigest_answers

from prdigest.analysis.ask import ask
from prdigest.config import LLMSettings, Taxonomy
from prdigest.i18n import texts
from prdigest.models import Window
from prdigest.pipeline.single import analyse_prs
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store, llm_log

DEMO = FixtureSource(demo_fixture_path())
assert DEMO.window is not None
WEEK = DEMO.window
QUESTION = "Who worked on the NVFP4 kernel?"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "cache.db")
    s.upsert_prs(DEMO.prs)
    analyse_prs(s, s.prs_in_window(DEMO.repo, WEEK), Taxonomy(), "en")  # the cached summaries
    yield s
    s.close()


def llm(fake: FakeOpenAI) -> LLMSettings:
    return LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_an_llm_the_answer_lists_the_best_matches(store: Store, lang: str) -> None:
    answer = ask(store, QUESTION, DEMO.repo, WEEK, None, lang)
    assert answer.engine == "rules"
    assert 4107 in answer.prs and len(answer.prs) <= 12
    assert answer.cited == answer.prs[:5]
    first, *lines = answer.text.splitlines()
    assert first == texts(lang)["ask_matches"].format(question=QUESTION)
    assert [line.split()[0] for line in lines] == [f"#{n}" for n in answer.cited]
    summaries = llm_log.pr_summaries(store, DEMO.repo, answer.cited)
    assert all(summaries[n] in line for n, line in zip(answer.cited, lines, strict=True))


def test_nothing_matches_and_nothing_is_sent(store: Store) -> None:
    with FakeOpenAI(responder=prdigest_answers) as fake:
        answer = ask(store, "zebra crossing @here", DEMO.repo, WEEK, llm(fake), "en")
    assert fake.calls == 0
    assert (answer.cited, answer.prs, answer.engine) == ([], [], "rules")
    assert answer.text.startswith("No cached pull request matches “zebra crossing”. Ask with words")


@pytest.mark.parametrize("question", ["谁改了沙箱？", "What happened last week?"])
def test_a_question_the_index_cannot_search_reads_the_newest_prs(store: Store, question: str) -> None:
    newest = sorted(DEMO.prs, key=lambda p: p.merged_at, reverse=True)
    with FakeOpenAI(responder=prdigest_answers) as fake:
        answer = ask(store, question, DEMO.repo, WEEK, llm(fake), "zh")
    request = fake.requests[-1]
    assert "The newest pull requests, newest first" in request.user
    assert listed_numbers(request) == [p.number for p in newest if p.number]  # all 30 fit the budget
    assert answer.engine == "llm" and answer.cited == [newest[0].number]
    # Without an LLM the newest PRs match nothing: the answer says so and how to ask instead.
    plain = ask(store, question, DEMO.repo, WEEK, None, "zh")
    assert (plain.engine, plain.cited) == ("rules", []) and "重点" in plain.text


def test_the_window_filters_the_candidates(store: Store) -> None:
    later = DEMO.prs[0].model_copy(
        update={
            "number": 5001,
            "title": "feat: NVFP4 kernel v2",
            "merged_at": datetime(2026, 9, 20, tzinfo=UTC),
        }
    )
    store.upsert_prs([later])
    assert 5001 not in ask(store, QUESTION, DEMO.repo, WEEK, None, "en").prs
    assert 5001 in ask(store, QUESTION, DEMO.repo, None, None, "en").prs
    earlier = Window(since="2026-08-31", until="2026-09-06", tz="Asia/Shanghai")
    assert ask(store, QUESTION, DEMO.repo, earlier, None, "en").prs == []


def test_an_llm_answer_cites_only_the_candidates_and_stays_inert(store: Store) -> None:
    def answers(request: Request) -> str:
        first = listed_numbers(request)[0]
        text = f"It was #{first} and #9999 @here <!channel> [see](https://evil.example/x)."
        return json.dumps({"answer": text, "cited": [first, 9999]})

    with FakeOpenAI("json_object", responder=answers) as fake:
        answer = ask(store, QUESTION, DEMO.repo, WEEK, llm(fake), "en")
    first = answer.prs[0]
    assert answer.engine == "llm"
    assert answer.cited == [first]
    assert answer.text == f"It was #{first} and see."
    request = fake.requests[-1]
    assert f"Question: {QUESTION}" in request.user
    assert request.user.count("<untrusted_search_results>") == 1
    assert listed_numbers(request) == answer.prs


def test_an_answer_is_paid_once_and_logged(store: Store) -> None:
    with FakeOpenAI(responder=prdigest_answers) as fake:
        first = ask(store, QUESTION, DEMO.repo, WEEK, llm(fake), "en")
        again = ask(store, QUESTION, DEMO.repo, WEEK, llm(fake), "en")
    assert fake.calls == 1
    assert first == again and first.engine == "llm"
    with store.reading() as tx:
        rows = tx.rows("select purpose, outcome, rung from llm_calls")
    assert rows == [{"purpose": "ask", "outcome": "ok", "rung": "json_schema"}]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=500),
        Reply(content=json.dumps({"answer": "I do not know.", "cited": []})),
        Reply(content="nope"),
    ],
    ids=["server-error", "cites-nothing", "no-json"],
)
def test_without_a_usable_llm_answer_the_best_matches_stand(store: Store, reply: Reply) -> None:
    with FakeOpenAI(responder=lambda _: reply) as fake:
        answer = ask(store, QUESTION, DEMO.repo, WEEK, llm(fake), "en")
    assert answer == ask(store, QUESTION, DEMO.repo, WEEK, None, "en")
    assert fake.calls >= 1
