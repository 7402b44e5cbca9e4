"""The week's risk level, from the risk labels its PRs carry and their evidence (as the report defines it).

high: something breaks users this week (an option removed, a regression measured), or many options or tests
went at once; medium: a risk worth following up (a weighty label); low: a routine week.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.analysis.stories.text import listed
from prdigest.analysis.taxonomy import RISKS
from prdigest.i18n import risk_name
from prdigest.models import Report, RiskLabel, RiskLevel, RiskObservation

# Several options changed, or tests disabled, in one week break someone even when no single one shows it.
MANY = {risk.name: risk.high_at for risk in RISKS if risk.high_at}


def risk_level(risks: Iterable[RiskLabel]) -> RiskLevel:
    found = list(risks)
    counts = Counter(r.label for r in found)
    if any(r.breaks for r in found) or any(counts[label] >= n for label, n in MANY.items()):
        return "high"
    if any(RISK_WEIGHT.get(label, 0) >= 3 for label in counts):
        return "medium"
    return "low"


def level_cause(
    level: RiskLevel, observations: list[RiskObservation], risks: Iterable[RiskLabel]
) -> str | None:
    """The label of the observation that sets ``level``, decided once for every rendering of the week: in
    a high week the first that breaks users, else the first that reached its count; in a medium week the
    first weighty one; else the first."""
    if not observations:
        return None
    found = list(risks)
    labels = [o.label for o in observations if o.label]
    if level == "high":
        breaking = {r.label for r in found if r.breaks}
        counts = Counter(r.label for r in found)
        many = {label for label, n in MANY.items() if counts[label] >= n}
        first = next((x for x in labels if x in breaking), None) or next(
            (x for x in labels if x in many), None
        )
        return first or (labels[0] if labels else None)
    if level == "medium":
        return next((x for x in labels if RISK_WEIGHT.get(x, 0) >= 3), labels[0] if labels else None)
    return labels[0] if labels else None


def level_driver(report: Report) -> RiskObservation | None:
    """The observation the week's level comes from (``Report.level_cause``); the first when the
    observations were written again without it (an LLM's)."""
    observations = report.risk_observations
    found = next((o for o in observations if report.level_cause and o.label == report.level_cause), None)
    return found or (observations[0] if observations else None)


def level_sentence(report: Report, t: dict[str, str]) -> str:
    """The week's risk level and what drives it, in the one sentence the card, thread, Markdown and page
    all say ("Overall risk is high, mainly from removed options (#12, #13)")."""
    driver = level_driver(report)
    if driver is None:
        return t["level_low_none"] if report.risk_level == "low" else t[f"risk_{report.risk_level}"]
    prs = listed([f"#{n}" for n in driver.prs[:3]], t) + (" …" if len(driver.prs) > 3 else "")
    name = risk_name(driver.label, report.lang) if driver.label else driver.title
    return t[f"level_{report.risk_level}"].format(driver=name, prs=prs)
