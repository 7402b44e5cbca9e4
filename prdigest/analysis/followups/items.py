"""An earlier week's risk observations and recommendations, as its own report showed them.

They are built by the report's own builders from the week's cached rules analyses, so a follow-up
names exactly what that week's report said.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.analysis.report import build_observations, build_report, labelled_recommendations
from prdigest.config import ReportSettings
from prdigest.i18n import report_texts
from prdigest.models import PRAnalysis, PullRequest, Window


@dataclass(frozen=True)
class RiskItem:
    """One observation or recommendation of an earlier week, with what a later PR is checked against."""

    label: str
    title: str
    prs: tuple[int, ...]
    week: Window
    evidence: str  # the observation's evidence (a recommendation's: its label's observation's)


def week_items(
    repo: str,
    week: Window,
    prs: list[PullRequest],
    analyses: dict[int, PRAnalysis],
    settings: ReportSettings,
    lang: str,
) -> list[RiskItem]:
    """The week's observations, then its recommendations, as its report lists them."""
    # The report's figures and PRs without its analysed sections: observations need no themes or summary.
    report = build_report(repo, week, prs, source="cache", unavailable=(), settings=settings, lang=lang)
    t = report_texts(lang, week.since, week.until)
    report.risk_observations = build_observations(report, analyses, t, lang)
    evidence = {obs.label: obs.evidence for obs in report.risk_observations}
    items = [RiskItem(o.label, o.title, tuple(o.prs), week, o.evidence) for o in report.risk_observations]
    for label, rec in labelled_recommendations(report, analyses, t):
        items.append(RiskItem(label, rec.text, tuple(rec.prs), week, evidence.get(label, "")))
    return items
