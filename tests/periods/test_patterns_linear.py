"""The chat's period, command and repository-name patterns run in linear time (DESIGN rule 10).

Each is searched, scanned and matched over strings of 65,536 characters (GitHub's longest body): runs of
one character class, or of a short phrase, with a tail that does not match. Their quadratic forms took
from several seconds to minutes on such strings; a linear one takes milliseconds, so the bound is generous.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from prdigest import periods
from prdigest.config.models import REPO_NAME
from prdigest.handlers import understand

SIZE = 65_536
BOUND_S = 2.0  # per string; the whole run of one pattern is cut off at TOTAL_S: a test never hangs
TOTAL_S = 60.0

# Where each pattern lives (a name re-exported elsewhere is checked there too).
PATTERNS = (
    "prdigest.periods.UNTIL_NOW", "prdigest.periods._THAT_WEEK", "prdigest.periods.DAY",
    "prdigest.periods.days.UNTIL_NOW", "prdigest.periods.days.JOIN", "prdigest.periods.days._DOT_JOIN",
    "prdigest.periods.days._END_DAY", "prdigest.periods.days.DAY", "prdigest.handlers.understand._PR",
    "prdigest.handlers.understand._FILLER", "prdigest.handlers.understand._HELP", "prdigest.config.REPO_NAME",
    "prdigest.config.models.REPO_NAME", "prdigest.sources.github.errors.REPO_NAME",
)  # fmt: skip
# Runs of each class the patterns read (spaces, digits, name characters) and of the phrases they start
# with, each with a tail that ends no match.
UNITS = (" ", "\t\n", "1", "12 ", "1.", "1/", "12.3", "a", "-", "a/", "#", "pr ", "how to ", "May ", "8月",
         "to ")  # fmt: skip
TAILS = ("", "!")

# Run in a child process, so that a quadratic pattern is stopped at TOTAL_S rather than left running; it
# reads the prdigest this test imported.
_PROBE = """
import importlib, sys, time
sys.path.insert(0, {root!r})
module, _, name = sys.argv[1].rpartition(".")
pattern = getattr(importlib.import_module(module), name)
for unit in {units!r}:
    for tail in {tails!r}:
        text = (unit * ({size} // len(unit) + 1))[: {size} - len(tail)] + tail
        started = time.perf_counter()
        pattern.search(text)
        pattern.findall(text)
        pattern.match(text)
        spent = time.perf_counter() - started
        if spent > {bound}:
            sys.exit(f"{{spent:.1f}} s on {{text[:12]!r}}... ({{len(text)}} characters)")
"""


@pytest.mark.parametrize("where", PATTERNS)
def test_each_pattern_runs_in_linear_time_on_long_runs(where: str) -> None:
    root = str(Path(periods.__file__).parents[2])
    probe = _PROBE.format(root=root, units=UNITS, tails=TAILS, size=SIZE, bound=BOUND_S)
    try:
        done = subprocess.run(
            [sys.executable, "-c", probe, where], capture_output=True, text=True, timeout=TOTAL_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{where} ran past {TOTAL_S:.0f} s on runs of {SIZE} characters")
    assert done.returncode == 0, f"{where}: {done.stderr.strip()}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from Aug 3 to Aug 9", ("08-03", "08-09")),
        ("8月3日  到  8月9日", ("08-03", "08-09")),
        ("2026-09-01..2026-09-14", ("09-01", "09-14")),
        ("Aug 3 to 9", ("08-03", "08-09")),
        ("8月3日以来", ("08-03", "12-02")),
        ("Aug 3 onwards", ("08-03", "12-02")),
        ("8月3日 那周", ("08-03", "08-09")),
    ],
)
def test_the_bounded_forms_read_what_people_write(text: str, expected: tuple[str, str]) -> None:
    found = periods.find_period(text)
    assert found is not None
    window = found.window(date(2026, 12, 2), "UTC")
    assert (window.since.isoformat()[5:], window.until.isoformat()[5:]) == expected


def test_pr_numbers_and_help_still_read() -> None:
    assert understand.understand("explain PR  # 1740").pr == 1740
    assert understand.understand("42号PR 讲讲").pr == 42
    assert understand.understand("how do I get this channel to subscribe?").command == "help"
    assert REPO_NAME.fullmatch("Owner-1/name.py_2") and not REPO_NAME.fullmatch("owner/name/x")
