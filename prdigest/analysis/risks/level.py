"""The week's risk level, from the risk labels its PRs carry and their evidence (as the report defines it).

high: something breaks users this week (an option removed, a regression measured), or many options or tests
went at once; medium: a risk worth following up (a weighty label); low: a routine week.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.models import RiskLabel, RiskLevel

# Several options changed, or tests disabled, in one week break someone even when no single one shows it.
MANY = {"config_breaking": 4, "tests_removed": 3}


def risk_level(risks: Iterable[RiskLabel]) -> RiskLevel:
    found = list(risks)
    counts = Counter(r.label for r in found)
    if any(r.breaks for r in found) or any(counts[label] >= n for label, n in MANY.items()):
        return "high"
    if any(RISK_WEIGHT.get(label, 0) >= 3 for label in counts):
        return "medium"
    return "low"
