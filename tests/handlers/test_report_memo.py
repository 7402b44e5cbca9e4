"""Chat's reports are built once per (repository, window, language, engine, source, cache revision) and
shared by every command until the cache changes, whichever connection or process changes it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import demo_monday_after, demo_services, demo_source

from prdigest import clock
from prdigest.config import load_settings
from prdigest.handlers import Context, Reply, Services, handle, scope
from prdigest.handlers.report_memo import Key, ReportMemo, memo_for
from prdigest.models import LLMUsage, Report, Snooze
from prdigest.pipeline.single import make_report
from prdigest.storage import Store, coverage
from prdigest.storage.revision import revision

pytestmark = pytest.mark.timeout(120)

CONSOLE = Context(platform="console", chat_id="console", user_id="me")
WEEK = demo_source().window
REPO = demo_source().repo


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each report build the chat asks for, by language."""
    calls: list[str] = []

    def counted(*args: object, **kw: object) -> Report:
        report = make_report(*args, **kw)  # type: ignore[arg-type]
        calls.append(report.lang)
        return report

    monkeypatch.setattr(scope, "make_report", counted)
    return calls


@pytest.fixture
def svc(demo_store: Store) -> Services:
    return demo_services(load_settings(env={}), demo_store)


def settled(svc: Services, builds: list[str], text: str = "risks") -> Reply:
    """Ask until the reply comes from the memo: the first build reads the week's days and analyses its
    PRs (a build that wrote is not kept), the next is kept."""
    for _ in range(3):
        before = len(builds)
        reply = handle(text, CONSOLE, svc)
        if len(builds) == before:
            builds.clear()
            return reply
    raise AssertionError(f"{text!r} never came from the memo: {len(builds)} builds")


def changed_pr(store: Store) -> None:
    pr = store.prs_in_window(REPO, WEEK)[0]
    store.upsert_prs([pr.model_copy(update={"title": pr.title + " (retitled)"})])


def test_every_command_shares_one_build(svc: Services, builds: list[str]) -> None:
    settled(svc, builds)
    for text in ("risks", "top 3", "authors", "hot files", "show risks"):
        assert handle(text, CONSOLE, svc).report is not None
    assert builds == []


def test_revision_moves_with_what_a_report_reads(demo_store: Store) -> None:
    start = revision(demo_store, REPO)
    demo_store.upsert_prs(demo_store.prs_in_window(REPO, WEEK))  # the same rows again: a re-sync
    assert revision(demo_store, REPO) == start
    changed_pr(demo_store)
    assert revision(demo_store, REPO) == start + 1
    coverage.record(demo_store, REPO, "git", demo_monday_after(), demo_monday_after() + timedelta(hours=1))
    assert revision(demo_store, REPO) == start + 2


@pytest.mark.parametrize("change", ["pr", "analysis", "coverage", "another_process"])
def test_a_change_to_the_cache_builds_again(
    svc: Services, builds: list[str], tmp_path: Path, change: str
) -> None:
    settled(svc, builds)
    store = svc.store
    if change == "pr":
        changed_pr(store)
    elif change == "analysis":
        pr = store.prs_in_window(REPO, WEEK)[0]
        first = handle(f"explain #{pr.number}", CONSOLE, svc).analysis
        assert first is not None
        store.put_analysis(pr, first.model_copy(update={"importance": 9.5, "summary": "Rewritten."}), "en")
    elif change == "coverage":
        coverage.record(store, REPO, "git", demo_monday_after(), demo_monday_after() + timedelta(hours=1))
    else:  # the CLI syncing the same file while `serve` runs
        other = Store(store.where)
        changed_pr(other)
        other.close()
    reply = handle("risks", CONSOLE, svc)
    assert builds == ["en"] and reply.report is not None
    if change == "pr":
        assert any(p.title.endswith("(retitled)") for p in reply.report.prs)
    if change == "analysis":
        assert 9.5 in [p.importance for p in reply.report.prs]
    # The new state is shared in turn (after one more build when the first wrote new analyses).
    settled(svc, builds)
    handle("top", CONSOLE, svc)
    assert builds == []


