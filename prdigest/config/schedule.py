"""[schedule]: how long a weekly delivery may take past its fire time, and when the repositories are
prepared ahead of it (every store, every runner)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field


class ScheduleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # A weekly report is due this long after its fire time: until then an LLM request answered 429 is
    # asked again after the server's Retry-After instead of leaving the PR to the rules. 0: never wait.
    deadline_minutes: int = Field(default=60, ge=0, le=24 * 60)
    # Each day at this time (HH:MM, UTC) every subscribed repository is synced and its PRs analysed, so a
    # weekly report pays only for the PRs merged since and fetches no diff (pipeline/prepare.py). "off":
    # never, and a report fetches the diffs it needs.
    prepare_at: str = Field(default="02:00", pattern=r"^(([01]\d|2[0-3]):[0-5]\d|off)$")

    @property
    def prepares(self) -> bool:
        return self.prepare_at != "off"

    @property
    def deadline(self) -> timedelta:
        return timedelta(minutes=self.deadline_minutes)
