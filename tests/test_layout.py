"""The shape later work keeps: no import circle, a small root, a folder per family, modules under 450
lines, and each layer importing only the layers below it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from layout_graph import PACKAGE, import_circles, import_graph, longest_modules, prefix_families, root_modules

MAX_LINES = 450
MAX_ROOT_MODULES = 12

# Each layer may import only the layers below it: the modules at the package's root (the data passed
# around, errors, the clock, redaction) and config at the bottom, then sources and storage, then
# analysis and render, then handlers, then bot; the CLI on top.
LAYERS = {
    "config": 0, "fixtures": 0, "i18n": 1, "prompts": 1, "periods": 1, "storage": 2, "sources": 2,
    "analysis": 3, "pipeline": 4, "render": 4, "handlers": 5, "bot": 6, "cli": 7, "__main__": 7,
}  # fmt: skip
ROOT_LAYER = 0


def test_no_module_reaches_450_lines() -> None:
    sizes = longest_modules()
    assert len(sizes) > 50  # the package was found
    too_long = {path: n for path, n in sizes.items() if n >= MAX_LINES}
    assert too_long == {}, f"split these modules by concern: {too_long}"


def test_no_import_circle() -> None:
    graph = import_graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 200  # the imports were read
    assert import_circles(graph) == []


def test_the_root_holds_at_most_twelve_modules() -> None:
    assert 0 < len(root_modules()) <= MAX_ROOT_MODULES, root_modules()


def test_no_folder_holds_a_family_of_prefixed_modules() -> None:
    assert prefix_families() == {}  # three or more `x_*.py` in one folder: give them a folder `x/`


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "prdigest"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_lazy_import_back_up_is_a_circle_and_a_type_checking_one_is_not(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    models = copy / "models.py"
    text = models.read_text(encoding="utf-8")
    # models is imported by storage/db.py: an import of storage back from models closes a circle.
    lazy = "\n\ndef _later() -> None:\n    from prdigest.storage import db\n"
    models.write_text(text + lazy, encoding="utf-8")
    circles = import_circles(import_graph(copy))
    assert len(circles) == 1 and {"prdigest.models", "prdigest.storage.db"} <= set(circles[0])
    typed = "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from prdigest.storage import db\n"
    models.write_text(text + typed, encoding="utf-8")
    assert import_circles(import_graph(copy)) == []


def test_a_planted_family_and_a_crowded_root_are_found(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    for name in ("slack_a", "slack_b", "slack_c"):
        (copy / "bot" / f"{name}.py").write_text('"""x"""\n', encoding="utf-8")
    assert prefix_families(copy) == {"bot/slack_": 3}
    for k in range(MAX_ROOT_MODULES + 1 - len(root_modules(copy))):
        (copy / f"extra{k}.py").write_text('"""x"""\n', encoding="utf-8")
    assert len(root_modules(copy)) == MAX_ROOT_MODULES + 1


def test_every_folder_has_a_layer() -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert packages | {"__main__"} == set(LAYERS)  # a folder without a layer escapes the check below


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "prdigest" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1], ROOT_LAYER if (PACKAGE / f"{parts[1]}.py").exists() else None)


@pytest.mark.parametrize("module", ["prdigest.models", "prdigest.bot.lark.client", "prdigest.cli"])
def test_every_module_has_a_layer(module: str) -> None:
    assert _layer(module) is not None


def test_no_lower_layer_imports_a_higher_one() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if (_layer(target) or 0) > (_layer(module) or 0)
    ]
    assert upward == []
