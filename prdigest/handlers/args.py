"""Reading a subscription command's words (repositories or org:OWNER, day, time, timezone, language) and
PR numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prdigest.config import REPO_NAME
from prdigest.errors import UsageError
from prdigest.models import Lang, Weekday, zone
from prdigest.periods import number
from prdigest.subscription import weekday

# Every repository of an owner: "org:acme" (a full-width colon too, as a Chinese keyboard types it).
_OWNER = re.compile(r"^org[:：](?P<owner>.*)$", re.I)
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_TIME_12 = re.compile(r"^(\d{1,2})(?::(\d{2}))?([ap])\.?m\.?$", re.I)  # "9am", "5:30pm"
_DAYS_ZH: dict[str, Weekday] = {
    "周一": "mon",
    "周二": "tue",
    "周三": "wed",
    "周四": "thu",
    "周五": "fri",
    "周六": "sat",
    "周日": "sun",
}
# A day and a time inside a Chinese sentence: "周五", "星期一"; "早上十点", "下午3点半", "9点30分".
_ZH_DAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
# Spaces are bounded: a search starting anywhere in a run of them reads a few (linear time).
_ZH_TIME = re.compile(
    r"(?:(?P<part>早上|上午|中午|下午|晚上)\s{0,3})?"
    r"(?P<hour>\d{1,2}|[一二两]?十[一二三四五六七八九]?|[零一二两三四五六七八九])\s{0,3}点"
    r"(?:\s{0,3}(?P<minute>半|\d{1,2}\s{0,3}分?))?"
)
MAX_PR_NUMBER = 10**9


@dataclass
class Args:
    repos: list[str] = field(default_factory=list)  # in the order named, each once
    owner: str | None = None  # org:OWNER: every repository of OWNER
    day: Weekday | None = None
    time: str | None = None
    tz: str | None = None
    lang: Lang | None = None
    rest: list[str] = field(default_factory=list)

    @property
    def repo(self) -> str | None:
        """The one repository named (None for none, several or an owner)."""
        return self.repos[0] if len(self.repos) == 1 and self.owner is None else None

    @property
    def named(self) -> bool:
        return bool(self.repos) or self.owner is not None


def read_args(text: str) -> Args:
    """Sort the words of a subscription command; raises UsageError for a word that is plainly wrong."""
    args = Args()
    for token in text.replace("，", " ").replace(",", " ").split():
        low = token.lower()
        if match := _TIME.match(token):
            args.time = clock_time(int(match.group(1)), int(match.group(2)))
        elif match := _TIME_12.match(token):
            if not 1 <= int(match.group(1)) <= 12:
                message = f"{token} is not a time of day (use HH:MM, e.g. 09:30)"
                raise UsageError(message, "err_time", text=token)
            hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
            args.time = clock_time(hour, int(match.group(2) or 0))
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
        elif match := _OWNER.match(token):
            args.owner = owner_name(match.group("owner"), token)
        elif REPO_NAME.fullmatch(token):
            if token.lower() in (r.lower() for r in args.repos):
                raise UsageError(f"{token} is named twice", "err_repo_twice", repo=token)
            args.repos.append(token)
        elif "/" in token:  # meant as a repository ("acme/x/y", a URL): say so, never subscribe to a part
            raise UsageError(f"{token!r} is not a repository (OWNER/NAME)", "err_repo_name", text=token[:80])
        else:
            args.rest.append(token)
    _said_in_chinese(text, args)
    if args.repos and args.owner is not None:
        raise UsageError("name repositories or org:OWNER, not both", "err_team_mixed")
    return args


def _said_in_chinese(text: str, args: Args) -> None:
    """A day and a time written inside a Chinese sentence ("每周五早上十点推送"), when no word gave them."""
    if args.day is None and (day := _ZH_DAY.search(text)):
        args.day = _DAYS_ZH[f"周{'日' if day.group(1) == '天' else day.group(1)}"]
    if args.time is None and (at := _ZH_TIME.search(text)):
        hour, half = number(at.group("hour")), at.group("minute") or ""
        hour += 12 if at.group("part") in ("下午", "晚上") and hour < 12 else 0
        minute = 30 if half == "半" else int(half.rstrip("分").strip() or 0)
        args.time = clock_time(hour, minute)


def owner_name(name: str, token: str) -> str:
    if not REPO_NAME.fullmatch(f"{name}/x"):  # a name an owner may have
        raise UsageError(f"{token!r} is not org:OWNER", "err_repo_name", text=token[:80])
    return name


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
