"""A chat's subscription: which repositories its weekly report covers, when it is posted, in which language,
and the filters and muted rules that shape it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prdigest.errors import UsageError
from prdigest.models import Lang, Platform, Weekday
from prdigest.window import zone


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
    platform: Platform
    chat_id: str
    repo: str = ""
    repos: list[str] = []
    owner: str | None = None
    filters: SubscriptionFilters = SubscriptionFilters()
    # Risk labels (rules) this subscription's reports leave out: `mute RULE`.
    muted: list[str] = []
    source: Literal["github", "git"] = "github"
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
