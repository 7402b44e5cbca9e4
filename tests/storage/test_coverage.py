"""Complete data behind every answer: the cache knows which days each source gave it completely, commands
read the days it lacks (or name them), the history charts only complete periods, and a subscription's
top_n changes what its card lists, never the figures. On small git repositories built here."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo, iter_prs

from prdigest.analysis.history import chart_periods
from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.models import Report, Window
from prdigest.pipeline.single import make_report, read_window
from prdigest.render.lark import render_lark_thread
from prdigest.render.slack import render_slack_thread
from prdigest.sources.git.source import GitSource
from prdigest.sources.github.source import ClientOptions, GitHubClient, GitHubSource
from prdigest.sources.github.sync import sync
from prdigest.sources.registry import source_factory
from prdigest.storage import Store, coverage
from prdigest.subscription import Subscription

REPO = "acme/app"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")  # 2026-W37
MONDAY_AFTER = datetime(2026, 9, 14, 9, tzinfo=UTC)
CONSOLE = Context(platform="console", chat_id="c1", user_id="u1")
AUTHORS = ("Ann", "Ben", "Cai", "Dee")


def build_clone(path: Path) -> Path:
    """Three PRs a day over W36 and W37 (numbered from 1), by four authors; each a feature of some 70
    lines in a core path without a test: every one is a key PR and `no_tests` fires on it."""
    repo = new_repo(path)
    number = 0
    for offset in range(14):
        day = date(2026, 8, 31) + timedelta(days=offset)
        for hour in (9, 13, 17):
            number += 1
            name = AUTHORS[number % len(AUTHORS)]
            (repo / "pkg" / "core").mkdir(parents=True, exist_ok=True)
            (repo / "pkg" / "core" / f"mod{number}.py").write_text(
                "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(number % 7 + 32))
            )
            commit(
                repo, f"feat: add case {number} (#{number})", f"{day}T{hour:02d}:00:00+00:00",
                name=name, email=f"{name.lower()}@example.com",
            )  # fmt: skip
    return repo


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("coverage") / "app")


def utc_settings():
    settings = load_settings(env={})
    return settings.model_copy(update={"report": settings.report.model_copy(update={"timezone": "UTC"})})


def services(tmp_path: Path, source: GitSource | None) -> Services:
    settings = utc_settings()
    store = Store(tmp_path / "c.db")
    return Services(
        settings=settings, store=store, default_repo=REPO,
        source_for=source_factory(settings, source) if source else (lambda repo: None),
        clock=lambda: MONDAY_AFTER,
    )  # fmt: skip


def half_cache(svc: Services, source: GitSource) -> None:
    """Monday to Wednesday of W37 read from the clone: the cache holds 9 of the week's 21 PRs."""
    read_window(svc.store, source, Window(since=WEEK.since, until=date(2026, 9, 9), tz="UTC"))
    assert len(svc.store.prs_in_window(REPO, WEEK)) == 9


# --- the coverage record ------------------------------------------------------------------------


def test_spans_merge_and_a_window_names_the_days_no_span_covers(any_store: Store) -> None:
    store = any_store  # SQLite, then PostgreSQL
    at = lambda day, hour=0: datetime(2026, 9, day, hour, tzinfo=UTC)  # noqa: E731
    coverage.record(store, REPO, "git", at(7), at(9))
    coverage.record(store, REPO, "git", at(9), at(10))  # touches the first: one span
    coverage.record(store, REPO, "github", at(11), at(12, 12))  # half of the 12th
    with store.reading() as tx:
        rows = tx.rows("select source, start_at, end_at from coverage order by start_at")
    assert [(r["source"], r["start_at"][:10], r["end_at"][:13]) for r in rows] == [
        ("git", "2026-09-07", "2026-09-10T00"),
        ("github", "2026-09-11", "2026-09-12T12"),
    ]
    gaps = coverage.missing(store, REPO, WEEK, now=at(13, 6))
    # The 10th was never read, the 12th only half; the 13th is missing up to now.
    assert [(g.since, g.until) for g in gaps] == [
        (date(2026, 9, 10), date(2026, 9, 10)),
        (date(2026, 9, 12), date(2026, 9, 13)),
    ]
    # Days after now are not missing: there is nothing to read yet.
    assert coverage.missing(store, REPO, WEEK, now=at(10)) == []
    # The same instants seen from Shanghai: its 7th began on the 6th at 16:00 UTC, never read.
    shanghai = Window(since="2026-09-07", until="2026-09-09", tz="Asia/Shanghai")
    assert [g.since for g in coverage.missing(store, REPO, shanghai, now=at(20))] == [date(2026, 9, 7)]


# --- every period command answers from the whole period ----------------------------------------


