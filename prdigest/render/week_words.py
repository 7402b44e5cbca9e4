"""Week over week in words, for every renderer: the trend of the report's figures against the earlier
weeks ("Merged PRs 41, +17% on the 4-week mean"), the themes that continue and the risk follow-ups.

Platform-free plain text; PR numbers are written "#N" for each renderer to link as it links PRs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.analysis.stories.text import listed
from prdigest.analysis.trend import NOT_RISKS
from prdigest.i18n import risk_name
from prdigest.models import Report, RiskFollowup, Trend, is_iso_week
from prdigest.render.attention import open_pr_urls
from prdigest.render.views import pr_urls

RISKS_ROSE = 3  # risk labels the summary names as rising, the most risen first
FOLLOWUPS_SHOWN = 5  # follow-ups the card's thread and the Markdown list; the page lists them all
FOLLOWUP_PRS = 3  # PR numbers a follow-up names, then "+N": an LLM's risk may cite dozens
HIGH_SEVERITY = 4  # the RISK_WEIGHT from which an open risk is listed, not only counted


def change_text(trend: Trend, value: float, t: dict[str, str]) -> str:
    """ "+17%", "-5%", "±0%"; "new" for a figure the earlier periods never had."""
    if trend.change is None:
        return t["trend_new"] if value else "±0%"
    return "±0%" if round(trend.change, 2) == 0 else f"{trend.change:+.0%}"


def figure_with_change(report: Report, name: str, value: float, t: dict[str, str]) -> str:
    """A card's figure with its change: "41 (+17%)"; the figure alone without a trend."""
    trend = report.stats.trend.get(name)
    return f"{value:g}" if trend is None else f"{value:g} ({change_text(trend, value, t)})"


def risk_kinds_trend(report: Report) -> Trend | None:
    """The number of kinds of risk that fired (the card's "risks" figure) against the earlier periods."""
    labels = [trend for name, trend in report.stats.trend.items() if name not in NOT_RISKS]
    merged = report.stats.trend.get("merged_prs")
    if merged is None:
        return None
    counts = [float(sum(1 for t in labels if t.previous[i] > 0)) for i in range(len(merged.previous))]
    mean = sum(counts) / len(counts)
    now = len(report.risk_observations)
    return Trend(previous=counts, change=round((now - mean) / mean, 3) if mean else None)


def basis(report: Report, t: dict[str, str]) -> str:
    """What the figures are compared with: the mean of the earlier weeks, or the previous period."""
    weeks = len(report.stats.trend["merged_prs"].previous)
    if not is_iso_week(report.window.since, report.window.until):
        return t["trend_basis_period"]
    return t["trend_basis_one_week"] if weeks == 1 else t["trend_basis_weeks"].format(n=weeks)


def trend_words(report: Report, t: dict[str, str]) -> str:
    """The summary's line on the trend: merged and key PRs against the earlier periods, and the kinds
    of risk that rose; empty without an earlier period to compare with."""
    trend, s = report.stats.trend, report.stats
    if "merged_prs" not in trend:
        return ""
    first = t["trend_first"] if trend["merged_prs"].change is not None else t["trend_first_zero"]
    merged = first.format(
        name=t["merged_prs"], value=s.merged_prs, change=change_text(trend["merged_prs"], s.merged_prs, t),
        basis=basis(report, t),
    )  # fmt: skip
    key = t["trend_next"].format(
        name=t["key_prs"], value=s.key_prs, change=change_text(trend["key_prs"], s.key_prs, t)
    )
    out = merged + t["trend_sep"] + key + t["c_stop"]
    rose = sorted(
        (label for label, n in s.risks.items() if label in trend and _rose(trend[label], n)),
        key=lambda label: (-(trend[label].change or float("inf")), label),
    )[:RISKS_ROSE]
    items = [
        f"{risk_name(label, report.lang)} {s.risks[label]} ({change_text(trend[label], s.risks[label], t)})"
        for label in rose
    ]
    return out + (t["trend_risks_rose"].format(risks=listed(items, t)) if items else "")


