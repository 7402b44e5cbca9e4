"""A team digest: several repositories' reports combined into one, each kept whole as a part.

The team report's counts are the sums of its parts' (authors summed per author), its averages the
parts' weighted by their key PRs (a report's averages are over its key PRs: the team's are over all
of its repositories' key PRs). PR numbers collide across repositories, so the PRs, themes, risk
observations and recommendations stay in the parts; the top carries figures and a summary only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date
from typing import TypeVar

from prdigest.analysis.review_flow import summarise
from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.analysis.stories.text import n_prs, spaced
from prdigest.analysis.trend import REVIEW_FIGURES, stats_figures, trend
from prdigest.i18n import risk_name, texts
from prdigest.models import LLMUsage, PeriodFigures, Report, ReviewFlow, RiskLevel, Stats, Trend

_K = TypeVar("_K", str, date)
_LEVELS: tuple[RiskLevel, ...] = ("low", "medium", "high")


def combine(parts: list[Report], name: str, lang: str) -> Report:
    """The team report ``name`` of ``parts`` (one report per repository, all of the same window)."""
    if not parts:
        raise ValueError("a team digest needs at least one repository's report")
    t = texts(lang)
    first = parts[0]
    report = Report(
        repo=name,
        window=first.window,
        engine=_joined(p.engine for p in parts),
        lang="zh" if lang == "zh" else "en",
        source=_joined(p.source for p in parts),
        generated_at=max(p.generated_at for p in parts),
        stats=combined_stats([p.stats for p in parts]),
        risk_level=max((p.risk_level for p in parts), key=_LEVELS.index),
        history=_history([p.history for p in parts]),
        warnings=[t["team_part_warning"].format(repo=p.repo, warning=w) for p in parts for w in p.warnings],
        llm_usage=_usage([p.llm_usage for p in parts]),
        unavailable=list(dict.fromkeys(s for p in parts for s in p.unavailable)),
        dismissed=[d for p in parts for d in p.dismissed],
        parts=parts,
    )
    report.summary = team_summary(report, lang)
    return report


def combined_stats(stats: list[Stats]) -> Stats:
    """The sums of ``stats`` (averages weighted by key PRs, what each averages over; no hot files: paths
    differ per repository)."""
    merged = sum(s.merged_prs for s in stats)
    authors = _ranked(_summed(s.authors for s in stats))
    return Stats(
        merged_prs=merged,
        key_prs=sum(s.key_prs for s in stats),
        avg_importance=_weighted([(s.avg_importance, s.key_prs) for s in stats]),
        avg_insight=_weighted([(s.avg_insight, s.key_prs) for s in stats]),
        tags=_ranked(_summed(s.tags for s in stats)),
        authors=authors,
        author_share={a: round(n / merged, 3) for a, n in authors.items()} if merged else {},
        hot_file_min_prs=stats[0].hot_file_min_prs,
        risks=dict(
            sorted(
                _summed(s.risks for s in stats).items(),
                key=lambda kv: (-kv[1], -RISK_WEIGHT.get(kv[0], 0), kv[0]),
            )
        ),
        per_day=dict(sorted(_summed(s.per_day for s in stats).items())),
        additions=sum(s.additions for s in stats),
        deletions=sum(s.deletions for s in stats),
        files_changed=sum(s.files_changed for s in stats),
        direct_pushes=sum(s.direct_pushes for s in stats),
        engines=dict(_summed(s.engines for s in stats)),
        review_flow=_review_flow([s.review_flow for s in stats]),
        trend=_trend(stats),
    )


def _review_flow(flows: list[ReviewFlow | None]) -> ReviewFlow | None:
    """The team's review flow: its medians over every repository's PRs, its reviews summed per reviewer;
    None unless every repository's source knows reviews (a sum over some would read as the team's)."""
    known = [f for f in flows if f is not None]
    if not known or len(known) != len(flows):
        return None
    return summarise([row for f in known for row in f.prs], _summed(f.reviews_by_reviewer for f in known))


def team_summary(report: Report, lang: str) -> str:
    """How many repositories and PRs, where most happened, and where the highest risk is and what."""
    t, s, parts = texts(lang), report.stats, report.parts
    repos = t["team_repos_1" if len(parts) == 1 else "team_repos_n"].format(n=len(parts))
    dates = {"since": report.window.since, "until": report.window.until, "repos": repos}
    if s.merged_prs:
        busiest = max(parts, key=lambda p: p.stats.merged_prs)  # the first of equals, in the team's order
        text = t["team_summary"].format(
            **dates, merged=n_prs(s.merged_prs, t), busiest=busiest.repo, busiest_n=busiest.stats.merged_prs
        )
    else:
        text = t["team_summary_empty"].format(**dates)
    observed = [p for p in parts if p.risk_observations]
    if observed:
        riskiest = max(observed, key=lambda p: _LEVELS.index(p.risk_level))
        driver = riskiest.risk_observations[0]  # each report lists its weightiest observation first
        pr = f"#{driver.prs[0]}"
        text += t["team_risk"].format(repo=riskiest.repo, risk=risk_name(driver.label, lang), pr=pr)
    else:
        text += t["team_no_risk"]
    return spaced(text) if lang == "zh" else text


def _joined(values: Iterable[str]) -> str:
    """The one value all parts share, else each distinct one, in order."""
    return ", ".join(dict.fromkeys(values))


def _summed(counts: Iterable[Mapping[_K, int]]) -> Counter[_K]:
    total: Counter[_K] = Counter()
    for c in counts:
        total.update(c)
    return total


def _ranked(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _weighted(values: list[tuple[float | None, int]]) -> float | None:
    weighted = [(v, n) for v, n in values if v is not None and n > 0]
    total = sum(n for _, n in weighted)
    return round(sum(v * n for v, n in weighted) / total, 2) if total else None


def _trend(stats: list[Stats]) -> dict[str, Trend]:
    """The summed figures against the summed earlier periods, when every part compares its figures over
    the same number of periods; else none (a sum over some repositories' weeks would read as a drop).

    A risk label missing from a part's trend fired in none of its periods (`trend` lists every label
    seen in any): it counts 0 there."""
    lengths = {len(tr.previous) for s in stats for tr in s.trend.values()}
    if any(not s.trend for s in stats) or len(lengths) != 1:
        return {}
    (count,) = lengths
    # A median is not summed: the team's review medians are not compared. Its PRs merged without review
    # are, when every repository compares them.
    seen = dict.fromkeys(name for s in stats for name in s.trend)
    summed = {"merged_without_review"} if all("merged_without_review" in s.trend for s in stats) else set()
    names = [name for name in seen if name not in REVIEW_FIGURES or name in summed]
    previous = [
        {name: sum(s.trend[name].previous[i] for s in stats if name in s.trend) for name in names}
        for i in range(count)
    ]
    own = [stats_figures(s) for s in stats]
    current = {name: sum(figures.get(name, 0) for figures in own) for name in names}
    return trend(current, previous)


def _history(histories: list[list[PeriodFigures]]) -> list[PeriodFigures]:
    """The trend chart's periods summed, when every part has the same periods; else none."""
    shapes = {tuple((p.since, p.until, p.unit) for p in h) for h in histories}
    if len(shapes) != 1:
        return []
    out = []
    for periods in zip(*histories, strict=True):
        complete = all(p.complete for p in periods)
        figures = {
            name: sum(getattr(p, name) or 0 for p in periods)
            for name in ("merged_prs", "additions", "deletions", "authors")
        }
        first = periods[0]
        out.append(
            PeriodFigures(
                since=first.since, until=first.until, unit=first.unit, current=first.current,
                complete=complete, **(figures if complete else {}),
            )
        )  # fmt: skip
    return out


def _usage(usages: list[LLMUsage | None]) -> LLMUsage | None:
    """What the LLM spent on all parts, when one model wrote them all (else None: not one model's bill)."""
    known = [u for u in usages if u is not None]
    if not known or len(known) != len(usages) or len({u.model for u in known}) != 1:
        return None
    fields = ("calls", "input_tokens", "output_tokens", "analysed", "cached", "fallback")
    narratives = {u.narrative for u in known}
    return LLMUsage(
        model=known[0].model,
        narrative=narratives.pop() if len(narratives) == 1 else "rules",
        **{f: sum(getattr(u, f) for u in known) for f in fields},
    )
