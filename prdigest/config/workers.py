"""[workers]: how `prdigest worker` processes run the weekly deliveries on the PostgreSQL store, and how
long a delivery's claim holds (every store)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator


class WorkerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Deliveries one `prdigest worker` builds at once (each a thread; the LLM's and GitHub's limits bind
    # before the worker's cores do).
    concurrency: int = Field(default=4, ge=1, le=64)
    # How long a delivery's claim holds without renewal (a running build renews it every third): a worker
    # that died leaves its deliveries to the others after this long.
    lease_seconds: float = Field(default=900, ge=1)
    # A worker silent (no heartbeat) for this long is taken for dead, and its jobs are run again.
    stalled_after_seconds: float = Field(default=30, ge=5)
    # How often the workers look for deliveries due and for jobs of dead workers: seconds that divide a
    # minute (a tick runs on one worker, whichever takes it).
    tick_seconds: int = Field(default=60, ge=1, le=60)

    @field_validator("tick_seconds")
    @classmethod
    def _divides_a_minute(cls, value: int) -> int:
        if 60 % value:
            raise ValueError(
                f"{value} does not divide a minute: give 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60"
            )
        return value

    @property
    def cron(self) -> str:
        """The ticks as a cron line (a sixth field: seconds)."""
        return "* * * * *" if self.tick_seconds == 60 else f"* * * * * */{self.tick_seconds}"

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.lease_seconds)