@pytest.mark.parametrize("first", ["authors", "risks", "top 24", "hot"])
def test_on_a_half_cached_week_every_command_counts_what_report_counts(
    clone: Path, tmp_path: Path, first: str
) -> None:
    source = GitSource(clone, repo=REPO)
    svc = services(tmp_path, source)
    half_cache(svc, source)

    before = handle(f"{first} 2026-W37", CONSOLE, svc)  # asked before any report: reads the missing days
    replies = {text: handle(f"{text} 2026-W37", CONSOLE, svc) for text in ("authors", "risks", "top 24")}
    full = handle("report 2026-W37", CONSOLE, svc).report

    assert full is not None and full.stats.merged_prs == 21  # git's count
    if before.report is not None:
        assert before.report.stats.merged_prs == 21
    assert replies["authors"].report.stats.authors == full.stats.authors
    assert "21" in replies["authors"].text.splitlines()[0]
    assert replies["risks"].report.stats.risks == full.stats.risks and full.stats.risks["no_tests"] == 21
    risks = replies["risks"].report.risk_observations
    assert [(o.title, o.prs) for o in risks] == [(o.title, o.prs) for o in full.risk_observations]
    assert len(replies["top 24"].prs) == 21
    assert not any("Could not read" in w for w in full.warnings)  # the clone gave every day


