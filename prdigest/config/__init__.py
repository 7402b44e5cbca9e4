"""One frozen Settings object, layered: defaults < prdigest.toml < environment < command line.

The config file is the one named (--config, PRDIGEST_CONFIG), else ./prdigest.toml, else
$XDG_CONFIG_HOME/prdigest/prdigest.toml. Every setting can also come from PRDIGEST_<TABLE>__<KEY>
(prdigest.config.env). Secrets (tokens) come from the environment only, or from files it names;
a config file that holds one is refused, so that no secret ends up in a repository. An invalid
value is reported with where it came from: the file and line, or the variable.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prdigest.config.env import apply_env, file_secret, get_key, set_key
from prdigest.config.locate import describe, locate_key
from prdigest.config.models import (
    DEFAULT_DB,
    REPO_NAME,
    AccessSettings,
    AdminSettings,
    ChatSettings,
    GithubSettings,
    LarkSettings,
    LLMSettings,
    LogSettings,
    ReportSettings,
    RepoSettings,
    Settings,
    SlackSettings,
    StorageSettings,
    TagRule,
    Taxonomy,
    WebSettings,
)
from prdigest.errors import ConfigError
from prdigest.redact import secrets_of, use_secrets
from prdigest.subscription import SOURCE_KINDS, Subscription

__all__ = [
    "DEFAULT_DB",
    "REPO_NAME",
    "AccessSettings",
    "AdminSettings",
    "ChatSettings",
    "GithubSettings",
    "LLMSettings",
    "LarkSettings",
    "LogSettings",
    "RepoSettings",
    "ReportSettings",
    "Settings",
    "SlackSettings",
    "StorageSettings",
    "TagRule",
    "Taxonomy",
    "WebSettings",
    "check_settings",
    "find_config",
    "llm_settings_from_env",
    "load_settings",
    "locate_key",
]

CONFIG_NAME = "prdigest.toml"

log = logging.getLogger("prdigest.config")


def load_settings(
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[tuple[str, ...], Any] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Build the Settings: defaults, then the config file, then the environment, then CLI overrides.

    ``cwd`` is where ./prdigest.toml is looked for (the working directory by default).
    """
    env = os.environ if env is None else env
    path = find_config(config, env, Path.cwd() if cwd is None else cwd)
    text, data = _read_toml(path) if path is not None else ("", {})
    settings = _layer(data, env, overrides or {}, path, text)
    use_secrets(secrets_of(settings))  # from now on masked in every output of the process
    for line in settings.skipped_people:  # the rest of the file holds: say what was left out, once
        log.warning("%s: %s", path or "settings", line)
    return settings


def find_config(config: str | Path | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The config file to read: the one named, else the first found of ./prdigest.toml and
    $XDG_CONFIG_HOME/prdigest/prdigest.toml (~/.config by default); None when there is none."""
    named = config or env.get("PRDIGEST_CONFIG")
    if named:
        return Path(named)  # missing: an error, not a silent fallback to defaults
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return next((p for p in (cwd / CONFIG_NAME, xdg / "prdigest" / CONFIG_NAME) if p.exists()), None)


def llm_settings_from_env(env: Mapping[str, str], table: Mapping[str, Any] | None) -> LLMSettings | None:
    """The settings of an `[llm]` table under the environment; None when no model is named."""
    return _layer({"llm": dict(table)} if table is not None else {}, env, {}, None, "").llm


def _layer(
    data: dict[str, Any],
    env: Mapping[str, str],
    overrides: Mapping[tuple[str, ...], Any],
    path: Path | None,
    text: str,
) -> Settings:
    """The Settings from a config file's tree (``data``, read from ``path``) and the layers above it."""
    secret = file_secret(data)
    if secret is not None:
        where = f"{path}:{locate_key(text, secret[0])}" if path is not None else "settings"
        raise ConfigError(f"{where}: {secret[1]}")
    origins = {key: f"environment {name}" for key, name in apply_env(data, env).items()}
    for key, value in overrides.items():
        if value is not None:
            set_key(data, key, value)
            origins[key] = "command line"
    if not get_key(data, ("llm", "model")) and isinstance(data.get("llm"), Mapping):
        data["llm"] = None  # the LLM is off until a model is named
    data["config_path"] = path
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe(exc, path, text, origins)) from None


def check_settings(settings: Settings) -> list[str]:
    """What valid settings still cannot do: subscriptions to unconfigured platforms, missing clones; and
    the [[people]] entries left out as malformed."""
    problems = list(settings.skipped_people)
    for i, sub in enumerate(settings.subscriptions):
        platform = getattr(settings, sub.platform, None)
        if platform is not None and not platform.enabled:
            problems.append(f"subscriptions.{i}: posts to {sub.platform}, which has no app configured")
        problems += [f"subscriptions.{i}: {problem}" for problem in _unreadable(settings, sub)]
    for i, repo in enumerate(settings.repos):
        if (
            repo.git is not None
            and not (repo.git.expanduser() / ".git").exists()
            and not repo.git.expanduser().is_dir()
        ):
            problems.append(f"repos.{i}.git: {repo.git} does not exist")
    if settings.lark.mode == "http" and settings.lark.enabled and not settings.lark.verification_token:
        problems.append("lark: HTTP mode needs PRDIGEST_LARK_VERIFICATION_TOKEN")
    if settings.slack.enabled and settings.slack.mode == "socket" and not settings.slack.app_token:
        problems.append("slack: Socket Mode needs PRDIGEST_SLACK_APP_TOKEN (xapp-…)")
    if settings.slack.enabled and settings.slack.mode == "http" and not settings.slack.signing_secret:
        problems.append("slack: HTTP mode needs PRDIGEST_SLACK_SIGNING_SECRET")
    if settings.web.page_access == "signed" and not settings.web.signing_key:
        problems.append('web: page_access = "signed" needs PRDIGEST_WEB_SIGNING_KEY')
    return problems


def _unreadable(settings: Settings, sub: Subscription) -> list[str]:
    """Why a subscription's repositories (each of a team's) could not be read: a name that is not
    OWNER/NAME or named twice, a source without its token (GitHub's), an owner with no repository known."""
    if sub.owner is not None:
        if settings.repos_of(sub.owner) or settings.github.authenticated:
            return []
        return [f"no repository of {sub.owner} is in [[repos]], and no GitHub token is set to list them"]
    problems = []
    seen: set[str] = set()
    for repo in sub.repos or [sub.repo]:
        if not REPO_NAME.fullmatch(repo):
            problems.append(f"{repo!r} is not OWNER/NAME")
        elif repo.lower() in seen:
            problems.append(f"{repo} is named twice")
        elif not (sub.git_path or settings.repo(repo).git) and _lacks_token(settings, sub.source):
            title = SOURCE_KINDS[sub.source].title
            problems.append(f"{repo} is read from {title}, but no {title} token is set")
        seen.add(repo.lower())
    return problems


def _lacks_token(settings: Settings, kind: str) -> bool:
    """Whether the source ``kind`` reads a settings table that signs in (a token, an App), and it cannot."""
    section = SOURCE_KINDS[kind].section
    table: Any = getattr(settings, section, None) if section is not None else None
    return hasattr(table, "authenticated") and not table.authenticated


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already ends with "(at line L, column C)".
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per level of nesting
        raise ConfigError(f"{path}: its arrays or tables nest too deeply") from None
