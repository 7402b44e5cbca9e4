"""The settings model: one frozen tree of sections, the shape of prdigest.toml.

How it is filled (file, environment, secrets files) lives in prdigest.config and prdigest.config.env.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

# [github] and [storage] live in their own modules; named here with the other sections.
from prdigest.config.github import GithubSettings as GithubSettings
from prdigest.config.schedule import ScheduleSettings
from prdigest.config.storage_url import DEFAULT_DB as DEFAULT_DB
from prdigest.config.storage_url import StorageSettings as StorageSettings
from prdigest.config.workers import WorkerSettings as WorkerSettings
from prdigest.models import Lang, zone
from prdigest.redact import no_credentials, redact
from prdigest.subscription import Subscription, SubscriptionFilters

# A URL setting: never one with credentials in it (user:password@, ?access_token=...).
Url = Annotated[str, AfterValidator(no_credentials)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReportSettings(_Section):
    timezone: str = "Asia/Shanghai"
    language: Lang = "zh"
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
    # GitHub: the PRs merged into this branch (None: the repository's default branch); a clone's
    # report is its default branch's history.
    base_branch: str | None = Field(default=None, min_length=1)
    taxonomy: Taxonomy = Taxonomy()
    # Which PRs every report of this repository counts (a subscription's filters narrow them further).
    filters: SubscriptionFilters = SubscriptionFilters()
    # Words for the LLM's prompts about this repository (read as data, within the evidence budget).
    extra_instructions: str = Field(default="", max_length=4000)

    @field_validator("name")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        if not REPO_NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not OWNER/NAME")
        return value


# A GitHub login: letters, digits and single hyphens inside, at most 39 characters.
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}")
# A chat user's id as each platform writes it: only these ever reach a mention's markup, so a value that
# could close or add markup (`U1> <!channel`, `all`) is never one.
CHAT_USER_IDS = {
    "slack": re.compile(r"[UW][A-Z0-9]{2,}"),  # a user (U...) or an Enterprise Grid user (W...)
    "lark": re.compile(r"ou_[A-Za-z0-9]{2,64}"),  # an open_id
}


def chat_user_id(platform: str, value: object) -> str | None:
    """``value`` when it is a user id of ``platform`` as the platform writes it, else None."""
    pattern = CHAT_USER_IDS.get(platform)
    return value if isinstance(value, str) and pattern is not None and pattern.fullmatch(value) else None


class PersonSettings(_Section):
    """One person (``[[people]]``): their GitHub login, the emails a clone's commits by them carry, and
    their user ids in chat (else found by email), for the mentions of a nudge."""

    github: str
    email: list[str] = []
    slack: str | None = None  # a Slack user id, "U..." or "W..."
    lark: str | None = None  # a Lark open_id, "ou_..."

    @field_validator("email", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("github")
    @classmethod
    def _login(cls, value: str) -> str:
        if not _LOGIN.fullmatch(value):
            raise ValueError(f"{value!r} is not a GitHub login")
        return value

    @field_validator("email")
    @classmethod
    def _emails(cls, value: list[str]) -> list[str]:
        for email in value:
            if email.count("@") != 1 or " " in email.strip() or email.strip().startswith("@"):
                raise ValueError(f"{email!r} is not an email address")
        return [email.strip() for email in value]

    @field_validator("slack", "lark")
    @classmethod
    def _chat_id(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and chat_user_id(str(info.field_name), value) is None:
            shape = '"U..." or "W..."' if info.field_name == "slack" else 'an open_id, "ou_..."'
            raise ValueError(f"{value!r} is not a {str(info.field_name).title()} user id ({shape})")
        return value

    @model_validator(mode="after")
    def _reachable(self) -> PersonSettings:
        if not (self.email or self.slack or self.lark):
            raise ValueError("names no email, slack or lark id")
        return self


def _people(entries: list[Any]) -> tuple[list[Any], list[str]]:
    """The valid ``[[people]]`` entries, the first of each login (any capitals), and a line for each of
    the others: one bad entry costs its person's mentions, not the whole config."""
    kept: list[Any] = []
    skipped: list[str] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        login = entry.get("github") if isinstance(entry, dict) else getattr(entry, "github", None)
        where = f"people.{index}" + (f" (github {login!r})" if isinstance(login, str) and login else "")
        try:
            person = PersonSettings.model_validate(entry)
        except ValidationError as exc:
            skipped.append(f"{where}: skipped: {_why(exc)}")
            continue
        first = seen.setdefault(person.github.casefold(), index)
        if first == index:
            kept.append(person)
        else:
            skipped.append(f"{where}: skipped: people.{first} names the same GitHub login")
    return kept, skipped