def test_languages_have_their_own_reports(svc: Services, builds: list[str]) -> None:
    settled(svc, builds, "risks")
    zh = settled(svc, builds, "风险")  # its analyses (in Chinese) are new to the cache: en builds again
    en = settled(svc, builds, "risks")
    assert en.report is not None and zh.report is not None
    assert (en.report.lang, zh.report.lang) == ("en", "zh")
    assert handle("risks", CONSOLE, svc).report is en.report  # both kept
    assert handle("风险", CONSOLE, svc).report is zh.report
    assert builds == []


def _llm_settings() -> object:
    return load_settings(env={"PRDIGEST_LLM_MODEL": "m1", "PRDIGEST_LLM_BASE_URL": "http://127.0.0.1:9/v1"})


def test_engines_have_their_own_reports(demo_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    rules_svc = demo_services(load_settings(env={}), demo_store)
    rules_builds: list[str] = []
    monkeypatch.setattr(
        scope, "make_report", lambda *a, **kw: rules_builds.append("x") or make_report(*a, **kw)
    )
    rules = settled(rules_svc, rules_builds)
    llm_builds: list[str] = []
    narrative = ["llm"]

    # The LLM's report, without an LLM: the rules' report as the engine hands it back, with its usage.
    def llm_report(*args: object, **kw: object) -> Report:
        llm_builds.append(narrative[0])
        report = make_report(*args, **{**kw, "use_llm": False})  # type: ignore[arg-type]
        return report.model_copy(update={"llm_usage": LLMUsage(model="m1", narrative=narrative[0])})

    monkeypatch.setattr(scope, "make_report", llm_report)
    llm_svc = demo_services(_llm_settings(), demo_store)  # type: ignore[arg-type]
    first = handle("risks", CONSOLE, llm_svc)
    assert first.report is not None and first.report.llm_usage is not None
    assert rules.report is not None and rules.report.llm_usage is None
    assert handle("risks", CONSOLE, llm_svc).report is first.report
    assert llm_builds == ["llm"]
    # A narrative the LLM fell short on is not kept: the next command asks the LLM again.
    narrative[0] = "rules"
    coverage.record(demo_store, REPO, "git", demo_monday_after(), demo_monday_after() + timedelta(hours=1))
    for _ in range(3):
        handle("risks", CONSOLE, llm_svc)
    assert llm_builds == ["llm", "rules", "rules", "rules"]


def test_one_build_for_many_concurrent_asks(
    svc: Services, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settled(svc, builds)
    changed_pr(svc.store)
    slow = scope.make_report

    def slower(*args: object, **kw: object) -> Report:
        time.sleep(0.3)  # every asker arrives while the one build runs
        return slow(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(scope, "make_report", slower)
    start = threading.Barrier(20)

    def ask(i: int) -> Reply:
        start.wait(timeout=30)
        return handle(("risks", "top 5", "authors", "hot")[i % 4], CONSOLE, svc)

    with ThreadPoolExecutor(20) as pool:
        replies = [f.result(timeout=60) for f in [pool.submit(ask, i) for i in range(20)]]
    assert len(builds) == 1
    assert len({id(r.report) for r in replies if r.report is not None}) == 1


@pytest.fixture
def memo_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Store], None]]:
    def off(store: Store) -> None:
        monkeypatch.setattr(memo_for(store), "size", 0)

    yield off


