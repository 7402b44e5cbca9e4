"""A period from the first day a window may hold (1970-01-01) is reported: no earlier period is compared
or charted before that day."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from conftest import commit, new_repo

from prdigest.analysis.history import chart_periods, trend_periods
from prdigest.config import load_settings
from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store
from prdigest.window import FIRST_DAY

NOW = datetime(2026, 12, 2, 10, tzinfo=UTC)


def test_the_1970_to_2026_report_of_a_clone_has_no_period_before_1970(tmp_path: Path) -> None:
    clone = new_repo(tmp_path / "rocket")
    for i in range(1, 4):
        (clone / f"f{i}.py").write_text(f"x = {i}\n")
        commit(clone, f"Change {i} (#{i})", f"2026-0{i}-10T10:00:00+00:00")
    store = Store(tmp_path / "cache.db")
    window = Window(since=FIRST_DAY, until=date(2026, 12, 31), tz="UTC")
    report = make_report(load_settings(env={}), store, GitSource(clone), window, use_llm=False, now=NOW)
    assert report.stats.merged_prs == 3
    assert all(period.since >= FIRST_DAY for period in report.history)
    store.close()


def test_earlier_periods_stop_at_the_first_day() -> None:
    week = Window(since=FIRST_DAY + timedelta(days=14), until=FIRST_DAY + timedelta(days=20), tz="UTC")
    assert [p.since for p in trend_periods(week)] == [FIRST_DAY, FIRST_DAY + timedelta(days=7)]
    unit, charted = chart_periods(week)
    assert unit == "week" and charted[0][0].since == FIRST_DAY and len(charted) == 3
    for since in (FIRST_DAY, date(1970, 3, 1)):  # a long window charts by month, from January 1970
        long = Window(since=since, until=date(2026, 12, 31), tz="UTC")
        assert trend_periods(long) == []
        assert chart_periods(long)[1][0][0].since == FIRST_DAY
    whole = Window(since=FIRST_DAY, until=date(9998, 12, 31), tz="UTC")  # no overflow reaching back
    assert trend_periods(whole) == []
