"""A shallow clone's boundary commits (its .git/shallow) are left out with a warning, in the report's
language, and the days before them are missing; a full clone's root commit is read like any other."""

from __future__ import annotations

import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from conftest import commit, git_env, new_repo

from prdigest.config import load_settings
from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store, coverage

HALF_YEAR = Window(since=date(2026, 1, 1), until=date(2026, 6, 30), tz="UTC")


@pytest.fixture
def full(tmp_path: Path) -> Path:
    repo = new_repo(tmp_path / "rocket")
    for i in range(1, 6):
        (repo / f"f{i}.py").write_text("x = 1\n" * 50 * i)
        commit(repo, f"Change {i} (#{i})", f"2026-0{i}-10T10:00:00+00:00")
    return repo


def _shallow(full: Path, tmp_path: Path) -> Path:
    out = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{full}", str(out)],
        check=True, capture_output=True, env=git_env(), timeout=60,
    )  # fmt: skip
    return out


def test_a_shallow_clones_boundary_commit_is_left_out_with_a_warning(full: Path, tmp_path: Path) -> None:
    clone = _shallow(full, tmp_path)
    store = Store(tmp_path / "cache.db")
    for lang, words in (("en", "shallow"), ("zh", "浅克隆")):
        warnings = GitSource(clone, repo="acme/rocket", lang=lang).read_into(store, HALF_YEAR)
        assert len(warnings) == 1 and words in warnings[0] and "#4" in warnings[0]
    assert [pr.number for pr in store.prs_in_window("acme/rocket", HALF_YEAR)] == [5]
    # The clone does not hold what was merged before its boundary, nor the boundary's day, completely.
    gaps = coverage.missing(store, "acme/rocket", HALF_YEAR, HALF_YEAR.end)
    assert [(g.since, g.until) for g in gaps] == [(date(2026, 1, 1), date(2026, 4, 10))]
    store.close()


def test_a_full_clones_root_commit_is_read_like_any_other(full: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "cache.db")
    assert GitSource(full, repo="acme/rocket").read_into(store, HALF_YEAR) == []
    prs = store.prs_in_window("acme/rocket", HALF_YEAR)
    assert [pr.number for pr in prs] == [1, 2, 3, 4, 5]
    assert prs[0].additions == 50
    assert coverage.missing(store, "acme/rocket", HALF_YEAR, HALF_YEAR.end) == []
    store.close()


def test_no_week_before_a_full_clones_first_commit_is_compared(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "young")
    for day, number in ((9, 1), (16, 2), (17, 3)):  # first commit on Wednesday 2026-09-09
        (repo / f"f{number}.py").write_text(f"x = {number}\n")
        commit(repo, f"Change {number} (#{number})", f"2026-09-{day}T10:00:00+00:00")
    source = GitSource(repo, repo="acme/young")
    assert source.begins() == datetime(2026, 9, 9, 10, tzinfo=UTC)
    store = Store(tmp_path / "cache.db")
    week = Window(since=date(2026, 9, 14), until=date(2026, 9, 20), tz="UTC")
    now = datetime(2026, 9, 21, tzinfo=UTC)
    report = make_report(load_settings(env={}), store, source, week, use_llm=False, now=now)
    # The three weeks before the first commit's had no repository: none of them is a figure to compare
    # with, nor a bar of the chart; the week of the first commit is.
    assert report.stats.merged_prs == 2 and report.stats.trend["merged_prs"].previous == [1]
    first_week = (date(2026, 9, 7), False)
    assert [(p.since, p.current) for p in report.history] == [first_week, (week.since, True)]
    store.close()