def test_replies_are_the_same_with_and_without_the_memo(
    svc: Services, builds: list[str], memo_off: Callable[[Store], None]
) -> None:
    texts = ["risks", "top 3", "authors", "hot files", "风险", "重点 3", "作者", "热点文件"]
    for text in ("risks", "风险", "risks"):  # each language's analyses are written once
        settled(svc, builds, text)
    memoised = [handle(t, CONSOLE, svc) for t in texts]
    shared = [r.report.model_dump_json() for r in memoised if r.report is not None]
    assert builds == []
    memo_off(svc.store)
    fresh = [handle(t, CONSOLE, svc) for t in texts]
    assert len(builds) == len(texts)
    for a, b in zip(memoised, fresh, strict=True):
        assert a.text == b.text
        assert a.model_dump(exclude={"report"}) == b.model_dump(exclude={"report"})
        assert (a.report is None) == (b.report is None)
        if a.report is not None and b.report is not None:
            assert a.report.model_dump(exclude={"generated_at"}) == b.report.model_dump(
                exclude={"generated_at"}
            )
    # No reply changed the report they share.
    assert [r.report.model_dump_json() for r in memoised if r.report is not None] == shared


def test_a_period_with_missing_days_is_built_every_time(demo_store: Store, builds: list[str]) -> None:
    """Without a source the cache lacks the week's days: each command names them, from a fresh build."""
    svc = demo_services(load_settings(env={}), demo_store)
    svc.source_for = lambda repo: None
    for _ in range(3):
        reply = handle("risks", CONSOLE, svc)
        assert reply.report is not None and reply.report.warnings
    assert len(builds) == 3


def test_the_memo_keeps_a_few_reports(demo_store: Store) -> None:
    memo = ReportMemo(size=2)
    settings = load_settings(env={})
    report = make_report(settings, demo_store, demo_source(), WEEK, save=False, now=demo_monday_after())
    made: list[str] = []

    def build(lang: str) -> Callable[[], Report]:
        return lambda: made.append(lang) or report  # type: ignore[func-returns-value]

    keys = [Key(REPO, "a", "b", "UTC", lang, "rules", "fixture") for lang in ("en", "zh", "xx")]
    for key in keys + keys[1:]:
        memo.report(demo_store, settings, key, build(key.lang))
    assert made == ["en", "zh", "xx"]  # zh and xx stayed
    memo.report(demo_store, settings, keys[0], build("en"))
    assert made == ["en", "zh", "xx", "en"]  # en had been dropped
    other = load_settings(env={})  # other settings (another taxonomy, say): not the same report
    memo.report(demo_store, other, keys[0], build("en"))
    assert made[-1] == "en" and len(made) == 5


def test_a_period_running_past_now_is_built_every_time(svc: Services, builds: list[str]) -> None:
    """Its days after now lack nothing yet, but will once they come, without the cache changing."""
    later = demo_monday_after() + timedelta(days=30)
    coverage.record(svc.store, REPO, "fixture", WEEK.start, later)
    text = f"risks {WEEK.since}..{WEEK.until + timedelta(days=7)}"
    for _ in range(3):
        reply = handle(text, CONSOLE, svc)
        assert reply.kind == "risks" and reply.report is not None
        assert reply.report.window.until == WEEK.until + timedelta(days=7)
    assert len(builds) == 3


def test_a_report_honouring_a_snooze_is_built_again_when_it_runs_out(demo_store: Store) -> None:
    memo, settings = ReportMemo(), load_settings(env={})
    start = demo_monday_after()
    until = start + timedelta(days=7)
    report = make_report(settings, demo_store, demo_source(), WEEK, save=False, now=start)
    snoozed = report.model_copy(update={"snoozed": [
        Snooze(repo=REPO, kind="risk", number=0, label="no_tests", until=until, by="U1", at=start)
    ]})  # fmt: skip
    made: list[str] = []
    key = Key(REPO, "a", "b", "UTC", "en", "rules", "fixture")

    def build() -> Report:
        made.append("built")
        return snoozed

    clock.set_now(start)
    memo.report(demo_store, settings, key, build)
    clock.set_now(until - timedelta(minutes=1))
    memo.report(demo_store, settings, key, build)
    assert made == ["built"]  # still snoozed: the memo's report stands
    clock.set_now(until)
    memo.report(demo_store, settings, key, build)
    assert made == ["built", "built"]  # the snooze ran out: the risk is back in a new build
