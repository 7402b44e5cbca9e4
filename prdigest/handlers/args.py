"""Reading a subscription command's words (repository, day, time, timezone, language) and PR numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prdigest.errors import UsageError
from prdigest.models import Lang, Weekday, weekday, zone

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_DAYS_ZH: dict[str, Weekday] = {
    "周一": "mon",
    "周二": "tue",
    "周三": "wed",
    "周四": "thu",
    "周五": "fri",
    "周六": "sat",
    "周日": "sun",
}
MAX_PR_NUMBER = 10**9


@dataclass
class Args:
    repo: str | None = None
    day: Weekday | None = None
    time: str | None = None
    tz: str | None = None
    lang: Lang | None = None
    rest: list[str] = field(default_factory=list)


def read_args(text: str) -> Args:
    """Sort the words of a subscription command; raises UsageError for a word that is plainly wrong."""
    args = Args()
    for token in text.replace("，", " ").replace(",", " ").split():
        low = token.lower()
        if match := _TIME.match(token):
            args.time = clock_time(int(match.group(1)), int(match.group(2)))
        elif (day := weekday(low[:3])) is not None and low.isalpha() and len(low) <= 9:
            args.day = day
        elif token in _DAYS_ZH:
            args.day = _DAYS_ZH[token]
        elif low in ("zh", "中文"):
            args.lang = "zh"
        elif low in ("en", "english"):
            args.lang = "en"
        elif is_zone(token):
            args.tz = zone(token).key
        elif _REPO.match(token):
            args.repo = token
        else:
            args.rest.append(token)
    return args


def pr_number(text: str) -> int:
    number = int(text) if len(text) < 12 else MAX_PR_NUMBER + 1
    if not 0 < number <= MAX_PR_NUMBER:
        raise UsageError(f"#{text} is not a pull request number", "err_pr_number", text=text[:20])
    return number


def clock_time(hour: int, minute: int) -> str:
    if hour > 23 or minute > 59:
        raise UsageError(
            f"{hour}:{minute:02d} is not a time of day (use HH:MM, e.g. 09:30)",
            "err_time",
            text=f"{hour}:{minute:02d}",
        )
    return f"{hour:02d}:{minute:02d}"


def is_zone(token: str) -> bool:
    if token.upper() == "UTC":
        return True
    if "/" not in token or not token[:1].isupper():
        return False
    try:
        zone(token)
    except UsageError:
        return False
    return True
