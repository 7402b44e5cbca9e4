"""The layout of prdigest/ in figures, as name=value lines: import circles (lazy imports count,
TYPE_CHECKING blocks do not), modules at the package root, name-prefix families of three or more
modules in one folder, and the longest module.

    .venv/bin/python bench/layout_figures.py [-v]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the graph is read by the layout tests' helper

from layout_graph import (  # noqa: E402
    import_circles,
    import_graph,
    longest_modules,
    prefix_families,
    root_modules,
)


def main() -> None:
    circles = import_circles(import_graph())
    families = prefix_families()
    sizes = longest_modules()
    longest = max(sizes, key=lambda name: sizes[name])
    print(f"import_circles={len(circles)}")
    print(f"modules_in_circles={sum(len(c) for c in circles)}")
    print(f"root_modules={len(root_modules())}")
    print(f"prefix_families={len(families)}")
    print(f"longest_module_lines={sizes[longest]}")
    if "-v" in sys.argv[1:]:
        for circle in circles:
            print("circle:", " ".join(circle))
        print("root:", " ".join(root_modules()))
        for name, n in families.items():
            print(f"family: {name} x{n}")
        print("longest:", longest)


if __name__ == "__main__":
    main()