def _why(exc: ValidationError) -> str:
    """A validation error in one line: each wrong key and what is wrong with it."""
    return "; ".join(
        (".".join(map(str, err["loc"])) + ": " if err["loc"] else "")
        + ("unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, "))
        for err in exc.errors()
    )


class AttentionSettings(_Section):
    """When an open PR needs attention (the report's "open PRs needing attention", GitHub only)."""

    review_wait_days: int = Field(default=7, ge=1, le=365)  # open this long without a review
    approved_wait_days: int = Field(default=3, ge=1, le=365)  # approved this long, not merged
    large_lines: int = Field(default=1000, ge=1)  # this many changed lines and no review yet
    limit: int = Field(default=10, ge=1, le=100)  # the most a report lists
    # The card's attention line and the thread mention the reviewers asked for (else the code owners) of
    # the PRs waiting for review, as the chat's users ([[people]]; else found by email).
    mention_reviewers: bool = False


class ChatSettings(_Section):
    """What chat may cost: a source that keeps a request budget (GitHub) reads at most ``max_sync_days``
    days for one command, the newest first, and at most ``github_points_per_hour`` points for one chat;
    the rest of a longer period comes from the cache."""

    max_sync_days: int = Field(default=35, ge=0, le=3660)
    # GitHub points (GraphQL cost, one a REST request) one chat's commands may spend in an hour.
    github_points_per_hour: int = Field(default=500, ge=0, le=1_000_000)


class AccessSettings(_Section):
    """Who sees which repository in chat. Closed (the default): a chat sees the repositories its
    subscriptions cover, a direct message those of the chats its user is in, an admin every one.
    ``open``: every chat sees every repository (a single team's install)."""

    open: bool = False


class AdminSettings(_Section):
    """Who may change subscriptions from chat: user ids per platform."""

    lark: list[str] = []
    slack: list[str] = []


class LarkSettings(_Section):
    """A Lark/Feishu app. The secret, verification token and encrypt key come from the environment."""

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
    """A Slack app. Tokens and the signing secret come from the environment."""

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


LOCAL_WORKERS, HOSTED_WORKERS = 2, 8
LOCAL_RETRIES, HOSTED_RETRIES = 0, 2


class OutputCaps(_Section):
    """The most each kind of request may generate (``[llm.max_output_tokens]``): a weak model that never
    closes its JSON stops here rather than at the timeout. Sized to what each answer's schema holds."""

    analyse_pr: int = Field(default=1200, ge=16)
    narrate: int = Field(default=3000, ge=16)
    followup: int = Field(default=1200, ge=16)
    ask: int = Field(default=1500, ge=16)
    route: int = Field(default=400, ge=16)

    def of(self, purpose: str) -> int:
        return int(getattr(self, purpose, self.narrate))


def is_local_url(url: str | None) -> bool:
    """A server on this machine or a private network: localhost, a loopback or private address."""
    host = urlsplit(url).hostname if url else None
    if host is None:
        return False
    if host == "localhost" or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


