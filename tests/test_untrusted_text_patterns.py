"""Every pattern over untrusted text runs in linear time (DESIGN rule 10): each compiled pattern of the
modules that read PR text, diffs, repository files, chat messages or model output is driven with
adversarial strings of GitHub's maximum body length, and must answer within a bound that a linear scan
meets a hundred times over and a quadratic one misses by minutes."""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import re
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

import prdigest

MAX_BODY = 65_536  # GitHub's longest PR body, in characters
BOUND_S = 2.0
# Packages whose patterns see untrusted text; the chat and web adapters' SDK modules are left out, and so
# are the periods, whose patterns tests/periods/test_patterns_linear.py drives.
SCANNED = (
    "prdigest.analysis",
    "prdigest.danger",
    "prdigest.handlers",
    "prdigest.path_kinds",
    "prdigest.redact",
    "prdigest.render",
    "prdigest.sources",
)
UNITS = [
    *"a1 \t\n.-_=:/%@#\"'[(`*<|,!",
    "中",
    "a ",
    "a.",
    "a-",
    "a_",
    "a:",
    "a=",
    "1.",
    "1 ",
    "x: a",
    "[a](",
    "<!--",
]
# Starts of a match a pattern may need before the run: a field, a secret, a URL, a marker, a reference.
PREFIXES = ["    x: ", "password=", "http://", "@pytest.mark.skip ", "PR #", "def "]


def patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    seen: set[int] = set()
    for info in pkgutil.walk_packages(prdigest.__path__, "prdigest."):
        if not info.name.startswith(SCANNED) or info.name.endswith(("lark.sdk", "slack.adapter")):
            continue
        module = importlib.import_module(info.name)
        for name, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str) and id(value) not in seen:
                seen.add(id(value))
                yield f"{info.name}.{name}", value


def adversarial() -> Iterator[str]:
    """Long runs of one character class after a prefix the pattern may start on, then a character that
    ends no match: where backtracking has the most to try."""
    starts = [("", unit) for unit in UNITS] + list(itertools.product(PREFIXES, (" ", "a", "\n")))
    for prefix, unit in starts:
        yield prefix + unit * ((MAX_BODY - len(prefix)) // len(unit)) + "\x00"


class TooSlow(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise TooSlow  # the regex engine checks signals as it runs, so a long match is interrupted


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "pattern"), list(patterns()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_pattern_takes_linear_time_on_adversarial_text(name: str, pattern: re.Pattern[str]) -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for text in adversarial():
            signal.setitimer(signal.ITIMER_REAL, BOUND_S)
            try:
                pattern.search(text)
                pattern.findall(text)
                pattern.match(text)
            except TooSlow:
                pytest.fail(f"{name} took over {BOUND_S} s on {text[:24]!r}… ({len(text)} characters)")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
