"""The arguments of the LLM router's tools: one model per kind of command, validated before the model's
call is taken (a command names its model in the registry, `CommandSpec.tool`)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prdigest.config.models import REPO_PATTERN

REPO = rf"^{REPO_PATTERN}$"  # a JSON schema's pattern is searched for: anchored


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RepoArgs(NoArgs):
    repo: str | None = Field(default=None, pattern=REPO, description="owner/name, when named")


class PeriodArgs(RepoArgs):
    since: date | None = Field(default=None, description="First day, YYYY-MM-DD")
    until: date | None = Field(default=None, description="Last day, YYYY-MM-DD (inclusive)")

    @model_validator(mode="after")
    def _ordered(self) -> PeriodArgs:
        if (self.since is None) != (self.until is None):
            raise ValueError("since and until go together")
        if self.since and self.until and self.until < self.since:
            raise ValueError("until is before since")
        return self


class CountArgs(PeriodArgs):
    n: int | None = Field(default=None, ge=1, le=50, description="How many to list")


class ExplainArgs(NoArgs):
    pr: int = Field(ge=1, le=10**9, description="The pull request's number")
    repo: str | None = Field(default=None, pattern=REPO)


class AskArgs(PeriodArgs):
    question: str = Field(min_length=1, max_length=2000, description="The question, as asked")