def test_a_complete_cache_answers_with_one_coverage_query_and_no_source_read(
    clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = GitSource(clone, repo=REPO)
    svc = services(tmp_path, source)
    handle("report 2026-W37", CONSOLE, svc)  # reads the week and the history's earlier weeks
    reads: list[Window] = []
    monkeypatch.setattr(GitSource, "fetch", lambda self, window: reads.append(window) or [])
    reply = handle("risks 2026-W37", CONSOLE, svc)
    assert reply.report is not None and reply.report.stats.merged_prs == 21
    assert reads == []


@pytest.mark.parametrize(
    ("lang_text", "fragment"),
    [("authors 2026-W37", "Could not read 2026-09-10 to 2026-09-13 of acme/app"),
     ("作者 2026-W37", "acme/app 的 2026-09-10 至 2026-09-13 未能从数据源完整读取")],
)  # fmt: skip
def test_without_a_source_the_reply_names_the_days_it_could_not_read(
    clone: Path, tmp_path: Path, lang_text: str, fragment: str
) -> None:
    svc = services(tmp_path, None)
    half_cache(svc, GitSource(clone, repo=REPO))
    reply = handle(lang_text, CONSOLE, svc)
    assert reply.report is not None and reply.report.stats.merged_prs == 9
    assert fragment in reply.text
    assert any(fragment in w for w in reply.report.warnings)


# --- history ------------------------------------------------------------------------------------


def test_the_history_marks_a_partly_cached_week_missing_and_a_clone_fills_it(
    clone: Path, tmp_path: Path
) -> None:
    svc = services(tmp_path, None)
    source = GitSource(clone, repo=REPO)
    read_window(svc.store, source, WEEK)
    # Two of W36's 21 PRs reach the cache without a complete read (e.g. `explain #N`).
    svc.store.upsert_prs(p for p in source.fetch(Window(since="2026-08-31", until="2026-09-06", tz="UTC"))
                         if p.number in (1, 2))  # fmt: skip
    report = make_report(svc.settings, svc.store, None, WEEK, repo=REPO, save=False, now=MONDAY_AFTER)
    w36 = next(h for h in report.history if h.since == date(2026, 8, 31))
    assert not w36.complete and w36.merged_prs is None  # not shown as a week of 2 PRs
    assert report.history[-1].current and report.history[-1].merged_prs == 21
    assert all(not h.complete for h in report.history[:-1])

    report = make_report(
        svc.settings, svc.store, source, WEEK, repo=REPO, lang="en", save=False, now=MONDAY_AFTER
    )
    w36 = next(h for h in report.history if h.since == date(2026, 8, 31))
    assert w36.complete and w36.merged_prs == 21
    assert all(h.complete for h in report.history)
    # The weeks before the repository's first commit (in W36) are no bars of zero PRs: not charted.
    assert [h.since for h in report.history] == [date(2026, 8, 31), WEEK.since]

    from prdigest.render.html import render_html

    partial = report.model_copy(
        update={"history": [h.model_copy(update={"complete": False, "merged_prs": None})
                            if h.since == date(2026, 8, 31) else h for h in report.history]}
    )  # fmt: skip
    page = render_html(partial)
    assert "not fully read, not counted: 08-31" in page


def test_a_quarter_charts_by_month() -> None:
    unit, periods = chart_periods(Window(since="2026-07-15", until="2026-10-14", tz="UTC"))
    assert unit == "month"
    assert [(w.since.isoformat(), w.until.isoformat(), current) for w, current in periods] == [
        ("2026-01-01", "2026-01-31", False), ("2026-02-01", "2026-02-28", False),
        ("2026-03-01", "2026-03-31", False), ("2026-04-01", "2026-04-30", False),
        ("2026-05-01", "2026-05-31", False), ("2026-06-01", "2026-06-30", False),
        ("2026-07-15", "2026-07-31", True), ("2026-08-01", "2026-08-31", True),
        ("2026-09-01", "2026-09-30", True), ("2026-10-01", "2026-10-14", True),
    ]  # fmt: skip
    unit, periods = chart_periods(WEEK)
    assert unit == "week" and len(periods) == 9 and periods[-1] == (WEEK, True)
    assert periods[0][0].since == date(2026, 7, 13)


# --- the empty period's hint --------------------------------------------------------------------


def test_an_empty_period_points_at_the_clones_newest_pr_not_the_caches(
    clone: Path, tmp_path: Path, run_cli
) -> None:
    source = GitSource(clone, repo=REPO)
    svc = services(tmp_path, source)
    svc.store.upsert_prs(source.fetch(Window(since="2026-08-31", until="2026-08-31", tz="UTC")))  # old ones
    reply = handle("risks 2026-W20", CONSOLE, svc)
    assert "The newest PR of acme/app in the clone is #42, merged on 2026-09-13 (2026-W37)." in reply.text
    assert "`show risks 2026-W37`" in reply.text

    result = run_cli("report", "--git", str(clone), "--repo", REPO, "--week", "2026-W20", "--tz", "UTC",
                     "--lang", "en", "--db", str(tmp_path / "cli.db"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "The newest PR of acme/app in the clone is #42, merged on 2026-09-13 (2026-W37)." in result.stdout


# --- GitHub: a partial sync records what it completed ----------------------------------------


def test_a_partial_github_sync_leaves_the_days_it_could_not_read_missing() -> None:
    with FakeGitHub() as fake:
        repo = fake.add_repo(FakeRepo("acme/rocket"))
        repo.generate(40, WEEK.start, WEEK.end, seed=5)
        broken = sorted(iter_prs(repo, WEEK.start, WEEK.end), key=lambda p: p.merged_at)[-1]
        broken.broken = True
        client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, backoff=0, max_wait=0))
        store = Store(":memory:")
        result = sync(store, GitHubSource(client, "acme/rocket"), WEEK)
        assert result.partial and list(result.failed) == [broken.number]
        gaps = coverage.missing(store, "acme/rocket", WEEK, now=MONDAY_AFTER)
        lost = broken.merged_at.astimezone(UTC).date()
        assert [(g.since, g.until) for g in gaps] == [(lost, lost)]
        broken.broken = False
        sync(store, GitHubSource(client, "acme/rocket"), WEEK)
        assert coverage.missing(store, "acme/rocket", WEEK, now=MONDAY_AFTER) == []


# --- a subscription's top_n ---------------------------------------------------------------------


def test_top_n_changes_what_the_card_lists_never_the_figures(clone: Path, tmp_path: Path) -> None:
    from prdigest.bot.delivery import ConsoleDeliverer, deliver_subscription
    from prdigest.storage.subscriptions import save_subscription

    settings = utc_settings()
    store = Store(tmp_path / "d.db")
    outcomes = {}
    for top_n in (3, 10):
        sub = save_subscription(store, Subscription(
            platform="console", chat_id=f"c{top_n}", repo=REPO, source="git", git_path=str(clone),
            tz="UTC", lang="en", top_n=top_n,
        ))  # fmt: skip
        outcomes[top_n] = deliver_subscription(
            settings, store, sub, {"console": ConsoleDeliverer()}, window=WEEK
        ).report
    three, ten = outcomes[3], outcomes[10]
    assert three.stats == ten.stats and three.stats.key_prs > 3
    assert [p.number for p in three.prs if p.key] == [p.number for p in ten.prs if p.key]

    def key_rows(report: Report) -> list[dict]:  # the thread's first card: the key-PR tables
        card = render_lark_thread(report)[0]
        return [row for e in card["body"]["elements"] if e.get("tag") == "table" for row in e["rows"]]

    assert len(key_rows(three)) == 3
    assert f"{three.stats.key_prs - 3} more" in str(render_lark_thread(three)[0])
    assert len(key_rows(ten)) == min(10, ten.stats.key_prs)
    key_section = render_slack_thread(three)[0]["blocks"][1]["text"]["text"]
    assert "\n3. " in key_section and "\n4. " not in key_section


def test_a_clone_is_complete_only_up_to_its_last_fetch(clone: Path, tmp_path: Path) -> None:
    import os
    import subprocess

    copy = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(clone), str(copy)], check=True)
    source = GitSource(copy, repo=REPO)
    assert source.ref.startswith("refs/remotes/")
    # Last fetched on Wednesday noon of W37: the clone cannot know the rest of the week.
    fetched = datetime(2026, 9, 9, 12, tzinfo=UTC).timestamp()
    git_dir = copy / ".git"
    for path in (git_dir / "packed-refs", git_dir / source.ref, git_dir / "FETCH_HEAD"):
        if path.exists():
            os.utime(path, (fetched, fetched))
    store = Store(tmp_path / "f.db")
    read_window(store, source, WEEK)
    gaps = coverage.missing(store, REPO, WEEK, MONDAY_AFTER)
    assert [(g.since, g.until) for g in gaps] == [(date(2026, 9, 9), date(2026, 9, 13))]
    # A clone of a local branch (no remote) knows everything up to now.
    assert GitSource(clone, repo=REPO).known_until() is None
    store.close()
