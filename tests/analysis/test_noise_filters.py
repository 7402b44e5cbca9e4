"""Filters: a report counts the PRs its repository's and its subscription's filters pass; the cache keeps all
of them."""

from __future__ import annotations

from pathlib import Path

from conftest import demo_source
from test_trend import NOW, REPO, build_clone, figures, utc_settings
from test_trend import WEEK as W37

from prdigest.analysis.history import trend_periods
from prdigest.analysis.noise import Noise, filters_text
from prdigest.config import load_settings
from prdigest.config.models import RepoSettings
from prdigest.models import FileChange, PullRequest, Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store
from prdigest.subscription import Subscription, SubscriptionFilters

DEMO = demo_source()
WEEK = DEMO.window
RELEASE = (4103, 4107, 4109)  # demo PRs the tests move to a release branch


def _report(store: Store, filters: SubscriptionFilters | None = None, repo_filters=None, **repo) -> Report:
    settings = load_settings(env={})
    if repo_filters is not None or repo:
        configured = RepoSettings(name=DEMO.repo, filters=repo_filters or SubscriptionFilters(), **repo)
        settings = settings.model_copy(update={"repos": [configured]})
    sub = Subscription(
        platform="console", chat_id="c", repo=DEMO.repo, filters=filters or SubscriptionFilters()
    )
    return make_report(settings, store, None, WEEK, repo=DEMO.repo, lang="en", save=False, subscription=sub)


def _numbers(report: Report) -> set[int]:
    return {p.number for p in report.prs}


def _on_release(store: Store) -> None:
    moved = [pr.model_copy(update={"base_branch": "release/1.2"}) for pr in DEMO.prs if pr.number in RELEASE]
    store.upsert_prs(moved)


def test_a_base_branch_filter_drops_the_prs_merged_into_a_release_branch(demo_store: Store) -> None:
    _on_release(demo_store)
    everything = _report(demo_store)
    assert RELEASE[0] in _numbers(everything) and everything.stats.merged_prs == 30
    main = _report(demo_store, SubscriptionFilters(base_branch="main"))
    assert _numbers(main) == _numbers(everything) - set(RELEASE) and main.stats.merged_prs == 27
    # The repository's [[repos]] base_branch stands in when the subscription names none...
    assert _numbers(_report(demo_store, base_branch="main")) == _numbers(main)
    # ...and the subscription's wins over it.
    release = _report(demo_store, SubscriptionFilters(base_branch="release/1.2"), base_branch="main")
    assert _numbers(release) == set(RELEASE)
    # The cache keeps every PR: the filter shaped the report only.
    assert demo_store.count_prs(DEMO.repo) == 30


def test_path_globs_select_prs_by_a_file_and_exclusions_drop_prs_wholly_excluded(demo_store: Store) -> None:
    no_docs = _report(demo_store, SubscriptionFilters(paths=["!docs/**", "!mkdocs.yml", "!README.md"]))
    # Docs-only PRs are gone; a PR that also changes code (4137 changes docs/quant/nvfp4.md) stays.
    assert {4102, 4110, 4134, 4143}.isdisjoint(_numbers(no_docs)) and 4137 in _numbers(no_docs)
    quant = _report(demo_store, SubscriptionFilters(paths=["trainer/quant/**"]))
    assert _numbers(quant) == {4107, 4118, 4123, 4133, 4137, 4152}
    # Plain and "!" together: a file must match a plain glob and no "!" one.
    kernels = _report(demo_store, SubscriptionFilters(paths=["trainer/quant/**", "!**/*.cu"]))
    assert _numbers(kernels) == {4107, 4123, 4137, 4152}


