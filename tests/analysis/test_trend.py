"""Week over week: a report's figures against the weeks before it, read from the source when the cache
lacks them, and never against a week the source could not give completely. On git repositories built here."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.analysis.history import trend_periods
from prdigest.analysis.trend import trend
from prdigest.config import Settings, load_settings
from prdigest.models import Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.base import BatchHook
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

REPO = "acme/app"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")  # 2026-W37
NOW = datetime(2026, 9, 14, 9, tzinfo=UTC)
FIRST_MONDAY = date(2026, 8, 3)  # W32: six weeks up to W37
AUTHORS = ("Ann", "Ben", "Cai", "Dee", "Eve")


def build_clone(path: Path) -> Path:
    """Six weeks of PRs, a different number each week (2, 3, 4 ...), by a varying set of authors; every
    third PR comes with its test, so the risk counts differ from week to week too."""
    repo = new_repo(path)
    number = 0
    for week in range(6):
        for k in range(week + 2):
            number += 1
            day = FIRST_MONDAY + timedelta(days=7 * week + k % 5)
            name = AUTHORS[(number * (week + 1)) % len(AUTHORS)]
            (repo / "pkg" / "core").mkdir(parents=True, exist_ok=True)
            (repo / "pkg" / "core" / f"mod{number}.py").write_text(
                "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(number % 5 + 30))
            )
            if number % 3 == 0:
                (repo / "tests").mkdir(exist_ok=True)
                (repo / "tests" / f"test_mod{number}.py").write_text(
                    f"def test_{number}():\n    assert True\n"
                )
            commit(
                repo, f"feat: add case {number} (#{number})", f"{day}T{9 + k:02d}:00:00+00:00",
                name=name, email=f"{name.lower()}@example.com",
            )  # fmt: skip
    return repo


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("trend") / "app")


def utc_settings() -> Settings:
    settings = load_settings(env={})
    return settings.model_copy(update={"report": settings.report.model_copy(update={"timezone": "UTC"})})


def report_of(tmp_path: Path, name: str, source: GitSource, window: Window) -> Report:
    store = Store(tmp_path / f"{name}.db")  # an empty cache each time
    try:
        return make_report(
            utc_settings(), store, source, window, lang="en", save=False, use_llm=False, now=NOW
        )
    finally:
        store.close()


def figures(report: Report) -> dict[str, float]:
    """A report's own figures, counted as the trend counts its earlier weeks'."""
    s = report.stats
    own = dict(merged_prs=s.merged_prs, key_prs=s.key_prs, additions=s.additions, deletions=s.deletions)
    return {**own, "authors": len(s.authors), **s.risks}


def test_a_week_compares_with_the_four_before_it_read_from_the_source_on_an_empty_cache(
    clone: Path, tmp_path: Path
) -> None:
    source = GitSource(clone, repo=REPO)
    report = report_of(tmp_path, "w37", source, WEEK)
    earlier = [figures(report_of(tmp_path, f"w{i}", source, w)) for i, w in enumerate(trend_periods(WEEK))]

    assert [p.since for p in trend_periods(WEEK)] == [
        date(2026, 8, 10) + timedelta(weeks=k) for k in range(4)
    ]
    assert [e["merged_prs"] for e in earlier] == [3, 4, 5, 6]  # W33..W36, oldest first
    got = report.stats.trend
    names = {"merged_prs", "key_prs", "additions", "deletions", "authors"} | {k for e in earlier for k in e}
    assert set(got) == names | set(report.stats.risks)
    for name, t in got.items():
        assert t.previous == [float(e.get(name, 0)) for e in earlier], name
    assert report.stats.merged_prs == 7
    assert got["merged_prs"].change == round((7 - 4.5) / 4.5, 3)  # +56% on the four-week mean
    assert got["no_tests"].previous == [e["no_tests"] for e in earlier]


def test_a_longer_window_compares_with_the_one_period_of_the_same_length_before_it(
    clone: Path, tmp_path: Path
) -> None:
    fortnight = Window(since="2026-08-31", until="2026-09-13", tz="UTC")
    source = GitSource(clone, repo=REPO)
    report = report_of(tmp_path, "fortnight", source, fortnight)
    before = report_of(tmp_path, "before", source, Window(since="2026-08-17", until="2026-08-30", tz="UTC"))

    assert report.stats.merged_prs == 13 and before.stats.merged_prs == 9
    assert {name: t.previous for name, t in report.stats.trend.items()} == {
        name: [float(figures(before).get(name, 0))] for name in report.stats.trend
    }
    assert report.stats.trend["merged_prs"].change == round((13 - 9) / 9, 3)


class PatchySource(GitSource):
    """A remote-like source (it keeps its budget for the report's window) that cannot give the days of
    ``lost``: it reads the rest of what it is asked and says it could not read those."""

    reads_history = False

    def __init__(self, path: Path, lost: list[Window]) -> None:
        super().__init__(path, repo=REPO)
        self.lost = lost

    def read_into(self, store: Store, window: Window, each_batch: BatchHook | None = None) -> list[str]:
        days = [d for d in window.days() if not any(w.since <= d <= w.until for w in self.lost)]
        runs: list[list[date]] = []
        for d in days:
            if runs and runs[-1][-1] == d - timedelta(days=1):
                runs[-1].append(d)
            else:
                runs.append([d])
        for run in runs:
            super().read_into(store, Window(since=run[0], until=run[-1], tz=window.tz), each_batch)
        return ["could not read every day"] if len(days) < len(list(window.days())) else []


def test_a_week_the_source_cannot_give_is_left_out_never_shown_as_complete(
    clone: Path, tmp_path: Path
) -> None:
    w34 = trend_periods(WEEK)[1]
    report = report_of(tmp_path, "patchy", PatchySource(clone, [w34]), WEEK)
    assert report.stats.trend["merged_prs"].previous == [3, 5, 6]  # W33, W35, W36: W34 left out
    assert report.stats.trend["merged_prs"].change == round((7 - 14 / 3) / (14 / 3), 3)

    nothing = report_of(tmp_path, "none", PatchySource(clone, trend_periods(WEEK)), WEEK)
    assert nothing.stats.merged_prs == 7 and nothing.stats.trend == {}


def test_change_is_against_the_mean_and_none_when_the_mean_is_zero() -> None:
    got = trend({"merged_prs": 6, "no_tests": 2}, [{"merged_prs": 4, "no_tests": 0}, {"merged_prs": 6}])
    assert got["merged_prs"].previous == [4.0, 6.0] and got["merged_prs"].change == 0.2
    assert got["no_tests"].previous == [0.0, 0.0] and got["no_tests"].change is None
    assert got["key_prs"].change is None  # a figure none of the periods had counts 0
    assert trend({"merged_prs": 6}, []) == {}
