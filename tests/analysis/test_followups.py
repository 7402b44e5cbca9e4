"""Risks followed until closed, on a small git repository built here and read week by week.

Week 1 (W37) merges a fix and a feature without tests (no_tests) and a dependency bump
(dependency_change); week 2 tests the fix, naming it, and reverts the bump; week 3 only
edits the README. The fix's risk is addressed in week 2 and gone in week 3, the feature's is
still open in week 3, two weeks on; the bump's shows as reverted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.openai_api import FakeOpenAI, Reply, Request
from test_llm_budget import spent_before

from prdigest.analysis.followups.items import RiskItem
from prdigest.analysis.followups.llm import ITEMS_PER_REQUEST, Asked, FollowupCheck
from prdigest.analysis.followups.track import follow_risks
from prdigest.analysis.llm.engine import LLMEngine
from prdigest.clock import utc_now
from prdigest.config import LLMSettings, Settings, load_settings
from prdigest.models import FileChange, PullRequest, RiskFollowup, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

REPO = "acme/app"
WEEKS = [
    Window(
        since=date(2026, 9, 7) + timedelta(days=7 * i),
        until=date(2026, 9, 13) + timedelta(days=7 * i),
        tz="UTC",
    )
    for i in range(3)
]
CODE = "".join(f"def step{i}(x):\n    return x * {i}\n" for i in range(12))


def change(repo: Path, path: str, text: str, title: str, day: date) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    commit(repo, title, f"{day}T10:00:00+00:00")


def build_clone(path: Path) -> Path:
    repo = new_repo(path)
    day = date(2026, 8, 31)
    for name in ("parser", "cache"):
        (repo / "app").mkdir(exist_ok=True)
        (repo / "app" / f"{name}.py").write_text(CODE)
    (repo / "requirements.txt").write_text("requests==2.31\n")
    (repo / "README.md").write_text("# app\n")
    commit(repo, "chore: start the app (#1)", f"{day}T10:00:00+00:00")
    w1, w2, w3 = (w.since for w in WEEKS)
    change(
        repo,
        "app/parser.py",
        CODE + "def parse(s):\n    return s.split() if s else []\n",
        "fix: handle empty input in the parser (#2)",
        w1,
    )
    change(
        repo,
        "app/cache.py",
        CODE + "def evict(c):\n    c.clear()\n    return c\n",
        "feat: add cache eviction (#3)",
        w1 + timedelta(days=1),
    )
    change(
        repo,
        "requirements.txt",
        "requests==2.32\n",
        "build: bump requests to 2.32 (#4)",
        w1 + timedelta(days=2),
    )
    (repo / "tests").mkdir()
    (repo / "tests" / "test_parser.py").write_text(
        "from app.parser import parse\n\ndef test_empty():\n    assert parse('') == []\n"
    )
    commit(
        repo,
        "test: cover empty input in the parser (#5)\n\nFollow-up to #2: tests the fix.",
        f"{w2}T10:00:00+00:00",
    )
    change(
        repo,
        "requirements.txt",
        "requests==2.31\n",
        'Revert "build: bump requests to 2.32 (#4)" (#6)\n\nThis reverts #4: it broke the client.',
        w2 + timedelta(days=1),
    )
    change(repo, "README.md", "# app\n\nAn app.\n", "docs: describe the app (#7)", w3)
    return repo


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("followups") / "app")


def utc_settings() -> Settings:
    settings = load_settings(env={})
    return settings.model_copy(
        update={"report": settings.report.model_copy(update={"timezone": "UTC", "language": "en"})}
    )


@pytest.fixture
def store(tmp_path: Path, clone: Path) -> Iterator[Store]:
    """A cache holding the three weeks, each read from the clone as its own report reads it."""
    store = Store(tmp_path / "f.db")
    settings = utc_settings()
    for week in WEEKS:
        make_report(
            settings,
            store,
            GitSource(clone, repo=REPO),
            week,
            save=False,
            now=datetime(2026, 10, 1, tzinfo=UTC),
        )
    yield store
    store.close()


def follow(store: Store, week: int, llm: LLMSettings | None = None, lang: str = "en") -> list[RiskFollowup]:
    """The follow-ups in week ``week``'s report (1-based), of the weeks before it."""
    settings = utc_settings()
    window = WEEKS[week - 1]
    engine = LLMEngine(llm, store) if llm is not None else None
    return follow_risks(
        store, REPO, window, WEEKS[: week - 1], settings.repo(REPO).taxonomy, lang, settings.report, engine
    )


