"""Questions over a week's PRs answered by their fields before their words, on a git repository the test
builds: who wrote them, which files they changed, what the rules flagged, the day they were merged."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory
from prdigest.storage import Store

CONSOLE = Context(platform="console", chat_id="console", user_id="me")
WEDNESDAY = datetime(2026, 9, 16, 4, 0, tzinfo=UTC)  # noon in Shanghai; last week is 09-07..09-13
ALICE = {"name": "Alice Müller", "email": "alice@example.com"}
BOB = {"name": "bob-the-builder", "email": "12345+bob-the-builder@users.noreply.github.com"}


def _change(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    repo = new_repo(tmp_path / "clone")
    _change(repo, "README.md", "hello\n")
    _change(repo, "tests/test_engine.py", "def test_engine():\n    assert True\n")
    commit(repo, "init", "2026-08-01T10:00:00+08:00", **ALICE)
    _change(repo, "app/scheduler.py", "def plan():\n    return 1\n")
    commit(repo, "feat: plan the jobs (#11)", "2026-09-07T10:00:00+08:00", **ALICE)  # Monday
    _change(repo, "app/engine.py", "def run():\n    return 2\n")
    commit(repo, "fix: run the engine (#12)", "2026-09-07T15:00:00+08:00", **BOB)  # Monday
    (repo / "tests/test_engine.py").unlink()
    _change(repo, "app/engine.py", "def run():\n    return 3\n")
    commit(repo, "refactor: drop the engine test (#13)", "2026-09-09T11:00:00+08:00", **BOB)
    _change(repo, "app/scheduler.py", "def plan():\n    return 4\n")
    commit(repo, "perf: faster planning (#14)", "2026-09-10T11:00:00+08:00", **BOB)
    store = Store(tmp_path / "c.db")
    settings = load_settings(env={})
    source = GitSource(repo, repo="acme/app")
    yield Services(settings=settings, store=store, default_repo="acme/app",
                   source_for=source_factory(settings, source), clock=lambda: WEDNESDAY)  # fmt: skip
    store.close()


@pytest.mark.parametrize(
    ("question", "cited"),
    [
        ("What did Alice work on last week?", [11]),  # a part of her name, accents aside
        ("what did alice muller do last week?", [11]),
        ("Which PRs did bob-the-builder merge last week?", [14, 13, 12]),  # the login
        ("bob-the-builder 上周做了哪些 PR？", [14, 13, 12]),
        ("Which PRs touched the scheduler last week?", [11, 14]),
        ("which PRs changed app/engine.py last week?", [12, 13]),
        ("Which PRs removed tests last week?", [13]),
    ],
)
def test_a_question_is_answered_by_the_fields_it_names(
    svc: Services, question: str, cited: list[int]
) -> None:
    reply = handle(question, CONSOLE, svc)
    assert reply.kind == "text" and sorted(reply.cited) == sorted(cited), reply.text
    for number in cited:
        assert f"#{number}" in reply.text


def test_a_ranking_alone_is_its_top_three(svc: Services) -> None:
    reply = handle("what was the riskiest PR last week?", CONSOLE, svc)
    assert 1 <= len(reply.cited) <= 3 and set(reply.cited) <= {11, 12, 13, 14}


def test_what_was_merged_on_a_day_is_that_days_report(svc: Services) -> None:
    reply = handle("what got merged on Monday?", CONSOLE, svc)  # this week's Monday, 09-14: nothing yet
    assert reply.kind in ("report", "text")
    last = handle("what got merged on 2026-09-07?", CONSOLE, svc)
    assert last.kind == "report" and last.report is not None
    assert sorted(p.number for p in last.report.prs) == [11, 12]


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What did Alice merge on 2026-09-12?", "No pull request was merged 2026-09-12 to 2026-09-12."),
        ("2026-09-12 Alice 做了什么？", "2026-09-12 至 2026-09-12没有合入任何 PR。"),
    ],
)
def test_a_question_about_an_empty_period_says_nothing_was_merged(
    svc: Services, question: str, said: str
) -> None:
    assert handle(question, CONSOLE, svc).text == said


def test_a_person_with_no_pr_that_week_is_no_match(svc: Services) -> None:
    reply = handle("what did Alice work on 2026-09-09..2026-09-10?", CONSOLE, svc)
    assert reply.cited == [] and "None of the pull requests merged 2026-09-09 to 2026-09-10" in reply.text
