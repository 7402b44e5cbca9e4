"""Prompt templates as data: ``NAME.LANG.toml`` files, each with a ``version`` and Jinja2 templates.

A missing variable is an error (StrictUndefined), not an empty string. Variables
are data, never template source, so PR text cannot inject template syntax.
The version is part of every analysis's cache key: change it when a template's
meaning changes, and the PRs are analysed again.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined, Template

_ENV = Environment(undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class Prompt:
    name: str
    lang: str
    version: str
    templates: dict[str, Template]

    def render(self, part: str, **variables: Any) -> str:
        return self.templates[part].render(**variables).strip()


@cache
def load_prompt(name: str, lang: str) -> Prompt:
    text = resources.files(__name__).joinpath(f"{name}.{lang}.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    version = str(data.pop("version"))
    return Prompt(name, lang, version, {part: _ENV.from_string(src) for part, src in data.items()})
