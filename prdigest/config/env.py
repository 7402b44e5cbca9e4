"""The environment layer of the settings: every setting from PRDIGEST_<TABLE>__<KEY>, every secret
also from <VAR>_FILE (Docker and Kubernetes secrets), the names prdigest has always read as aliases.

The names are derived from the Settings model, so a new setting can be set from the environment
without touching this module.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr

from prdigest.config.models import Settings
from prdigest.errors import ConfigError

PREFIX = "PRDIGEST_"
# Where the settings were read from: reported, not set.
NOT_SETTINGS = {("config_path",)}

# The names prdigest read before PRDIGEST_<TABLE>__<KEY>, still read. When a new name and an alias
# are both set, the new name wins: it is the one the documentation teaches, so it is the one an
# operator changes; among aliases, the first set wins.
ENV_ALIASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("storage", "db"): ("PRDIGEST_DB",),
    ("github", "url"): ("PRDIGEST_GITHUB_URL",),
    ("github", "token"): ("PRDIGEST_GITHUB_TOKEN", "GITHUB_TOKEN"),
    ("log", "level"): ("PRDIGEST_LOG_LEVEL",),
    ("log", "format"): ("PRDIGEST_LOG_FORMAT",),
    ("lark", "app_id"): ("PRDIGEST_LARK_APP_ID",),
    ("lark", "app_secret"): ("PRDIGEST_LARK_APP_SECRET",),
    ("lark", "verification_token"): ("PRDIGEST_LARK_VERIFICATION_TOKEN",),
    ("lark", "encrypt_key"): ("PRDIGEST_LARK_ENCRYPT_KEY",),
    ("lark", "domain"): ("PRDIGEST_LARK_DOMAIN",),
    ("lark", "mode"): ("PRDIGEST_LARK_MODE",),
    ("slack", "bot_token"): ("PRDIGEST_SLACK_BOT_TOKEN",),
    ("slack", "app_token"): ("PRDIGEST_SLACK_APP_TOKEN",),
    ("slack", "signing_secret"): ("PRDIGEST_SLACK_SIGNING_SECRET",),
    ("slack", "api_url"): ("PRDIGEST_SLACK_API_URL",),
    ("slack", "mode"): ("PRDIGEST_SLACK_MODE",),
    ("web", "host"): ("PRDIGEST_WEB_HOST",),
    ("web", "port"): ("PRDIGEST_WEB_PORT",),
    ("web", "signing_key"): ("PRDIGEST_WEB_SIGNING_KEY",),
    ("llm", "model"): ("PRDIGEST_LLM_MODEL",),
    ("llm", "base_url"): ("PRDIGEST_LLM_BASE_URL",),
    ("llm", "api_key"): ("PRDIGEST_LLM_API_KEY",),
}
# Generic names other tools read too: they count only when neither the config file nor a prdigest
# name set the value, so that a shell's OPENAI_BASE_URL does not override the endpoint of prdigest.toml.
ENV_FALLBACKS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("llm", "base_url"): ("OPENAI_BASE_URL",),
    ("llm", "api_key"): ("OPENAI_API_KEY",),
}


@dataclass(frozen=True)
class EnvSetting:
    """One leaf of the settings tree, as the environment sets it."""

    path: tuple[str, ...]
    secret: bool
    # A list or a table: JSON in the environment.
    structured: bool

    @property
    def name(self) -> str:
        return PREFIX + "__".join(part.upper() for part in self.path)

    @property
    def names(self) -> tuple[str, ...]:
        """Its variables, the first one set wins."""
        return (self.name, *ENV_ALIASES.get(self.path, ()))

    def hint(self) -> str:
        """Where a secret goes instead of the config file, the name operators know best first."""
        names = " or ".join(dict.fromkeys((*ENV_ALIASES.get(self.path, ())[:1], self.name)))
        return f"set it with {names}, or name a file holding it with {self.name}_FILE,"


@cache
def env_settings(model: type[BaseModel] = Settings, parent: tuple[str, ...] = ()) -> tuple[EnvSetting, ...]:
    """Every leaf setting of ``model``; sections (optional ones included) are walked into."""
    found: list[EnvSetting] = []
    for name, field in model.model_fields.items():
        path = (*parent, name)
        if path in NOT_SETTINGS:
            continue
        taken = kinds(field.annotation)
        if len(taken) == 1 and _is_model(taken[0]):
            found += env_settings(taken[0], path)
        else:
            structured = any(_is_model(k) or get_origin(k) in (list, dict) for k in taken)
            found.append(EnvSetting(path, secret=SecretStr in taken, structured=structured))
    return tuple(found)


def file_secret(data: Mapping[str, Any]) -> tuple[tuple[str, ...], str] | None:
    """The first secret a config file's tree sets, and what to do instead; None when it sets none."""
    for setting in env_settings():
        if setting.secret and get_key(data, setting.path) is not None:
            key = ".".join(setting.path)
            return setting.path, f"{key} is a secret; {setting.hint()} instead of the config file"
    return None