class LLMSettings(_Section):
    """The LLM endpoint (the `[llm]` table, then env vars); the LLM is on only when a model is named.

    Its key is a secret: from the environment (PRDIGEST_LLM__API_KEY, ..., OPENAI_API_KEY or their
    *_FILE), never from the config file.
    """

    model: str = Field(min_length=1)
    # None: the SDK's default endpoint (api.openai.com).
    base_url: Url | None = None
    # None: a placeholder is sent; vLLM, SGLang and Ollama accept any key.
    api_key: SecretStr | None = None
    # Seconds per attempt; a stuck call costs at most (max_retries + 1) * timeout.
    timeout: float = Field(default=60, gt=0, le=600)
    # Requests in flight; None: 2 for a server on this machine or a private network (one model shares
    # its context between them), 8 for a hosted one (see `workers`).
    concurrency: int | None = Field(default=None, ge=1, le=64)
    max_output_tokens: OutputCaps = Field(default_factory=OutputCaps)
    input_budget_tokens: int = Field(default=6000, ge=1000, le=200_000)
    # Stream the answers, ended once their JSON closes or the deadline passes (the server then stops
    # generating); None: for a server on this machine or a private network, whose time is the team's.
    stream: bool | None = None
    # The SDK's retries of a failed request; None: see `retries`.
    max_retries: int | None = Field(default=None, ge=0, le=5)
    # Input plus output tokens per calendar month (UTC) on this endpoint; then the rules analyse.
    monthly_token_budget: int | None = Field(default=None, ge=1)
    # Requests per minute to this endpoint and model from the whole deployment (analysis/llm/rate.py).
    requests_per_minute: int | None = Field(default=None, ge=1)
    # Prompt plus max_tokens per minute, counted the same way; None here and above: no limit.
    tokens_per_minute: int | None = Field(default=None, ge=1)
    # What one report may ask: requests (None: its PRs not yet analysed + 20) and prompt plus answer
    # tokens; past either the rules decide what is left, and the report says so.
    max_requests_per_report: int | None = Field(default=None, ge=1)
    max_tokens_per_report: int = Field(default=400_000, ge=1)

    @property
    def workers(self) -> int:
        if self.concurrency is not None:
            return self.concurrency
        return LOCAL_WORKERS if is_local_url(self.base_url) else HOSTED_WORKERS

    @property
    def streams(self) -> bool:
        return self.stream if self.stream is not None else is_local_url(self.base_url)

    @property
    def retries(self) -> int:
        """None set: no retry on a server on this machine or a private network (a request that timed out
        there is still generating, and a retry would queue behind it), 2 on a hosted one."""
        if self.max_retries is not None:
            return self.max_retries
        return LOCAL_RETRIES if is_local_url(self.base_url) else HOSTED_RETRIES

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{redact(repr(value))} is not an http(s) URL")
        return value.rstrip("/") if value else None


class Settings(_Section):
    # Factories, not instances: defaults such as the home folder are read when settings load.
    storage: StorageSettings = Field(default_factory=StorageSettings)
    report: ReportSettings = Field(default_factory=ReportSettings)
    github: GithubSettings = Field(default_factory=GithubSettings)
    repos: list[RepoSettings] = []
    people: list[PersonSettings] = []
    attention: AttentionSettings = Field(default_factory=AttentionSettings)
    admins: AdminSettings = Field(default_factory=AdminSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    lark: LarkSettings = Field(default_factory=LarkSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    # Weekly reports set in the file; chat adds more (both land in the subscriptions table).
    subscriptions: list[Subscription] = []
    # The LLM engine: on only when a model is named ([llm] model, PRDIGEST_LLM_MODEL).
    llm: LLMSettings | None = None
    public_url: Url | None = None
    log: LogSettings = Field(default_factory=LogSettings)
    config_path: Path | None = None
    # A line for each [[people]] entry left out, with why (config check and the startup log say them).
    _skipped_people: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _skip_bad_people(cls, data: Any, handler: ModelWrapValidatorHandler[Settings]) -> Settings:
        if not (isinstance(data, dict) and isinstance(data.get("people"), list)):
            return handler(data)
        people, skipped = _people(data["people"])
        settings = handler({**data, "people": people})
        settings._skipped_people = tuple(skipped)
        return settings

    @property
    def skipped_people(self) -> tuple[str, ...]:
        return self._skipped_people

    def repo(self, name: str) -> RepoSettings:
        """The settings of one repository, named in any capitals (GitHub's names ignore case); defaults
        when the file does not list it. Of two entries of one name the later wins: the repository's own
        file is layered into a later one (`config.repo_file`)."""
        key = name.casefold()
        return next((r for r in reversed(self.repos) if r.name.casefold() == key), RepoSettings(name=name))

    def logins(self) -> dict[str, str]:
        """The ``[[people]]`` logins by email (any capitals), for sources that know only emails."""
        return {email.casefold(): p.github for p in self.people for email in p.email}

    def repos_of(self, owner: str) -> list[str]:
        """The [[repos]] entries of ``owner`` (a user or organization; case does not matter)."""
        return [r.name for r in self.repos if r.name.split("/", 1)[0].lower() == owner.lower()]


# OWNER/NAME as GitHub spells it: the one pattern the settings, the CLI, the chat's commands and the LLM
# router's tools check a repository's name with.
REPO_PATTERN = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
# It in a text. A search never starts inside a run of name characters, nor takes one back: linear time.
REPO_NAME = re.compile(rf"(?<![A-Za-z0-9_.-])(?>{REPO_PATTERN})")
