"""no_tests asks for a test only where a PR may change what the code does, and tests_removed fires only on
tests that existed: a clone the test builds, one PR in it, read by the git source and judged by the
rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.analysis.report import build_report
from prdigest.analysis.rules import NO_CODE_CAP, analyse
from prdigest.config import ReportSettings, load_settings
from prdigest.models import PullRequest, Window
from prdigest.sources.git.source import GitSource

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
TRAINER = """import logging

from .utils import pad

logger = logging.getLogger(__name__)
CHECKPOINT_NAME = "state.pt"
SKIPPED = [
    "embed.weight",
    "head.weight",
]


def clip(ratio, low, high):
    return min(max(ratio, low), high)


def scale(x, factor):
    return x * factor


def supported(version):
    return version >= (0, 13)
"""


def a_pr(tmp_path: Path, before: dict[str, str], after: dict[str, str], title: str) -> PullRequest:
    """PR #7 of a clone whose files are ``before``, writing ``after``."""
    repo = new_repo(tmp_path / "repo")
    for files, message, when in ((before, "init", "2026-09-01"), (after, f"{title} (#7)", "2026-09-08")):
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        commit(repo, message, f"{when}T10:00:00+00:00")
    (pr,) = [p for p in GitSource(repo, repo="acme/trainer").fetch(WEEK) if p.number == 7]
    return pr


def the_pr(tmp_path: Path, after: str, title: str) -> PullRequest:
    """PR #7 of a package with tests of its own, rewriting ``pkg/trainer.py`` as ``after``."""
    before = {"pkg/trainer.py": TRAINER, "tests/test_trainer.py": TESTS}
    return a_pr(tmp_path, before, {"pkg/trainer.py": after}, title)


def labels(pr: PullRequest) -> set[str]:
    taxonomy = load_settings(env={}).repo(pr.repo).taxonomy
    return {r.label for r in analyse(pr, taxonomy, "en").risks}


def asks_for_a_test(pr: PullRequest) -> bool:
    return "no_tests" in labels(pr)


TESTS = """import pytest


def test_clip():
    assert True
"""


def _swap(text: str, a: str, b: str) -> str:
    """The two functions ``a`` and ``b`` (each followed by a blank-line pair) in each other's place."""
    first, second = text.index(f"def {a}("), text.index(f"def {b}(")
    block_a, block_b = text[first:second], text[second : text.index("\n\n\n", second) + 3]
    return text.replace(block_a + block_b, block_b + block_a)


@pytest.mark.parametrize(
    ("after", "title"),
    [
        # A refactor that reorders methods: the same lines, elsewhere.
        (_swap(TRAINER, "clip", "scale"), "Align the order of methods with the other trainers"),
        # The logger set up another way: logging is not behaviour.
        (
            TRAINER.replace("import logging\n", "from accelerate.logging import get_logger\n").replace(
                "logger = logging.getLogger(__name__)", "logger = get_logger(__name__)"
            ),
            "Harmonize logger imports",
        ),
        # A module-level constant nobody reads, deleted.
        (TRAINER.replace('CHECKPOINT_NAME = "state.pt"\n', ""), "Remove CHECKPOINT_NAME"),
        # A compatibility gate moved to the next release of a dependency.
        (TRAINER.replace("(0, 13)", "(0, 14)"), "Drop support for the 0.13 release"),
        # A docstring's example, and a title that says it documents.
        (
            TRAINER.replace(
                "    return x * factor", '    """>>> scale(2, 3)\n    6\n    """\n    return x * factor'
            ),
            "Document scale with an example",
        ),
    ],
    ids=["reorder", "logger", "dead-constant", "version-gate", "docstring"],
)
def test_a_change_that_cannot_change_behaviour_asks_for_no_test(
    tmp_path: Path, after: str, title: str
) -> None:
    assert not asks_for_a_test(the_pr(tmp_path, after, title))


@pytest.mark.parametrize(
    ("after", "title"),
    [
        (TRAINER.replace("min(max(ratio, low), high)", "max(min(ratio, high), low)"), "fix: clip the ratio"),
        # Lines deleted inside code change what it does: an entry of a list the code reads.
        (TRAINER.replace('    "head.weight",\n', ""), "fix: quantize the head again"),
    ],
    ids=["logic", "list-entry-deleted"],
)
def test_a_fix_that_changes_logic_without_a_test_still_asks_for_one(
    tmp_path: Path, after: str, title: str
) -> None:
    assert asks_for_a_test(the_pr(tmp_path, after, title))


MARKER = (
    '@pytest.mark.xfail(\n    VERSION < (4, 57),\n    reason="needs a newer release",\n    strict=False,\n)\n'
)


def test_a_new_test_that_starts_expected_to_fail_removes_no_test(tmp_path: Path) -> None:
    added = TESTS + "\n\n" + MARKER + "def test_multi_image():\n    assert True\n"
    pr = a_pr(tmp_path, {"tests/test_trainer.py": TESTS}, {"tests/test_trainer.py": added}, "Add a test")
    assert "tests_removed" not in labels(pr)


def test_an_existing_test_marked_to_fail_is_a_test_removed(tmp_path: Path) -> None:
    marked = TESTS.replace("def test_clip", MARKER + "def test_clip")
    pr = a_pr(tmp_path, {"tests/test_trainer.py": TESTS}, {"tests/test_trainer.py": marked}, "Park a test")
    assert "tests_removed" in labels(pr)


def test_a_docstring_example_rewritten_as_doctest_asks_for_no_test(tmp_path: Path) -> None:
    example = "    x = scale(2, 3)\n    y = clip(x, 0, 1)\n    print(y)\n"
    doc = 'def scale(x, factor):\n    """Example:\n\n{}    """\n    return x * factor\n'
    before = TRAINER.replace("def scale(x, factor):\n    return x * factor\n", doc.format(example))
    prompts = "".join(f"    >>> {line.strip()}\n" for line in example.splitlines())
    after = before.replace(example, prompts)
    pr = a_pr(tmp_path, {"pkg/trainer.py": before}, {"pkg/trainer.py": after}, "Align the docstring examples")
    assert not asks_for_a_test(pr)
    # Documentation: it weighs what docs weigh, however many lines it rewrites.
    taxonomy = load_settings(env={}).repo(pr.repo).taxonomy
    assert analyse(pr, taxonomy, "en").importance <= NO_CODE_CAP


@pytest.mark.parametrize(
    "title", ["fix: clip the ratio on Blackwell", "Align the clip-ratio metrics with the other trainers"]
)
def test_a_change_for_hardware_ci_cannot_run_or_of_metrics_is_a_point_to_watch_not_a_risk_of_the_week(
    tmp_path: Path, title: str
) -> None:
    after = TRAINER.replace("min(max(ratio, low), high)", "max(min(ratio, high), low)")
    pr = the_pr(tmp_path, after, title)
    taxonomy = load_settings(env={}).repo(pr.repo).taxonomy
    found = analyse(pr, taxonomy, "en")
    assert "no_tests" not in {r.label for r in found.risks}
    assert [r.label for r in found.weak_risks] == ["no_tests"] and found.weak_risks[0].strength == "weak"
    assert any("test" in point for point in found.watch)  # told on the PR, where a reviewer looks
    report = build_report(
        pr.repo,
        WEEK,
        [pr],
        source="git",
        unavailable=[],
        settings=ReportSettings(),
        analyses={7: found},
        lang="en",
    )
    (shown,) = report.prs
    assert shown.risks == [] and shown.weak_risks == ["no_tests"]
    assert report.risk_observations == [] and report.risk_level == "low"