def apply_env(data: dict[str, Any], environ: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """Set the settings tree ``data`` from the environment; returns which variable set each path."""
    env = _fold(environ)
    settings = env_settings()
    _refuse_unknown(env, settings)
    origins: dict[tuple[str, ...], str] = {}
    names = {s.name for s in settings}
    for setting in settings:
        # A secret whose <VAR>_FILE names a setting of its own ([github] private_key_file) leaves the
        # file to that setting: one variable, one meaning.
        files = setting.secret and setting.name + "_FILE" not in names
        found = _lookup(env, setting.names, files)
        if found is None and not get_key(data, setting.path):
            found = _lookup(env, ENV_FALLBACKS.get(setting.path, ()), files)
        if found is not None:
            name, value = found
            set_key(data, setting.path, _parse(name, value) if setting.structured else value)
            origins[setting.path] = name
    return origins


def get_key(data: Mapping[str, Any], key: tuple[str, ...]) -> Any:
    for part in key:
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def set_key(data: dict[str, Any], key: tuple[str, ...], value: Any) -> None:
    for part in key[:-1]:
        data = data.setdefault(part, {})
    data[key[-1]] = value


def kinds(annotation: Any) -> list[Any]:
    """The types a field takes, None and Annotated metadata left out."""
    if get_origin(annotation) is Annotated:
        return kinds(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return [k for arg in get_args(annotation) if arg is not type(None) for k in kinds(arg)]
    return [annotation]


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _fold(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment with PRDIGEST_<TABLE>__<KEY> names in capitals: their keys match in any case."""
    env: dict[str, str] = {}
    for name, value in environ.items():
        upper = name.upper()
        if upper.startswith(PREFIX) and "__" in upper:
            if upper in env:
                raise ConfigError(f"environment {name}: set twice, in different cases; keep one")
            env[upper] = value
        else:
            env[name] = value
    return env


def _refuse_unknown(env: Mapping[str, str], settings: tuple[EnvSetting, ...]) -> None:
    """A PRDIGEST_<TABLE>__<KEY> name no setting has: a typo, which must not pass unnoticed."""
    known = {s.name for s in settings} | {s.name + "_FILE" for s in settings if s.secret}
    tables: dict[str, list[str]] = {}
    for s in settings:
        if len(s.path) > 1:
            tables.setdefault(s.path[0], []).append(".".join(s.path[1:]))
    for name in env:
        table, nested, key = name.removeprefix(PREFIX).partition("__")
        if name.startswith(PREFIX) and nested and table.lower() in tables and name not in known:
            raise ConfigError(
                f"environment {name}: [{table.lower()}] has no setting {key.lower()!r} "
                f"(it has {', '.join(tables[table.lower()])}; *_FILE is for secrets only)"
            )


def _lookup(env: Mapping[str, str], names: tuple[str, ...], files: bool) -> tuple[str, str] | None:
    """(variable, value) of the first of ``names`` set; with ``files``, from its <VAR>_FILE if so named."""
    if files:
        for name in names:
            if env.get(name) and env.get(name + "_FILE"):
                raise ConfigError(f"environment {name}_FILE: {name} is set too; set one of the two")
    for name in names:
        if env.get(name):
            return name, env[name]
        if files and env.get(name + "_FILE"):
            return name + "_FILE", _read_secret(name + "_FILE", env[name + "_FILE"])
    return None


def _read_secret(name: str, file: str) -> str:
    """A secret file's text without its trailing newline (as `echo` and `kubectl create secret` leave it)."""
    try:
        secret = Path(file).expanduser().read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(f"environment {name}: cannot read {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"environment {name}: {file} is not UTF-8 text") from None
    if not secret:
        raise ConfigError(f"environment {name}: {file} is empty")
    return secret


def _parse(name: str, value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f'environment {name}: lists and tables are given as JSON (e.g. ["a", "b"]), not {value!r}: {exc}'
        ) from None
