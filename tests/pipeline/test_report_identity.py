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
    "demo-zh": "1de79f674ba69bed6d910b7c9736880b31463c9f19d72a6b636f07d265979e69",
    "demo-en": "05c57372542a9b2df09997ac9add783db10f335bede7da2a5ae4f0ed51578e1a",
    "2000-zh": "3b2756165a34fa7760fdf987864b2bead056f653e21b740ffeb65cae4caf21b8",
    "2000-en": "8f6c99bf9cad09e7e2d49b00c2719d0de0ab7c51f08971764e0098df935c6273",
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