def test_label_and_author_filters_and_their_exclusions(demo_store: Store) -> None:
    docs = _report(demo_store, SubscriptionFilters(labels=["Documentation"]))  # names ignore case
    assert _numbers(docs) == {4102, 4110, 4134, 4143}
    no_ci = _report(demo_store, SubscriptionFilters(labels=["!ci"]))
    assert {4105, 4111, 4116, 4126}.isdisjoint(_numbers(no_ci)) and 4121 in _numbers(no_ci)
    one = _report(demo_store, SubscriptionFilters(authors=["tvoss", "dev-arjun"]))
    assert set(one.stats.authors) == {"tvoss", "dev-arjun"} and one.stats.merged_prs == 5
    without = _report(demo_store, SubscriptionFilters(authors=["!mkowalski"]))
    assert "mkowalski" not in without.stats.authors and without.stats.merged_prs == 30 - 6


def test_the_repositorys_filters_and_the_subscriptions_both_apply(demo_store: Store) -> None:
    both = _report(
        demo_store,
        SubscriptionFilters(authors=["hyzhang-ml"]),
        repo_filters=SubscriptionFilters(labels=["bug"]),
    )
    assert _numbers(both) == {4118, 4152}


def test_unknown_files_labels_and_branches_pass() -> None:
    pr = PullRequest(repo="o/r", number=1, title="t", author="a", merged_at=WEEK.start)
    narrow = Noise(filters=(SubscriptionFilters(paths=["src/**"], labels=["bug"]),), base_branch="main")
    assert narrow.counts(pr)  # a clone's PR: no labels, no branch, files unknown
    known = pr.model_copy(update={"files": [FileChange(path="docs/a.md")], "labels": ["bug"]})
    assert not narrow.counts(known)
    assert narrow.counts(known.model_copy(update={"files": [FileChange(path="src/a.py")]}))


def test_the_trend_compares_with_the_earlier_weeks_by_the_same_filters_and_mutes(tmp_path: Path) -> None:
    source = GitSource(build_clone(tmp_path / "app"), repo=REPO)
    sub = Subscription(
        platform="console", chat_id="c", repo=REPO, muted=["no_tests"],
        filters=SubscriptionFilters(authors=["Ann", "Ben"]),
    )  # fmt: skip

    def report(window: Window, name: str) -> Report:
        store = Store(tmp_path / f"{name}.db")  # an empty cache each time: the source gives every week
        try:
            return make_report(
                utc_settings(), store, source, window, lang="en", save=False, use_llm=False, now=NOW,
                subscription=sub,
            )  # fmt: skip
        finally:
            store.close()

    week = report(W37, "w37")
    earlier = [figures(report(w, f"w{i}")) for i, w in enumerate(trend_periods(W37))]
    assert set(week.stats.authors) <= {"Ann", "Ben"} and week.stats.merged_prs < 7
    assert [e["merged_prs"] for e in earlier] != [3, 4, 5, 6]  # the filter dropped PRs of earlier weeks too
    for name, t in week.stats.trend.items():
        assert t.previous == [float(e.get(name, 0)) for e in earlier], name
    assert "no_tests" not in week.stats.trend and all("no_tests" not in e for e in earlier)
    # The earlier weeks' risks followed: Ann's and Ben's PRs only, no muted label.
    kept = {p.number for w in trend_periods(W37) for p in report(w, f"w{w.since}").prs}
    assert week.risk_followups and all(
        set(f.prs) <= kept and f.label != "no_tests" for f in week.risk_followups
    )
    # The trend chart's bars count the same PRs: the earlier weeks' as their own reports do.
    bars = {bar.since: bar.merged_prs for bar in week.history}
    assert [bars[w.since] for w in trend_periods(W37)] == [e["merged_prs"] for e in earlier]
    assert bars[W37.since] == week.stats.merged_prs


def test_subscriptions_list_the_filters_in_one_line() -> None:
    filters = SubscriptionFilters(paths=["src/**", "!docs/**"], authors=["!bot"], base_branch="main")
    assert filters_text(filters) == "paths: src/**, !docs/**; authors: !bot; base_branch: main"
    assert filters_text(SubscriptionFilters()) == ""
