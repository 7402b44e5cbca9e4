"""A chat's subscription: which repositories its weekly report covers, when it is posted, in which language,
and the filters and muted rules that shape it.

Here too, below everything that reads them, the registries of the names a subscription holds: the chat
platforms (`PLATFORMS`) and the kinds of source (`SOURCE_KINDS`). Each is open: a platform adapter or a
source defined elsewhere registers its name (`register_platform`, `register_source_kind`) before the
settings that name it are read, and a name no one registered is refused where it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from prdigest.errors import UsageError
from prdigest.models import Lang, Platform, Weekday
from prdigest.window import zone

# The chat platforms prdigest speaks to: name -> how a reply names it.
PLATFORMS: dict[Platform, str] = {"lark": "Lark", "slack": "Slack", "console": "The console"}


@dataclass(frozen=True)
class SourceKind:
    """A kind of source, as the rest of prdigest knows it (the source itself is sources/'s)."""

    kind: str  # the name PRs, reports and subscriptions hold: "git", "github", ...
    labels: Mapping[str, str]  # how a report names it, by language (the name itself where none is given)
    title: str  # how a settings problem names it
    # The settings table it reads (a token, when the table has one, must be set); None: no subscription
    # may name it (a fixture file, the cache).
    section: str | None = None


# The kinds prdigest's own sources are, declared here: a subscription naming one may be read (settings,
# the database) before any source is imported, and the settings sit below the sources.
SOURCE_KINDS: dict[str, SourceKind] = {
    kind.kind: kind
    for kind in (
        SourceKind("github", {"zh": "GitHub", "en": "github"}, "GitHub", "github"),
        SourceKind("git", {"zh": "本地克隆", "en": "git"}, "a local clone", "repos"),
        SourceKind("fixture", {"zh": "数据文件", "en": "fixture"}, "a fixture file"),
        SourceKind("cache", {"zh": "缓存", "en": "cache"}, "the cache"),  # a report from the cache alone
    )
}


def register_platform(name: str, title: str) -> None:
    """Make ``name`` a platform subscriptions may post to; ``title``: how a reply names it."""
    PLATFORMS[name] = title


def register_source_kind(kind: SourceKind) -> None:
    """Make ``kind`` known: to reports (its labels) and, with a settings table, to subscriptions."""
    SOURCE_KINDS[kind.kind] = kind


def source_label(kind: str, lang: str) -> str:
    """How a report in ``lang`` names the source ``kind`` (several joined by ", " are named as given)."""
    known = SOURCE_KINDS.get(kind)
    return known.labels.get(lang, kind) if known is not None else kind


def _known_platform(name: str) -> str:
    if name not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r}; prdigest speaks to {', '.join(PLATFORMS)}")
    return name


def _subscribable_source(kind: str) -> str:
    named = sorted(k for k, known in SOURCE_KINDS.items() if known.section is not None)
    if kind not in named:
        raise ValueError(f"unknown source {kind!r}; a subscription reads {', '.join(named)}")
    return kind


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def weekday(name: str) -> Weekday | None:
    """The weekday ``name`` stands for ("mon" .. "sun"), or None."""
    return next((day for day in WEEKDAYS if day == name), None)


class SubscriptionFilters(_Model):
    """Which merged PRs a report counts. Each list holds globs (paths) or names (labels, authors); a PR
    counts when it matches one of a list's plain entries (an empty list: any) and none of its "!" ones.
    ``base_branch``: the PRs merged into this branch (None: the repository's default branch)."""

    paths: list[str] = []
    labels: list[str] = []
    authors: list[str] = []
    base_branch: str | None = Field(default=None, min_length=1)

    @property
    def empty(self) -> bool:
        return not (self.paths or self.labels or self.authors or self.base_branch)


class Subscription(_Model):
    """A chat's weekly report of one repository, of several (``repos``) or of every repository of an
    ``owner`` (a team digest). Created from the config file or from chat by an admin.

    ``repo`` is the subscription's name and key: OWNER/NAME, the team's repositories joined by ",", or
    "org:OWNER"; it is derived from ``repos`` or ``owner`` when they are given."""

    id: int | None = None
    platform: Annotated[Platform, AfterValidator(_known_platform)]
    chat_id: str
    repo: str = ""
    repos: list[str] = []
    owner: str | None = None
    filters: SubscriptionFilters = SubscriptionFilters()
    # Risk labels (rules) this subscription's reports leave out: `mute RULE`.
    muted: list[str] = []
    source: Annotated[str, AfterValidator(_subscribable_source)] = "github"
    git_path: str | None = None
    day: Weekday = "mon"
    time: str = Field(default="09:30", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    tz: str = "Asia/Shanghai"
    lang: Lang = "zh"
    top_n: int = Field(default=10, ge=1, le=50)
    silent_when_empty: bool = False
    created_by: str = ""
    created_at: datetime | None = None

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            return zone(value).key
        except UsageError as exc:  # a validation error, so config files can name the key and line
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _one_target(self) -> Subscription:
        named = [bool(self.repos), self.owner is not None]
        if sum(named) > 1:
            raise ValueError("name either repos or owner, not both")
        if len(self.repos) == 1:  # one repository is not a team
            self.repo, self.repos = self.repos[0], []
        elif self.repos:
            self.repo = ",".join(self.repos)
        elif self.owner is not None:
            self.repo = f"org:{self.owner}"
        if not self.repo:
            raise ValueError("name a repository (repo), several (repos) or an owner")
        return self

    @property
    def is_team(self) -> bool:
        return bool(self.repos) or self.owner is not None
