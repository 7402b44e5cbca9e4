"""The LLM's judgement against the rules': labels defined in its prompt, the rules' findings as hints,
evidence quoted from the PR, foreign PR numbers scrubbed, flat scores refused, the rules' facts kept.

Through the real openai SDK against the local fake server, as tests/analysis/llm/test_llm_engine.py does.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from fakes.openai_api import (
    FakeOpenAI,
    Request,
    analysis_json,
    listed_numbers,
    narrated_summary,
    narrative_json,
    pr_number,
)

from prdigest.analysis.llm import (
    FACT_LABELS,
    JUDGED_LABELS,
    LLMEngine,
    Shown,
    flat_scores,
    scrub_prs,
)
from prdigest.analysis.llm.merge import diff_evidenced
from prdigest.analysis.report import build_report
from prdigest.config import LLMSettings, ReportSettings, Taxonomy
from prdigest.models import ChecksState, PRAnalysis, PullRequest
from prdigest.pipeline.single import analyse_prs
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store

DEMO = FixtureSource(demo_fixture_path())
assert DEMO.window is not None
WEEK = DEMO.window
BREAKING = 4129  # removes --colocate-offload; the rules flag config_breaking, an open thread, core paths
WITH_TESTS = 4107  # adds tests/quant/test_nvfp4_kernel.py


@pytest.fixture
def store(demo_store: Store) -> Store:
    return demo_store


def settings(fake: FakeOpenAI) -> LLMSettings:
    return LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0)


def week(store: Store) -> list[PullRequest]:
    return store.prs_in_window(DEMO.repo, WEEK)


def analyse(
    store: Store, fake: FakeOpenAI, prs: list[PullRequest], lang: str = "en"
) -> tuple[dict[int, PRAnalysis], dict[int, PRAnalysis], LLMEngine]:
    """(the LLM's analyses as a report uses them, the rules', the engine)."""
    rules = analyse_prs(store, prs, Taxonomy(), lang)
    engine = LLMEngine(settings(fake), store)
    return engine.analyse(prs, rules, Taxonomy(), lang), rules, engine


def answering(answers: dict[int, dict]) -> Callable[[Request], str]:
    """PR n answered with ``answers[n]`` over the defaults, the narrative and other PRs by default."""

    def respond(request: Request) -> str:
        if "<untrusted_week_data>" in request.user:
            return narrative_json(listed_numbers(request))
        n = pr_number(request)
        return analysis_json(n, **answers.get(n, {}))

    return respond


def risk(label: str, evidence: str, source: str = "diff") -> dict[str, str]:
    return {"label": label, "evidence": evidence, "evidence_source": source}


# --- the prompt ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "not_when"), [("en", "Not when: "), ("zh", "不算：")])
def test_the_prompt_defines_each_judged_label_and_carries_the_rules_hints(
    store: Store, serve, lang: str, not_when: str
) -> None:
    fake = serve(responder=answering({}))
    prs = [p for p in week(store) if p.number in (BREAKING, 4105)]  # 4105: the rules flag nothing
    _, rules, _ = analyse(store, fake, prs, lang)
    hint = next(r for r in rules[BREAKING].risks if r.label == "config_breaking")
    flagged, clean = (next(r for r in fake.requests if f"PR #{n}:" in r.user) for n in (BREAKING, 4105))
    system = flagged.messages[0]["content"]
    for label in JUDGED_LABELS:
        (line,) = [x for x in system.splitlines() if x.strip().startswith(f"- {label}")]
        assert not_when in line and len(line) > 60  # when it holds, and when it does not
    assert not any(label in system for label in FACT_LABELS)  # the rules' facts are not the model's to judge
    hints = flagged.user.split("<untrusted_rule_hints>")[1].split("</untrusted_rule_hints>")[0]
    assert f"- config_breaking: {hint.evidence[:40]}" in hints
    assert not any(label in hints for label in FACT_LABELS)
    assert flagged.user.index("</untrusted_pr_data>") < flagged.user.index("<untrusted_rule_hints>")
    assert "<untrusted_rule_hints>" not in clean.user


# --- evidence quoted from the PR ----------------------------------------------------------------


def test_a_label_is_kept_only_when_its_evidence_is_quoted_from_the_pr(store: Store, serve) -> None:
    answers = {
        BREAKING: {
            "risks": [
                risk("config_breaking", "删除了 `--colocate-offload`，旧的启动脚本会在参数解析时失败"),
                risk("tests_removed", "新的选项 also supports disk offload for the 671B config", "body"),
                risk("security_sensitive", "这个改动涉及权限与安全，需要重点审查"),
                risk("dependency_change", "bumps left-pad==2.0.1 in requirements.txt"),
                risk("no_tests", "没有任何测试", "paths"),  # no test file changed: the file list says so
            ]
        },
        WITH_TESTS: {
            "risks": [
                risk("no_tests", "没有任何测试", "paths"),  # it adds a test file
                risk("perf_regression", "性能明显下降，吞吐变低", "body"),
            ]
        },
    }
    fake = serve(responder=answering(answers))
    prs = [p for p in week(store) if p.number in answers]
    analyses, _, _ = analyse(store, fake, prs, "zh")
    judged = {n: [r.label for r in a.risks if r.label in JUDGED_LABELS] for n, a in analyses.items()}
    assert judged == {BREAKING: ["config_breaking", "tests_removed", "no_tests"], WITH_TESTS: []}
    assert analyses[BREAKING].risks[0].evidence == answers[BREAKING]["risks"][0]["evidence"]


@pytest.mark.parametrize(
    ("evidence", "found"),
    [
        ("移除了 --use-foo 参数，旧脚本会失败", True),  # an option inside Chinese prose
        ("改动 foo_bar.py 的调度逻辑", True),  # a file name
        ("调用 compute_thing() 的方式变了", True),  # an identifier
        ("“the scheduler now drops stale groups”", True),  # a quoted run of words
        ("the scheduler now drops stale groups by default", True),  # an unquoted one
        ("调度器默认丢弃过期的样本组", True),  # a run of CJK characters
        ("修改了配置，可能影响用户", False),  # nothing quotable
        ("removes --use-bar", False),  # an option the PR never names
        ("the foo", False),  # too short to be a quote
        ("`foo`", False),
    ],
)
def test_evidence_must_share_a_substantial_fragment_with_the_pr(evidence: str, found: bool) -> None:
    shown = Shown.of(
        [
            "feat: add --use-foo",
            "The scheduler now drops stale groups by default. 调度器默认丢弃过期的样本组。",
            "miles/utils/foo_bar.py",
            "+    x = compute_thing(y)",
        ],
        paths=["miles/utils/foo_bar.py"],
    )
    assert shown.supports("config_breaking", evidence) is found


# --- PR numbers in prose ------------------------------------------------------------------------


def test_scrub_drops_foreign_pr_numbers_and_their_separators() -> None:
    assert scrub_prs("Fixes it (#99999), see #12 and PR #99999.", {12}) == "Fixes it, see #12."
    assert scrub_prs("修复加载器（#99999），参见 #12 和 #99999。", {12}) == "修复加载器，参见 #12。"
    assert scrub_prs("No numbers at all", set()) == "No numbers at all"


def test_foreign_pr_numbers_are_scrubbed_from_the_analyses_and_the_narrative(store: Store, serve) -> None:
    pr = next(p for p in week(store) if p.number == BREAKING)
    store.upsert_prs([pr.model_copy(update={"related": [3990]})])  # a related PR outside the window
    hostile = {
        "summary": f"Replaces the flag (#99999) after #3990 and #4137 in #{BREAKING}",
        "explanation": "Like PR #99999, it breaks launch scripts; see #4105.",
        "watch": ["#99999 regressed", "watch #4137"],
        "unresolved": ["follow up in #99998"],
    }

    def respond(request: Request) -> str:
        if "<untrusted_week_data>" in request.user:
            numbers = listed_numbers(request)
            return narrative_json(numbers, summary=f"A week of #99999 fixes, #3990 and #{numbers[0]}.")
        return answering({BREAKING: hostile})(request)

    fake = serve(responder=respond)
    prs = week(store)
    analyses, _, engine = analyse(store, fake, prs)
    got = analyses[BREAKING]
    assert got.summary == f"Replaces the flag after #3990 and #4137 in #{BREAKING}"
    assert got.explanation == "Like, it breaks launch scripts; see #4105."
    assert got.watch == ["regressed", "watch #4137"] and got.unresolved == ["follow up in"]
    report = engine.narrate(
        build_report(
            DEMO.repo, WEEK, prs, source="fixture", unavailable=(), settings=ReportSettings(),
            analyses=analyses, taxonomy=Taxonomy(), lang="en",
        ),
        analyses,
    )  # fmt: skip
    assert report.summary == narrated_summary(f"A week of fixes, #3990 and #{report.prs[0].number}.", report)
    assert "99999" not in json.dumps([a.model_dump(mode="json") for a in analyses.values()])


# --- scores that rank nothing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "flat"),
    [
        (lambda n: {"importance": 10, "insight": 2 + n % 5}, True),  # all at the maximum
        (lambda n: {"importance": 6, "insight": 5}, True),  # all equal
        (lambda n: {"importance": 3 + n % 6, "insight": 2 + n % 5}, False),
    ],
    ids=["all-10", "all-equal", "ranked"],
)
def test_scores_that_rank_nothing_are_invalid_and_the_rules_scores_stand(
    store: Store, serve, scores: Callable[[int], dict], flat: bool
) -> None:
    fake = serve(responder=lambda request: analysis_json(pr_number(request), **scores(pr_number(request))))
    prs = week(store)
    for run in ("asked", "cached"):  # a rerun from the cache judges the same
        analyses, rules, engine = analyse(store, fake, prs)
        for n, a in analyses.items():
            want = (rules[n].importance, rules[n].insight) if flat else tuple(scores(n).values())
            assert (a.importance, a.insight) == want, (run, n)
            assert a.engine == "llm" and a.summary == f"Change {n} in one line"  # the prose stays the model's
        usage = engine.usage()
        assert usage.fallback == (len(prs) if flat else 0)
        assert usage.analysed + usage.cached == (0 if flat else len(prs))
    assert fake.calls == len(prs)


def test_flat_scores_need_enough_analyses_to_judge() -> None:
    def llm(importance: float, insight: float = 5) -> PRAnalysis:
        return PRAnalysis(
            repo="r", number=1, summary="s", importance=importance, insight=insight, engine="llm"
        )

    assert flat_scores([llm(10, 3), llm(10, 4)])
    assert not flat_scores([llm(6, 3), llm(6, 4)])  # two equal scores can be honest
    assert flat_scores([llm(6, 3), llm(6, 4), llm(6, 5)])
    assert not flat_scores([llm(6, 3), llm(7, 4), llm(6, 5)])
    assert not flat_scores([llm(10)])


# --- the merge: the model's judgement, the rules' facts -----------------------------------------


def test_the_merge_keeps_the_models_judgement_and_the_rules_facts(store: Store, serve) -> None:
    pr = next(p for p in week(store) if p.number == BREAKING)
    failing = pr.model_copy(
        update={"number": 9301, "checks": ChecksState(state="FAILURE", failing=["gpu-e2e"]), "related": []}
    )
    store.upsert_prs([failing])
    answers = {
        9301: {"importance": 4, "risks": []},  # silent: the rules' diff-evidenced config_breaking stays
        BREAKING: {  # confirms it in its own words, and claims a fact it cannot see
            "importance": 9,
            "risks": [
                risk("config_breaking", "`--colocate-offload` is gone with no alias"),
                risk("failing_checks", "`--offload-mode` failed CI", "checks"),
            ],
        },
    }
    fake = serve(responder=answering(answers))
    analyses, rules, _ = analyse(store, fake, [pr, failing])
    for n in answers:
        assert "config_breaking" in [r.label for r in rules[n].risks]  # the rules' hint was there
    facts = {n: [r.label for r in rules[n].risks if r.label in FACT_LABELS] for n in answers}
    assert {"failing_checks", "unresolved_threads"} <= set(facts[9301])
    assert "failing_checks" not in facts[BREAKING]
    # Silent on 9301: the rules' facts stay, and so does their config_breaking a diff line shows, as theirs.
    assert [(r.label, r.by_rules) for r in analyses[9301].risks] == [
        (r.label, True) for r in rules[9301].risks if r.label in FACT_LABELS or diff_evidenced(r)
    ]
    assert "config_breaking" in [r.label for r in analyses[9301].risks]
    # Where the model names a label, its judgement stands: its words, not marked as the rules'.
    assert [r.by_rules for r in analyses[BREAKING].risks] == [False] + [True] * len(facts[BREAKING])
    assert [(r.label, r.evidence) for r in analyses[BREAKING].risks] == [
        ("config_breaking", "`--colocate-offload` is gone with no alias"),
        *((r.label, r.evidence) for r in rules[BREAKING].risks if r.label in FACT_LABELS),
    ]
    assert (analyses[9301].importance, analyses[BREAKING].importance) == (4, 9)
    # The rules saw the option removed (users break); the model's confirmed label keeps that for the level.
    assert next(r for r in rules[BREAKING].risks if r.label == "config_breaking").breaks
    assert next(r for r in analyses[BREAKING].risks if r.label == "config_breaking").breaks
