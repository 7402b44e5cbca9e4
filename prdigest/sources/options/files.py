"""The keys a repository's config files define (YAML, TOML, JSON), read as data: ``yaml.safe_load``,
bounded in size, depth and count; a file that does not parse exposes nothing."""

from __future__ import annotations

import json
import tomllib
from typing import Any

MAX_CHARS = 200_000
MAX_DEPTH = 6  # keys nested deeper are read as the table that holds them
MAX_KEYS = 2_000
CONFIG_SUFFIXES = (".yaml", ".yml", ".toml", ".json")
# Files of tools, not of the project's users: their keys are not the project's options.
NOT_OPTIONS = ("pyproject.toml", "package.json", "package-lock.json", "tsconfig.json", "codecov.yml",
               "mkdocs.yml", "environment.yml", "Cargo.toml")  # fmt: skip


def is_config_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(CONFIG_SUFFIXES) and name not in NOT_OPTIONS and not name.startswith(".")


def file_keys(path: str, text: str) -> dict[str, str]:
    """``key:<path>:a.b.c`` keys and their values as written (tables: "")."""
    if len(text) > MAX_CHARS:
        return {}
    data = _load(path, text)
    out: dict[str, str] = {}
    if isinstance(data, dict):
        _flatten(data, "", 1, out, path)
    return out


def _load(path: str, text: str) -> Any:
    try:
        if path.endswith(".toml"):
            return tomllib.loads(text)
        if path.endswith(".json"):
            return json.loads(text)
        import yaml  # only a repository with YAML files pays for it

        return yaml.safe_load(text)
    except Exception:
        return None


def _flatten(data: dict[Any, Any], prefix: str, depth: int, out: dict[str, str], path: str) -> None:
    for key, value in data.items():
        if len(out) >= MAX_KEYS:
            return
        name = f"{prefix}{key}"
        if isinstance(value, dict) and depth < MAX_DEPTH:
            out[f"key:{path}:{name}"] = ""
            _flatten(value, f"{name}.", depth + 1, out, path)
        else:
            out[f"key:{path}:{name}"] = "" if isinstance(value, dict | list) else _scalar(value)


def _scalar(value: Any) -> str:
    written = json.dumps(value, ensure_ascii=False, default=str)
    return written if len(written) <= 80 else written[:77] + "..."
