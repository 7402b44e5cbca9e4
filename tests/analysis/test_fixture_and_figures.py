"""The fixture source and the computed figures of a report."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from prdigest.analysis.report import build_report
from prdigest.config import ReportSettings
from prdigest.errors import SourceError
from prdigest.models import PullRequest, Window
from prdigest.sources.fixture import FixtureSource, demo_fixture_path


@pytest.fixture(scope="module")
def demo() -> FixtureSource:
    return FixtureSource(demo_fixture_path())


def test_demo_fixture_carries_every_signal(demo: FixtureSource) -> None:
    assert demo.repo == "acme-ml/trainer"
    assert demo.window is not None and len(demo.fetch(demo.window)) == len(demo.prs) >= 25
    assert demo.unavailable == ()
    assert any(p.is_fork for p in demo.prs)
    assert any(t.is_resolved is False for p in demo.prs for t in p.review_threads or [])
    assert any(p.checks and p.checks.state == "FAILURE" for p in demo.prs)


def test_figures_equal_a_recomputation(demo: FixtureSource) -> None:
    assert demo.window is not None
    prs = demo.fetch(demo.window)
    report = build_report(
        demo.repo, demo.window, prs, source="fixture", unavailable=[], settings=ReportSettings()
    )
    s = report.stats
    assert s.merged_prs == len(prs)
    assert s.authors == dict(Counter(p.author for p in prs))
    assert list(s.authors.values()) == sorted(s.authors.values(), reverse=True)
    assert sum(s.author_share.values()) == pytest.approx(1, abs=0.01)
    assert s.additions == sum(p.additions for p in prs)
    assert sum(s.per_day.values()) == len(prs)
    assert list(s.per_day) == demo.window.days()
    touched = Counter(f.path for p in prs for f in p.files or [])
    assert {h.path for h in s.hot_files} == {path for path, n in touched.items() if n >= 3}
    assert [p.number for p in report.prs] == [p.number for p in sorted(prs, key=lambda p: p.merged_at)]


def test_direct_pushes_are_shown_apart() -> None:
    window = Window(since="2026-09-07", until="2026-09-07", tz="UTC")
    prs = [
        PullRequest(repo="a/b", number=1, title="feat: x", author="ann", merged_at="2026-09-07T10:00:00Z"),
        PullRequest(repo="a/b", sha="f" * 40, title="hotfix", author="ben", merged_at="2026-09-07T11:00:00Z"),
    ]
    report = build_report(
        "a/b", window, prs, source="git", unavailable=["reviews"], settings=ReportSettings()
    )
    assert report.stats.merged_prs == 1 and report.stats.direct_pushes == 1
    assert [p.number for p in report.prs] == [1]
    assert report.direct_pushes[0].title == "hotfix"
    assert report.stats.authors == {"ann": 1}
    assert report.stats.per_day == {date(2026, 9, 7): 1}


def test_empty_window_gives_an_empty_report() -> None:
    window = Window(since="2030-01-01", until="2030-01-07", tz="UTC")
    report = build_report("a/b", window, [], source="git", unavailable=["reviews"], settings=ReportSettings())
    assert report.stats.merged_prs == 0
    assert report.stats.author_share == {} and report.stats.hot_files == []
    assert report.prs == [] and report.themes == []
    assert report.unavailable == ["reviews"]
    payload = json.loads(report.model_dump_json())
    assert payload["stats"]["per_day"] == {f"2030-01-0{d}": 0 for d in range(1, 8)}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"repo": "a/b", "prs": [\n{"number": 1,}\n]}', r"invalid JSON at line 2"),
        ('{"repo": "a/b", "prs": {}}', r'"prs" must be a list'),
        ('{"prs": []}', r"no repository"),
        (
            '{"repo": "a/b", "prs": [{"number": 7, "title": "t", "author": "x"}]}',
            r"#7: merged_at: Field required",
        ),
        (
            '{"repo": "a/b", "prs": [{"number": 7, "title": "t", "author": "x", '
            '"merged_at": "2026-09-07T10:00:00"}]}',
            r"#7: merged_at: .*UTC offset",
        ),
        ('{"repo": "a/b", "window": {"since": "x"}, "prs": []}', r"window: since"),
        ("[1, 2]", r"expected an object"),
    ],
)
def test_bad_fixture_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(content)
    with pytest.raises(SourceError, match=message):
        FixtureSource(path)


def test_missing_fixture(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        FixtureSource(tmp_path / "none.json")


def test_demo_command(run_cli) -> None:
    result = run_cli("demo", "--lang", "en")
    assert result.returncode == 0, result.stderr
    assert "acme-ml/trainer weekly report" in result.stdout
    assert "#4124" in result.stdout and "Merged PRs" in result.stdout


def test_history_counts_the_weeks_the_cache_holds_completely(tmp_path: Path) -> None:
    from prdigest.config import load_settings
    from prdigest.pipeline.single import make_report
    from prdigest.storage import Store, coverage

    store = Store(tmp_path / "h.db")
    week = [
        PullRequest(repo="a/b", number=n, title="fix: x", author=a, additions=10, deletions=n, merged_at=at)
        for n, a, at in [
            (1, "ann", "2026-08-25T10:00:00+08:00"),  # week 35
            (2, "ben", "2026-08-26T10:00:00+08:00"),
            (3, "ann", "2026-09-08T10:00:00+08:00"),  # week 37
        ]
    ]
    store.upsert_prs(week)
    read = Window(since="2026-08-24", until="2026-09-13", tz="Asia/Shanghai")  # weeks 35 to 37 were read
    coverage.record(store, "a/b", "fixture", read.start, read.end)
    window = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
    report = make_report(load_settings(env={}), store, None, window, repo="a/b")
    assert [
        (h.since, h.complete, h.merged_prs, h.additions, h.deletions, h.authors) for h in report.history[-3:]
    ] == [
        (date(2026, 8, 24), True, 2, 20, 3, 2),
        (date(2026, 8, 31), True, 0, 0, 0, 0),  # read, and quiet: a true zero
        (date(2026, 9, 7), True, 1, 10, 3, 1),
    ]
    assert report.history[0].since == date(2026, 7, 13) and not report.history[0].complete
    assert report.history[0].merged_prs is None  # never read: no figure, not zero
