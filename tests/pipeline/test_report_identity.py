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
    "demo-zh": "427bb5317b6a181180ea91dc7614791257cfe490d230da56bfe6374fad6ecc94",
    "demo-en": "6fd471c0be3a8cbee5ec8f372651ccf3c5512b195e1c8d144e6208f39c142ba8",
    "2000-zh": "42edee24fe6ac07922f66949469722e1257fbc0158e1e5211d13ba462cefc0f9",
    "2000-en": "0085b1100cf37578a31cfe32e9510834e7ddd5297666532ba28672b69d600fc4",
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