def _rose(trend: Trend, value: float) -> bool:
    return (trend.change is None and value > 0) or (trend.change or 0) > 0


def continues_words(numbers: Sequence[int], t: dict[str, str]) -> str:
    """ "Continues from #1, #2." for a theme that carries on from earlier PRs."""
    return t["theme_continues"].format(prs=" ".join(f"#{n}" for n in numbers))


def capped(numbers: Sequence[int]) -> tuple[list[int], str]:
    """A follow-up's first FOLLOWUP_PRS PR numbers, for a renderer to link, and "+N" for the rest ("")."""
    more = len(numbers) - FOLLOWUP_PRS
    return list(numbers[:FOLLOWUP_PRS]), f"+{more}" if more > 0 else ""


def followup_words(f: RiskFollowup, lang: str, t: dict[str, str]) -> str:
    """A follow-up's state after its title and PRs: its kind, since when, and open for how long or what
    closed it ("no test change · since 2026-09-07 · open for 2 weeks")."""
    shown, more = capped(f.by)
    by = " ".join([*(f"#{n}" for n in shown), *([more] if more else [])])
    state = t[f"fu_{f.status}"].format(weeks=f.weeks_open, by=by)
    return t["fu_line"].format(name=risk_name(f.label, lang), since=f.since, state=state)


def open_followups(report: Report) -> int:
    return sum(1 for f in report.risk_followups if f.status == "open")


@dataclass(frozen=True)
class Followups:
    """The follow-ups a reader takes in at a glance, and those left out (in the report's order)."""

    shown: list[RiskFollowup]
    left: list[RiskFollowup]


def followups_shown(report: Report) -> Followups:
    """What changed this week (addressed, reverted), then the open risks of high severity, longest open
    first: at most FOLLOWUPS_SHOWN. The low-severity open ones are only counted, as a list of dozens of
    "open" items buries the few that moved."""
    closed = [f for f in report.risk_followups if f.status != "open"]
    severe = [f for f in report.risk_followups if f.status == "open" and _severity(f) >= HIGH_SEVERITY]
    shown = [*closed, *sorted(severe, key=lambda f: (-f.weeks_open, -_severity(f)))][:FOLLOWUPS_SHOWN]
    # By identity, not equality: what is left is what was not picked, however alike two follow-ups are.
    return Followups(shown, [f for f in report.risk_followups if all(f is not s for s in shown)])


def _severity(f: RiskFollowup) -> int:
    return RISK_WEIGHT.get(f.label, 0)  # a recommendation or a label of the model's: not severe


def followups_rest_words(followups: Followups, t: dict[str, str]) -> str:
    """The follow-ups left out, in one line ("7 earlier risks still open"); empty when none is."""
    n = sum(1 for f in followups.left if f.status == "open")
    parts = [t["fu_rest_open_one" if n == 1 else "fu_rest_open"].format(n=n)] if n else []
    closed = len(followups.left) - n
    parts += [t["fu_rest_closed"].format(n=closed)] if closed else []
    return t["trend_sep"].join(parts)


def followups_counts(report: Report, t: dict[str, str]) -> str:
    """The follow-ups by state, for the page's collapsed section: "32 still open, 1 addressed and 0 reverted
    this week"."""
    n = Counter(f.status for f in report.risk_followups)
    return t["fu_counts"].format(open=n["open"], addressed=n["addressed"], reverted=n["reverted"])


def cited_urls(report: Report) -> dict[int, str]:
    """Links of the PRs a report cites, its own and earlier ones (themes' and follow-ups'), where the
    source links PRs: an earlier PR's link is made from the report's ("…/pull/12" for #12), or from an
    open PR's in a quiet week, which has no merged PR to take it from."""
    urls = pr_urls(report)
    own = next(iter({**urls, **open_pr_urls(report.attention)}.items()), None)
    if own is None:
        return urls
    number, url = own
    base = url[: -len(str(number))]
    earlier = {n for th in report.themes for n in th.continues or []}
    earlier |= {n for f in report.risk_followups for n in [*f.prs, *f.by]}
    return {**{n: f"{base}{n}" for n in earlier}, **urls}
