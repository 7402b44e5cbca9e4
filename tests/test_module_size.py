"""The shape later work keeps: no module of prdigest/ over 450 lines."""

from __future__ import annotations

from pathlib import Path

import prdigest

MAX_LINES = 450


def test_no_module_passes_450_lines() -> None:
    root = Path(prdigest.__file__).parent
    sizes = {p.relative_to(root): len(p.read_text(encoding="utf-8").splitlines()) for p in root.rglob("*.py")}
    assert len(sizes) > 50  # the package was found
    too_long = {str(path): n for path, n in sizes.items() if n > MAX_LINES}
    assert too_long == {}, f"split these modules by concern: {too_long}"
