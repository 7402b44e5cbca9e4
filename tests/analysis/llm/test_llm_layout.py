"""The LLM package's shape: openai touched in one module, small modules, no import back up from config."""

from __future__ import annotations

import ast
from pathlib import Path

import prdigest

ROOT = Path(prdigest.__file__).parent
LLM = ROOT / "analysis" / "llm"


def imported(path: Path) -> set[str]:
    """The modules ``path`` imports, at any depth (imports inside functions included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_openai_is_imported_by_the_client_alone() -> None:
    users = {
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*.py")
        if any(name == "openai" or name.startswith("openai.") for name in imported(path))
    }
    assert users == {"analysis/llm/client.py"}


def test_every_module_of_the_llm_package_is_under_400_lines() -> None:
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in LLM.glob("*.py")}
    assert {"client.py", "schemas.py", "safety.py", "evidence.py", "engine.py"} <= set(sizes)
    assert max(sizes.values()) < 400, sizes


def test_secret_patterns_live_in_one_module_and_config_imports_no_analysis() -> None:
    assert not any(name.startswith("prdigest.analysis") for name in imported(ROOT / "config" / "__init__.py"))
    copies = [
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*.py")
        if "xox[" in path.read_text(encoding="utf-8")  # a Slack token pattern
    ]
    assert copies == ["redact.py"]
