"""The week's risk level, from the risk labels its PRs carry and their evidence."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.models import RiskLabel


def risk_level(risks: Iterable[RiskLabel]) -> str:
    """low, medium or high: any weighty label makes the week high."""
    counts = Counter(r.label for r in risks)
    if any(RISK_WEIGHT.get(label, 0) >= 4 for label in counts):
        return "high"
    if any(RISK_WEIGHT.get(label, 0) >= 3 for label in counts) or sum(counts.values()) >= 5:
        return "medium"
    return "low"
