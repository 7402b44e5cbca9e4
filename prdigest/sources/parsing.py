"""What the sources share in reading a PR: the PR numbers its text names, and its diff as evidence.

Every source (a clone, GitHub, the next one) reads references and diffs the same way, so that the same PR
reads the same from any of them.
"""

from __future__ import annotations

import re

from prdigest.sources.diffs import DIFF_LINES_PER_PR, excerpt

__all__ = ["DIFF_LINES_PER_PR", "REFERENCE", "excerpt", "references"]

# "#123" (not "owner/repo#123" nor "abc#1") or ".../pull/123".
REFERENCE = re.compile(r"(?:(?<![\w/])#|/pull/)(\d+)\b")


def references(text: str) -> set[int]:
    """The PR (or issue) numbers the text names."""
    return {int(n) for n in REFERENCE.findall(text)}
