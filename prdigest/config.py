"""One frozen Settings object, layered: defaults < prdigest.toml < PRDIGEST_* env vars.

Secrets (tokens) come from env vars only; a config file that holds one is refused,
so that no secret ends up in a repository. An invalid file is reported with the
key and the line it stands on.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from prdigest.errors import ConfigError
from prdigest.models import Subscription, zone
from prdigest.redact import no_credentials, redact, secrets_of, use_secrets

# A URL setting: never one with credentials in it (user:password@, ?access_token=...).
Url = Annotated[str, AfterValidator(no_credentials)]

DEFAULT_DB = Path("~/.local/share/prdigest/prdigest.db")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StorageSettings(_Section):
    db: Path = Field(default=DEFAULT_DB, validate_default=True)

    @field_validator("db")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()


class ReportSettings(_Section):
    timezone: str = "Asia/Shanghai"
    language: Literal["zh", "en"] = "zh"
    key_pr_limit: int = Field(default=24, ge=1, le=200)
    key_importance_min: float = Field(default=5.0, ge=0, le=10)
    hot_file_min_prs: int = Field(default=3, ge=2)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            return zone(value).key
        except Exception as exc:  # UsageError from zone(): report it as a value error
            raise ValueError(str(exc)) from exc


class TagRule(_Section):
    """An extra tag: it applies when a changed path matches a glob or the title names a keyword."""

    paths: list[str] = []
    keywords: list[str] = []


class Taxonomy(_Section):
    tags: dict[str, TagRule] = {}
    core_paths: list[str] = []


class RepoSettings(_Section):
    name: str
    # A local clone to read instead of GitHub.
    git: Path | None = None
    taxonomy: Taxonomy = Taxonomy()

    @field_validator("name")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        if not REPO_NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not OWNER/NAME")
        return value


class AdminSettings(_Section):
    """Who may change subscriptions from chat: user ids per platform."""

    lark: list[str] = []
    slack: list[str] = []


class LarkSettings(_Section):
    """A Lark/Feishu app. The secret, verification token and encrypt key come from env vars only."""

    app_id: str | None = None
    app_secret: SecretStr | None = None
    verification_token: SecretStr | None = None
    encrypt_key: SecretStr | None = None
    # "ws": the long connection (no public URL needed); "http": events posted to the web app.
    mode: Literal["ws", "http"] = "ws"
    domain: Url = "https://open.feishu.cn"

    @property
    def enabled(self) -> bool:
        return bool(self.app_id and self.app_secret)


class SlackSettings(_Section):
    """A Slack app. Tokens and the signing secret come from env vars only."""

    bot_token: SecretStr | None = None
    app_token: SecretStr | None = None
    signing_secret: SecretStr | None = None
    # "socket": Socket Mode (no public URL needed); "http": events posted to the web app.
    mode: Literal["socket", "http"] = "socket"
    api_url: Url = "https://slack.com/api/"

    @property
    def enabled(self) -> bool:
        return self.bot_token is not None


class WebSettings(_Section):
    """The web app: HTTP event endpoints, /healthz and the report pages."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    # A report page answers 410 Gone this long after its report was made.
    page_ttl_days: int = Field(default=90, ge=1, le=3650)
    # "link": anyone with a page's link reads it; "signed": pages of private repositories need
    # a link signed for the chat it was posted to (PRDIGEST_WEB_SIGNING_KEY).
    page_access: Literal["link", "signed"] = "link"
    signing_key: SecretStr | None = None


