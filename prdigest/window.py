"""A report's period: whole days in a timezone, and ISO weeks."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, field_validator

from prdigest.errors import UsageError


def is_iso_week(since: date, until: date) -> bool:
    """Whether since..until is one Monday-to-Sunday week."""
    return since.isoweekday() == 1 and (until - since).days == 6


def iso_week_label(day: date) -> str:
    """The ISO week a day falls in, as commands and delivery keys write it: 2026-W37."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


# The days a window may hold: no commit predates git's epoch, and a few days' margin below the calendar's
# last lets every computation on a window (its exclusive end, its week, UTC offsets) stay in range.
FIRST_DAY = date(1970, 1, 1)
LAST_DAY = date(9998, 12, 31)


class Window(BaseModel):
    """Whole days in a timezone, both dates inclusive."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    since: date
    until: date
    tz: str

    @field_validator("tz")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return zone(value).key

    def model_post_init(self, __context: object) -> None:
        for day in (self.since, self.until):
            if not FIRST_DAY <= day <= LAST_DAY:
                raise UsageError(
                    f"bad date '{day}': prdigest reads days from {FIRST_DAY} to {LAST_DAY}",
                    "err_date_range", text=day, first=FIRST_DAY, last=LAST_DAY,
                )  # fmt: skip
        if self.until < self.since:
            raise UsageError(
                f"the window ends ({self.until}) before it starts ({self.since})",
                "err_window_order",
                since=self.since,
                until=self.until,
            )

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    @property
    def start(self) -> datetime:
        return datetime.combine(self.since, time.min, self.zone)

    @property
    def end(self) -> datetime:
        """Exclusive end: midnight after the last day."""
        return datetime.combine(self.until + timedelta(days=1), time.min, self.zone)

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def local_day(self, moment: datetime) -> date:
        return moment.astimezone(self.zone).date()

    def days(self) -> list[date]:
        return [self.since + timedelta(days=i) for i in range((self.until - self.since).days + 1)]

    @classmethod
    def iso_week(cls, year: int, week: int, tz: str) -> Window:
        try:
            monday = date.fromisocalendar(year, week, 1)
        except ValueError as exc:
            raise UsageError(
                f"{year}-W{week:02d} is not an ISO week", "err_week", text=f"{year}-W{week:02d}"
            ) from exc
        # A week past the last day is refused as such (its Sunday would be past the calendar's end).
        return cls(since=monday, until=monday + timedelta(days=6) if monday <= LAST_DAY else monday, tz=tz)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError) as exc:  # ZoneInfoNotFoundError is a KeyError
        raise UsageError(
            f"unknown timezone {name!r} (use an IANA name such as Asia/Shanghai)", "err_zone", text=name
        ) from exc
