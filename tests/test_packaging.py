"""The wheel carries the package data the demo and the renderers need."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.e2e  # a wheel built from the tree
def test_wheel_ships_package_data(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("prdigest-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "prdigest/fixtures/demo_week.json" in names
    assert "prdigest/storage/migrations.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "prdigest = prdigest.cli:main" in text
    assert not any(n.startswith(("tests/", "bench/")) for n in names)
