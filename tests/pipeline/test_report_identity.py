"""Speed work must not change a report by one byte: the demo week and a 2,000-PR week, against digests
of the reports prdigest produced before that work.

A change that means to alter reports updates the digests:
`python tests/pipeline/test_report_identity.py` prints them (and what each report is).
"""

from __future__ import annotations

import hashlib
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthetic_history import build

from prdigest.config import load_settings
from prdigest.models import Report, Window
from prdigest.pipeline.single import make_report
from prdigest.render.markdown import render_markdown
from prdigest.sources.base import Source
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

SHANGHAI = ZoneInfo("Asia/Shanghai")
MILES_WEEK = Path(__file__).resolve().parents[3] / "shared" / "data" / "radixark__miles__2026-08-10.json"
BIG_WEEK = Window(since="2026-08-10", until="2026-08-16", tz="Asia/Shanghai")

# sha256 of (the JSON contract without its generation time) + the Markdown, per report.
DIGESTS = {
    "demo-zh": "435475634e3294abcfe0238b7a59a754f0416cf1c01c085ce6e79cfc01122bc6",
    "demo-en": "6a4f348a0d50269e86fedb5a49aa3dc2303cdc40bfd7931263fd02df0b77e75b",
    "2000-zh": "6899548db2c87ad2a29c480284619b853f96fd3a80dd1f8a6b0c1a41e6df01e8",
    "2000-en": "7d497dd722a06df1c6cde2ae3fa9ccd4c544db43a4f5f59c3dc3dc360a9b6cba",
}


def digest(report: Report) -> str:
    contract = report.model_dump_json(exclude={"generated_at"})
    return hashlib.sha256((contract + "\n" + render_markdown(report)).encode()).hexdigest()


def reports(source: Source, window: Window, db: Path, name: str) -> dict[str, str]:
    """Both languages' reports from one cache, as a reader of the CLI gets them (rules engine)."""
    settings = load_settings(None)
    store = Store(db)
    try:
        return {
            f"{name}-{lang}": digest(make_report(settings, store, source, window, lang=lang, use_llm=False))
            for lang in ("zh", "en")
        }
    finally:
        store.close()


def demo_digests(tmp: Path) -> dict[str, str]:
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    return reports(source, source.window, tmp / "demo.db", "demo")


def big_digests(tmp: Path) -> dict[str, str]:
    start = datetime(2026, 8, 10, 0, 30, tzinfo=SHANGHAI)
    end = datetime(2026, 8, 16, 23, 30, tzinfo=SHANGHAI)
    repo = build(MILES_WEEK, tmp / "big", 2000, start, end)
    return reports(GitSource(repo, repo="bench/big"), BIG_WEEK, tmp / "big.db", "2000")


def test_demo_week_reports_unchanged(tmp_path: Path) -> None:
    got = demo_digests(tmp_path)
    assert got == {k: v for k, v in DIGESTS.items() if k.startswith("demo")}


@pytest.mark.e2e
@pytest.mark.timeout(300)
@pytest.mark.skipif(not MILES_WEEK.exists(), reason="needs ../shared/data")
def test_2000_pr_week_reports_unchanged(tmp_path: Path) -> None:
    got = big_digests(tmp_path)
    assert got == {k: v for k, v in DIGESTS.items() if k.startswith("2000")}


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as name:
        for key, value in {**demo_digests(Path(name)), **big_digests(Path(name))}.items():
            print(f'    "{key}": "{value}",')