def llm_settings(fake: FakeOpenAI, **kw: object) -> LLMSettings:
    return LLMSettings(
        base_url=fake.url, api_key=fake.key, **{"model": "fake-model", "timeout": 5, "max_retries": 0, **kw}
    )


def find(followups: list[RiskFollowup], label: str, prs: list[int]) -> RiskFollowup | None:
    return next((f for f in followups if f.label == label and sorted(f.prs) == prs), None)


def of(followups: list[RiskFollowup], label: str, prs: list[int]) -> RiskFollowup:
    found = find(followups, label, prs)
    assert found is not None, f"no follow-up of {label} {prs} in {followups}"
    return found


def test_week_one_risks_are_what_its_report_shows(store: Store) -> None:
    week1 = make_report(utc_settings(), store, None, WEEKS[0], repo=REPO, save=False)
    followed = {(f.label, tuple(sorted(f.prs))) for f in follow(store, 2)}
    shown = {(o.label, tuple(sorted(o.prs))) for o in week1.risk_observations}
    assert shown == {("no_tests", (2, 3)), ("dependency_change", (4,))}
    assert shown <= followed
    # Each recommendation is followed too, one with the same label and PRs as an observation as that one.
    titles = {tuple(sorted(f.prs)): f.title for f in follow(store, 2) if f.label == "no_tests"}
    assert {(2,), (3,), (4,)} == {tuple(sorted(r.prs)) for r in week1.recommendations}
    assert {titles[(2,)], titles[(3,)]} == {r.text for r in week1.recommendations if 4 not in r.prs}


def test_a_fix_tested_in_week_two_is_addressed_there_and_gone_in_week_three(store: Store) -> None:
    week2, week3 = follow(store, 2), follow(store, 3)
    fix = of(week2, "no_tests", [2])
    assert (fix.status, fix.by, fix.since) == ("addressed", [5], WEEKS[0].since)
    assert find(week3, "no_tests", [2]) is None


def test_a_risk_left_alone_is_open_with_the_weeks_it_has_been(store: Store) -> None:
    feature = of(follow(store, 3), "no_tests", [3])
    assert (feature.status, feature.weeks_open, feature.by) == ("open", 2, [])
    # The observation of both PRs stays open: one of its two PRs got its test, the other none.
    both = of(follow(store, 3), "no_tests", [2, 3])
    assert (both.status, both.weeks_open) == ("open", 2)
    assert of(follow(store, 2), "no_tests", [3]).weeks_open == 1


def test_a_revert_shows_as_reverted_once(store: Store) -> None:
    week2 = follow(store, 2)
    bump = [f for f in week2 if f.label == "dependency_change"]
    # The observation and its recommendation name the same PR: one follow-up.
    assert len(bump) == 1
    assert (bump[0].status, bump[0].by) == ("reverted", [6])
    assert find(follow(store, 3), "dependency_change", [4]) is None
    # The revert changed the dependencies too: week 2's own risk, open in week 3.
    assert of(follow(store, 3), "dependency_change", [6]).status == "open"


def test_the_first_week_has_nothing_to_follow(store: Store) -> None:
    assert follow(store, 1) == []


