"""no_tests asks for a test only where a PR may change what the code does: a clone the test builds, one
PR in it, read by the git source and judged by the rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.analysis.rules import analyse
from prdigest.config import load_settings
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


def the_pr(tmp_path: Path, after: str, title: str) -> PullRequest:
    """PR #7 of a package with tests of its own, rewriting ``pkg/trainer.py`` as ``after``."""
    repo = new_repo(tmp_path / "repo")
    (repo / "pkg").mkdir()
    (repo / "tests").mkdir()
    (repo / "pkg" / "trainer.py").write_text(TRAINER)
    (repo / "tests" / "test_trainer.py").write_text("def test_clip():\n    assert True\n")
    commit(repo, "init", "2026-09-01T10:00:00+00:00")
    (repo / "pkg" / "trainer.py").write_text(after)
    commit(repo, f"{title} (#7)", "2026-09-08T10:00:00+00:00")
    (pr,) = [p for p in GitSource(repo, repo="acme/trainer").fetch(WEEK) if p.number == 7]
    return pr


def asks_for_a_test(pr: PullRequest) -> bool:
    taxonomy = load_settings(env={}).repo(pr.repo).taxonomy
    return any(r.label == "no_tests" for r in analyse(pr, taxonomy, "en").risks)


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