class LogSettings(_Section):
    """The log of `prdigest serve` (PRDIGEST_LOG_LEVEL, PRDIGEST_LOG_FORMAT; --log-format wins)."""

    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["text", "json"] = "text"

    @field_validator("level", "format", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


class GithubSettings(_Section):
    url: Url = "https://api.github.com"
    token: SecretStr | None = None


# Setting -> env vars that set it, first one set wins. The generic OPENAI_* names come after
# the file's value (see llm_settings_from_env): a shell's OPENAI_BASE_URL must not override
# an endpoint chosen in prdigest.toml.
LLM_ENV_FIRST: dict[str, str] = {
    "base_url": "PRDIGEST_LLM_BASE_URL",
    "model": "PRDIGEST_LLM_MODEL",
    "api_key": "PRDIGEST_LLM_API_KEY",
}
LLM_ENV_LAST: dict[str, str] = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY"}


class LLMSettings(_Section):
    """The LLM endpoint (the `[llm]` table, then env vars); the LLM is on only when a model is named.

    Its key is a secret: from PRDIGEST_LLM_API_KEY, else OPENAI_API_KEY, never from a file.
    """

    model: str = Field(min_length=1)
    # None: the SDK's default endpoint (api.openai.com).
    base_url: Url | None = None
    # None: a placeholder is sent; vLLM, SGLang and Ollama accept any key.
    api_key: SecretStr | None = None
    # Seconds per attempt; a stuck call costs at most (max_retries + 1) * timeout.
    timeout: float = Field(default=60, gt=0, le=600)
    concurrency: int = Field(default=8, ge=1, le=64)
    input_budget_tokens: int = Field(default=6000, ge=1000, le=200_000)
    max_retries: int = Field(default=2, ge=0, le=5)
    # Input plus output tokens per calendar month (UTC) on this endpoint; then the rules analyse.
    monthly_token_budget: int | None = Field(default=None, ge=1)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{redact(repr(value))} is not an http(s) URL")
        return value.rstrip("/") if value else None


def llm_settings_from_env(env: Mapping[str, str], table: Mapping[str, Any] | None) -> LLMSettings | None:
    """The settings from the `[llm]` table and the environment; None when no model is named."""
    data = dict(table or {})
    if "api_key" in data:
        raise ConfigError(
            f"llm.api_key is a secret; set it with {LLM_ENV_FIRST['api_key']} instead of the config file"
        )
    for key, name in LLM_ENV_FIRST.items():
        if env.get(name):
            data[key] = env[name]
    for key, name in LLM_ENV_LAST.items():
        if not data.get(key) and env.get(name):
            data[key] = env[name]
    if not data.get("model"):
        return None
    try:
        return LLMSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            "; ".join(
                f"llm.{'.'.join(str(p) for p in err['loc'])}: "
                + (
                    "unknown key"
                    if err["type"] == "extra_forbidden"
                    else err["msg"].removeprefix("Value error, ")
                )
                for err in exc.errors()
            )
        ) from None


class Settings(_Section):
    # Factories, not instances: defaults such as the home folder are read when settings load.
    storage: StorageSettings = Field(default_factory=StorageSettings)
    report: ReportSettings = Field(default_factory=ReportSettings)
    github: GithubSettings = Field(default_factory=GithubSettings)
    repos: list[RepoSettings] = []
    admins: AdminSettings = Field(default_factory=AdminSettings)
    lark: LarkSettings = Field(default_factory=LarkSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    # Weekly reports set in the file; chat adds more (both land in the subscriptions table).
    subscriptions: list[Subscription] = []
    # The LLM engine: on only when a model is named ([llm] model, PRDIGEST_LLM_MODEL).
    llm: LLMSettings | None = None
    public_url: Url | None = None
    log: LogSettings = Field(default_factory=LogSettings)
    config_path: Path | None = None

    def repo(self, name: str) -> RepoSettings:
        """The settings of one repository; defaults when the file does not list it."""
        for repo in self.repos:
            if repo.name == name:
                return repo
        return RepoSettings(name=name)


REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")

# env var -> path in the settings tree
ENV_VARS: dict[str, tuple[str, ...]] = {
    "PRDIGEST_DB": ("storage", "db"),
    "PRDIGEST_GITHUB_URL": ("github", "url"),
    "PRDIGEST_LOG_LEVEL": ("log", "level"),
    "PRDIGEST_LOG_FORMAT": ("log", "format"),
    "PRDIGEST_PUBLIC_URL": ("public_url",),
    "PRDIGEST_LARK_APP_ID": ("lark", "app_id"),
    "PRDIGEST_LARK_DOMAIN": ("lark", "domain"),
    "PRDIGEST_LARK_MODE": ("lark", "mode"),
    "PRDIGEST_SLACK_API_URL": ("slack", "api_url"),
    "PRDIGEST_SLACK_MODE": ("slack", "mode"),
    "PRDIGEST_WEB_HOST": ("web", "host"),
    "PRDIGEST_WEB_PORT": ("web", "port"),
}
# Secrets: read from the environment only, first one set wins.
SECRET_ENV_VARS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("github", "token"): ("PRDIGEST_GITHUB_TOKEN", "GITHUB_TOKEN"),
    ("lark", "app_secret"): ("PRDIGEST_LARK_APP_SECRET",),
    ("lark", "verification_token"): ("PRDIGEST_LARK_VERIFICATION_TOKEN",),
    ("lark", "encrypt_key"): ("PRDIGEST_LARK_ENCRYPT_KEY",),
    ("slack", "bot_token"): ("PRDIGEST_SLACK_BOT_TOKEN",),
    ("slack", "app_token"): ("PRDIGEST_SLACK_APP_TOKEN",),
    ("slack", "signing_secret"): ("PRDIGEST_SLACK_SIGNING_SECRET",),
    ("web", "signing_key"): ("PRDIGEST_WEB_SIGNING_KEY",),
}


