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


# Each layer may import only the layers below it: models and config at the bottom, then sources and
# storage, then analysis and render, then handlers, then bot; the CLI on top.
LAYERS = {
    "models": 0, "config": 0, "errors": 0, "redact": 0, "path_kinds": 0, "danger": 0, "i18n": 1,
    "prompts": 1, "periods": 1, "storage": 2, "sources": 2, "analysis": 3, "pipeline": 4, "render": 4,
    "handlers": 5, "bot": 6, "logs": 6, "cli": 7, "fixtures": 0, "config_models": 0, "config_env": 0,
    "config_locate": 0, "window": 0, "model_base": 0, "progress": 0, "metrics": 0, "cli_ops": 7,
    "cli_support": 7, "terminal_progress": 7, "pipeline_team": 4, "repo_config": 0, "subscription": 0,
    "clock": 0,
}  # fmt: skip


def test_every_module_has_a_layer() -> None:
    root = Path(prdigest.__file__).parent
    modules = {path.stem for path in root.glob("*.py")} - {"__init__", "__main__"}
    packages = {path.name for path in root.iterdir() if (path / "__init__.py").exists()}
    assert (modules | packages) - set(LAYERS) == set()  # a module without a layer escapes the check above


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 and parts[0] == "prdigest" else None


def test_no_lower_layer_imports_a_higher_one() -> None:
    import ast

    root = Path(prdigest.__file__).parent
    upward = []
    for path in root.rglob("*.py"):
        own = _layer("prdigest." + ".".join(path.relative_to(root).with_suffix("").parts))
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                theirs = _layer(name)
                if theirs is not None and theirs > own:
                    upward.append(f"{path.relative_to(root)} imports {name}")
    assert upward == []