def _rejecting(request: Request) -> str:
    """The model rejects every candidate of every item it is asked about."""
    assert "<untrusted_followup_data>" in request.user
    items = [int(n) for n in re.findall(r"== Item (\d+) ==", request.user)]
    return json.dumps(
        {
            "items": [
                {"item": n, "addressed_by": [], "reason": "The test covers another function."} for n in items
            ]
        }
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_model_rejecting_an_addressed_pair_keeps_it_open_and_is_asked_once(
    store: Store, serve, lang: str
) -> None:
    fake: FakeOpenAI = serve(responder=_rejecting)
    llm = llm_settings(fake)
    fix = of(follow(store, 2, llm, lang), "no_tests", [2])
    assert (fix.status, fix.by, fix.weeks_open) == ("open", [], 1)
    assert fake.calls == 1  # the one "addressed" pair; a revert is not asked about
    request = fake.requests[0].user
    assert "#5" in request and "#2" in request and "tests/test_parser.py" in request
    assert ("候选" in request) == (lang == "zh")  # the prompt of the report's language
    # The revert stands; a second run asks nothing (the answer is cached by the request's hash).
    again = follow(store, 2, llm, lang)
    assert of(again, "no_tests", [2]) == fix
    assert of(again, "dependency_change", [4]).status == "reverted"
    assert fake.calls == 1
    # In week 3 the rejected fix is still open, two weeks on; the same pair costs nothing again.
    assert of(follow(store, 3, llm, lang), "no_tests", [2]).weeks_open == 2
    assert fake.calls == 1


def test_a_failing_model_keeps_the_rules_status(store: Store, serve) -> None:
    fake: FakeOpenAI = serve(responder=lambda _: Reply(status=500))
    fix = of(follow(store, 2, llm_settings(fake)), "no_tests", [2])
    assert (fix.status, fix.by) == ("addressed", [5])
    assert fake.calls == 1


def test_a_spent_monthly_budget_sends_nothing_and_keeps_the_rules_status(store: Store, serve) -> None:
    fake: FakeOpenAI = serve(responder=_rejecting)
    spent_before(store, fake.url, 1000, utc_now())
    fix = of(follow(store, 2, llm_settings(fake, monthly_token_budget=500)), "no_tests", [2])
    assert (fix.status, fix.by) == ("addressed", [5])
    assert fake.calls == 0


def test_each_weeks_report_carries_its_follow_ups_read_from_the_clone_on_an_empty_cache(
    tmp_path: Path, clone: Path
) -> None:
    store = Store(tmp_path / "empty.db")
    settings, now = utc_settings(), datetime(2026, 10, 1, tzinfo=UTC)

    def report(week: int) -> dict[str, object]:
        made = make_report(settings, store, GitSource(clone, repo=REPO), WEEKS[week - 1], save=False, now=now)
        return json.loads(made.model_dump_json())

    week2, week3 = report(2), report(3)
    store.close()
    fix = next(f for f in week2["risk_followups"] if f["label"] == "no_tests" and f["prs"] == [2])
    assert (fix["status"], fix["by"], fix["since"]) == ("addressed", [5], str(WEEKS[0].since))
    assert not any(f["prs"] == [2] and f["label"] == "no_tests" for f in week3["risk_followups"])
    feature = next(f for f in week3["risk_followups"] if f["label"] == "no_tests" and f["prs"] == [3])
    assert (feature["status"], feature["weeks_open"]) == ("open", 2)


def _first_candidate(request: Request) -> str:
    """The model keeps the first candidate of each item, as the request lists them."""
    answers = []
    for block in re.split(r"== Item (?=\d+ ==)", request.user)[1:]:
        number, _, rest = block.partition(" ==")
        first = re.search(r"PR #(\d+):", rest.split("-- Candidate PR --", 1)[1])
        answers.append({"item": int(number), "addressed_by": [int(first.group(1))] if first else []})
    return json.dumps({"items": answers})


def many_risks(weeks: int = 4, per_week: int = 10) -> tuple[list[Asked], dict[int, PullRequest]]:
    """``weeks`` earlier weeks of ``per_week`` risks each, every risk with two candidate later PRs."""
    own: dict[int, PullRequest] = {}
    asked = []
    for w in range(weeks):
        week = WEEKS[0].model_copy(update={"since": date(2026, 8, 3) + timedelta(days=7 * w)})
        for i in range(per_week):
            n = 100 + 10 * w + i
            risk, fixes = n, (1000 + 2 * n, 1001 + 2 * n)
            for number in (risk, *fixes):
                own[number] = PullRequest(
                    repo=REPO, number=number, title=f"change {number}", author="dev", additions=3,
                    deletions=1, merged_at=datetime(2026, 9, 1, tzinfo=UTC),
                    files=[FileChange(path=f"app/m{n}.py")],
                )  # fmt: skip
            item = RiskItem("no_tests", f"Add tests of #{risk}", (risk,), week, "no test")
            asked.append(Asked(item, tuple(own[f] for f in fixes)))
    return asked, own


def test_forty_risks_of_four_weeks_cost_at_most_ten_follow_up_requests(store: Store, serve) -> None:
    fake: FakeOpenAI = serve(responder=_first_candidate)
    asked, own = many_risks()
    verdicts = FollowupCheck(LLMEngine(llm_settings(fake), store), REPO, "en").addressed_by(asked, own)
    assert fake.calls <= 10 and fake.calls == len(asked) // ITEMS_PER_REQUEST
    assert verdicts == [{a.candidates[0].number} for a in asked]  # each item's own verdict, in order
    assert all("<untrusted_followup_data>" in r.user for r in fake.requests)


def test_a_report_cap_stops_the_requests_and_the_rules_decide(store: Store, serve) -> None:
    fake: FakeOpenAI = serve(responder=_first_candidate)
    asked, own = many_risks(weeks=2)
    engine = LLMEngine(llm_settings(fake, max_requests_per_report=1), store)
    verdicts = FollowupCheck(engine, REPO, "en").addressed_by(asked, own)
    assert fake.calls == 1 and engine.spend.capped == 2
    assert verdicts[:ITEMS_PER_REQUEST] == [{a.candidates[0].number} for a in asked[:ITEMS_PER_REQUEST]]
    assert verdicts[ITEMS_PER_REQUEST:] == [None] * (len(asked) - ITEMS_PER_REQUEST)  # the rules stand
    note = engine.spend.cap_note("en")
    assert note is not None and "1 requests" in note and "2 more requests were not sent" in note


@pytest.mark.parametrize("key", ["max_requests_per_report", "max_tokens_per_report"])
def test_a_cap_of_zero_is_a_configuration_error(key: str) -> None:
    with pytest.raises(ValueError, match=key):
        LLMSettings(model="m", **{key: 0})


def test_a_risk_of_where_to_look_is_closed_only_by_a_pr_that_names_it() -> None:
    from prdigest.analysis.followups.status import Later, closing

    def pr(number: int, title: str, body: str = "") -> PullRequest:
        return PullRequest(
            repo=REPO, number=number, title=title, body=body, author="dev", additions=3, deletions=1,
            merged_at=datetime(2026, 9, 20, tzinfo=UTC), files=[FileChange(path="app/core/engine.py")],
        )  # fmt: skip

    risky = pr(2, "feat: a new engine path")
    own = {2: risky}
    fix = Later.of(pr(7, "fix: a crash in the engine"), None)
    fix = Later(**{**fix.__dict__, "tags": frozenset({"bugfix"})})  # as the rules tag a fix
    named = Later.of(pr(8, "fix: review follow-up", "Follow-up to #2: the review's points."), None)
    for label in ("core_path", "hot_files"):
        item = RiskItem(label, "core code changed", (2,), WEEKS[0], "core path")
        assert [c.number for c in closing(item, own, [fix, named])] == [8]
    # A risk of a defect is addressed by a later fix of the same code, as before.
    perf = RiskItem("perf_regression", "slower", (2,), WEEKS[0], "slower")
    assert [c.number for c in closing(perf, own, [fix])] == [7]
