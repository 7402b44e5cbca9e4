"""[schedule]: how long a weekly delivery may take past its fire time (every store, every runner)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field


class ScheduleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # A weekly report is due this long after its fire time: until then an LLM request answered 429 is
    # asked again after the server's Retry-After instead of leaving the PR to the rules. 0: never wait.
    deadline_minutes: int = Field(default=60, ge=0, le=24 * 60)

    @property
    def deadline(self) -> timedelta:
        return timedelta(minutes=self.deadline_minutes)