def load_settings(
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[tuple[str, ...], Any] | None = None,
) -> Settings:
    """Build the Settings: defaults, then the config file, then env vars, then CLI overrides."""
    env = os.environ if env is None else env
    path = Path(config) if config else (Path(env["PRDIGEST_CONFIG"]) if env.get("PRDIGEST_CONFIG") else None)
    data: dict[str, Any] = {}
    text = ""
    if path is not None:
        text, data = _read_toml(path)
        for secret in SECRET_ENV_VARS:
            if _get(data, secret) is not None:
                raise ConfigError(
                    f"{path}:{locate_key(text, secret)}: '{'.'.join(secret)}' is a secret; "
                    f"set it with {SECRET_ENV_VARS[secret][0]} instead of the config file"
                )
    for name, key in ENV_VARS.items():
        if env.get(name):
            _set(data, key, env[name])
    for key, names in SECRET_ENV_VARS.items():
        value = next((env[n] for n in names if env.get(n)), None)
        if value:
            _set(data, key, value)
    for key, value in (overrides or {}).items():
        if value is not None:
            _set(data, key, value)
    if path is not None:
        data["config_path"] = path
    try:
        data["llm"] = llm_settings_from_env(env, data.pop("llm", None))
    except ConfigError as exc:
        where = (
            f"{path}:{locate_key(text, ('llm', str(exc).split(':')[0].removeprefix('llm.')))}"
            if text
            else "settings"
        )
        raise ConfigError(f"{where}: {exc}") from None
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path, text)) from None
    use_secrets(secrets_of(settings))  # from now on masked in every output of the process
    return settings


def check_settings(settings: Settings) -> list[str]:
    """What valid settings still cannot do: subscriptions to unconfigured platforms, missing clones."""
    problems = []
    for i, sub in enumerate(settings.subscriptions):
        platform = getattr(settings, sub.platform, None)
        if platform is not None and not platform.enabled:
            problems.append(f"subscriptions.{i}: posts to {sub.platform}, which has no app configured")
        if (
            sub.source == "github"
            and not sub.git_path
            and settings.repo(sub.repo).git is None
            and not settings.github.token
        ):
            problems.append(f"subscriptions.{i}: {sub.repo} is read from GitHub, but no GitHub token is set")
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
    return problems


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


def _describe(exc: ValidationError, path: Path | None, text: str) -> str:
    """One line per error: file:line: key: what is wrong."""
    lines = []
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"])
        key = ".".join(loc) or "(top level)"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        origin = f"{path}:{locate_key(text, loc)}" if path is not None and text else "settings"
        if path is not None and text and not _in_file(text, loc):
            origin = "environment"
        lines.append(f"{origin}: {key}: {message}")
    return "\n".join(lines)


def _in_file(text: str, loc: tuple[str, ...]) -> bool:
    try:
        data: Any = tomllib.loads(text)
        for part in loc:
            data = data[int(part)] if isinstance(data, list) else data[part]
        return True
    except (KeyError, IndexError, ValueError, TypeError):
        return False


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def locate_key(text: str, loc: tuple[str, ...]) -> int:
    """The line number where a key of the settings tree is set (best effort; 1 when not found).

    tomllib keeps no positions, so this walks the file's table headers: ``[a.b]``,
    ``[[repos]]`` (counted, so ``repos.1.name`` finds the second entry) and ``key =``.
    """
    counts: dict[str, int] = {}
    table: tuple[str, ...] = ()
    best = 1
    best_depth = -1
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            names = [_unquote(p.strip()) for p in header.group(2).split(".")]
            if header.group(1) == "[[":
                counts[".".join(names)] = counts.get(".".join(names), -1) + 1
            # A table inside an array of tables belongs to that array's latest entry.
            parts: list[str] = []
            for i, name in enumerate(names):
                parts.append(name)
                prefix = ".".join(names[: i + 1])
                if prefix in counts:
                    parts.append(str(counts[prefix]))
            table = tuple(parts)
            depth = _prefix_depth(table, loc)
            if depth > best_depth:
                best, best_depth = number, depth
            continue
        assign = _ASSIGN.match(line)
        if assign:
            full = (*table, *_unquote(assign.group(1)).split("."))
            depth = _prefix_depth(full, loc)
            if depth > best_depth:
                best, best_depth = number, depth
    return best


def _prefix_depth(candidate: tuple[str, ...], loc: tuple[str, ...]) -> int:
    """How much of ``loc`` the candidate path covers; -1 when it leaves it."""
    if len(candidate) > len(loc) or tuple(loc[: len(candidate)]) != candidate:
        return -1
    return len(candidate)


def _unquote(part: str) -> str:
    return part[1:-1] if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'" else part


def _get(data: Mapping[str, Any], key: tuple[str, ...]) -> Any:
    for part in key:
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def _set(data: dict[str, Any], key: tuple[str, ...], value: Any) -> None:
    for part in key[:-1]:
        data = data.setdefault(part, {})
    data[key[-1]] = value
