"""Reading ahead: a clone starts the walks of the windows a report reads next, the first at once and each
next one as the walks before it end, and a read of one of them takes its walk instead of starting another;
what no read took is ended when the block ends. On the six-week clone of test_trend (W32..W37)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from test_trend import NOW, REPO, WEEK, build_clone, utc_settings

from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

W32 = Window(since="2026-08-03", until="2026-08-09", tz="UTC")
W33_36 = Window(since="2026-08-10", until="2026-09-06", tz="UTC")
# Each walk reads from two days before its window.
SINCE_W32, SINCE_W33_36 = "--since=2026-08-01T00:00:00+00:00", "--since=2026-08-08T00:00:00+00:00"
SINCE_WEEK = "--since=2026-09-05T00:00:00+00:00"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_clone(tmp_path_factory.mktemp("ahead") / "app")


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every walk (`git log` over a window) started, in order."""
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def recording(cmd, *args, **kwargs):  # type: ignore[no-untyped-def]
        proc = popen(cmd, *args, **kwargs)
        if "--diff-merges=first-parent" in cmd:  # a walk, not a one-off `git log`
            started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", recording)
    return started


def _since(proc: subprocess.Popen[bytes]) -> str:
    return next(str(a) for a in proc.args if str(a).startswith("--since="))  # type: ignore[union-attr]


def test_a_read_takes_the_walk_started_ahead_and_one_not_taken_is_ended(
    clone: Path, walks: list[subprocess.Popen[bytes]]
) -> None:
    source = GitSource(clone, repo=REPO)
    whole, counted = source.fetch(W33_36), list(source.read_for_counts(W32))
    walks.clear()
    threads = set(threading.enumerate())
    with source.reading_ahead([W33_36, WEEK], [W32]):
        assert _since(walks[0]) == SINCE_W33_36  # the first at once
        assert source.fetch(W33_36) == whole  # its walk, taken; WEEK's started as it ended
        assert [_since(p) for p in walks][:2] == [SINCE_W33_36, SINCE_WEEK]
        assert list(source.read_for_counts(W32)) == counted
        assert len(walks) == 3  # W32's, started as it asked: no walk started twice
    assert all(proc.poll() is not None for proc in walks)  # WEEK's, never read, ended with the block
    assert set(threading.enumerate()) - threads == set()  # and their pumps
    source.fetch(WEEK)  # outside the block: walked anew
    assert len(walks) == 4


def test_a_cold_report_walks_the_earlier_weeks_while_it_analyses_its_own(
    clone: Path, tmp_path: Path, walks: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    upsert = Store.upsert_prs

    def recording(self, prs, each_batch=None):  # type: ignore[no-untyped-def]
        def analysed(batch):  # type: ignore[no-untyped-def]
            events.append(" ".join(_since(p) for p in walks))  # the walks started by then
            return each_batch(batch)

        return upsert(self, prs, analysed if each_batch else None)

    monkeypatch.setattr(Store, "upsert_prs", recording)
    store = Store(tmp_path / "cache.db")
    try:
        make_report(utc_settings(), store, GitSource(clone, repo=REPO), WEEK, lang="en", save=False, now=NOW)
    finally:
        store.close()
    commands = [tuple(map(str, proc.args)) for proc in walks]  # type: ignore[arg-type]
    assert len(commands) == len(set(commands)) == 3  # each walk once: the week's, W33..W36's, W32's
    # W33..W36 whole, started ahead at once; then the week, as its read asks, and W32, counted, as
    # W33..W36's walk ends (which comes first is git's pace).
    sinces = [_since(p) for p in walks]
    assert sinces[0] == SINCE_W33_36 and sorted(sinces[1:]) == [SINCE_W32, SINCE_WEEK]
    # W33..W36's walk was under way while the week's PRs were analysed (the first batch analysed).
    assert {SINCE_W33_36, SINCE_WEEK} <= set(events[0].split())
