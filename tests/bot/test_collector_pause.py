"""Reports are built with the cyclic garbage collector paused, and it resumes after the last build."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from prdigest.config import load_settings
from prdigest.pipeline.single import _CollectorPause, make_report
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_nested_and_concurrent_builds_share_one_pause() -> None:
    pause = _CollectorPause()
    inside, release = threading.Event(), threading.Event()

    def other_build() -> None:
        with pause:
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other_build, daemon=True)
    with pause:
        assert not gc.isenabled()
        thread.start()
        assert inside.wait(5)
        with pause:
            assert not gc.isenabled()
    assert not gc.isenabled()  # the other build still runs
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    with _CollectorPause():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_make_report_pauses_the_collector_and_resumes_it(tmp_path, monkeypatch) -> None:
    seen: list[bool] = []
    import prdigest.pipeline.single as pipeline

    build = pipeline.build_report

    def spying(*args, **kwargs):
        seen.append(gc.isenabled())
        return build(*args, **kwargs)

    monkeypatch.setattr(pipeline, "build_report", spying)
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    store = Store(tmp_path / "c.db")
    try:
        report = make_report(load_settings(None), store, source, source.window, use_llm=False)
    finally:
        store.close()
    assert report.stats.merged_prs > 0
    assert seen == [False] and gc.isenabled()
