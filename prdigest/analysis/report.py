"""Build the Report: figures computed from the PR data, sections derived from the analyses.

Nothing here is generated: counts, shares, hot files and risk counts are code,
themes are PRs grouped by topic and told in merge order, observations and
recommendations come from the risk labels and their evidence. Every PR a
section cites is a PR of the window (`enforce_citations`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime

from prdigest.analysis.risk_level import risk_level
from prdigest.analysis.rules import RISK_WEIGHT
from prdigest.analysis.taxonomy import is_ci, is_doc, is_test, module_of, parse_title
from prdigest.config import ReportSettings, Taxonomy
from prdigest.i18n import report_texts, risk_name
from prdigest.models import (
    DirectPush,
    HotFile,
    PRAnalysis,
    PullRequest,
    Recommendation,
    Report,
    ReportPR,
    RiskObservation,
    Stats,
    Theme,
    Window,
    WindowOut,
)

MAX_THEMES = 5
MIN_THEMES = 3
STORY_STEPS = 6


def build_report(
    repo: str,
    window: Window,
    prs: Iterable[PullRequest],
    *,
    source: str,
    unavailable: Iterable[str],
    settings: ReportSettings,
    analyses: dict[int, PRAnalysis] | None = None,
    taxonomy: Taxonomy | None = None,
    lang: str | None = None,
    now: datetime | None = None,
) -> Report:
    lang = lang or settings.language
    items = sorted(prs, key=lambda p: p.merged_at)
    merged = [p for p in items if not p.is_direct_push]
    pushes = [p for p in items if p.is_direct_push]
    analyses = analyses or {}
    stats = compute_stats(merged, pushes, window, settings)
    key = key_numbers(merged, analyses, settings)
    report = Report(
        repo=repo,
        window=WindowOut(since=window.since, until=window.until, tz=window.tz),
        engine=_engine(analyses),
        lang=lang,
        source=source,
        generated_at=now or datetime.now(UTC),
        stats=stats,
        prs=[_report_pr(p, analyses.get(p.number or 0), p.number in key) for p in merged],
        direct_pushes=[
            DirectPush(sha=p.sha or "", title=p.title, author=p.author, merged_at=p.merged_at) for p in pushes
        ],
        unavailable=sorted(set(unavailable)),
    )
    if analyses:
        _add_analysis_figures(report, key, analyses)
        t = report_texts(lang, window.since, window.until)
        by_number = {p.number: p for p in merged}
        report.themes = build_themes(merged, analyses, taxonomy or Taxonomy(), t)
        report.risk_observations = build_observations(report, analyses, t, lang)
        report.recommendations = build_recommendations(report, by_number, t)
        report.risk_level = risk_level(
            [r for p in merged if p.number in analyses for r in analyses[p.number].risks]
        )
        report.summary = build_summary(report, t, lang)
    enforce_citations(report)
    return report


# --- figures --------------------------------------------------------------------------


def compute_stats(
    merged: list[PullRequest], pushes: list[PullRequest], window: Window, settings: ReportSettings
) -> Stats:
    """Figures that need no analysis: counts, authors, hot files, per-day, churn."""
    authors = Counter(p.author for p in merged)
    ranked = sorted(authors.items(), key=lambda kv: (-kv[1], kv[0]))
    per_day = dict.fromkeys(window.days(), 0)
    for p in merged:
        per_day[window.local_day(p.merged_at)] += 1
    return Stats(
        merged_prs=len(merged),
        authors=dict(ranked),
        author_share={a: round(n / len(merged), 3) for a, n in ranked},
        hot_files=hot_files(merged, settings.hot_file_min_prs),
        hot_file_min_prs=settings.hot_file_min_prs,
        per_day=per_day,
        additions=sum(p.additions for p in merged),
        deletions=sum(p.deletions for p in merged),
        files_changed=len({f.path for p in merged for f in p.files or []}),
        direct_pushes=len(pushes),
    )


def hot_files(prs: list[PullRequest], min_prs: int) -> list[HotFile]:
    """Files changed by at least ``min_prs`` PRs, most changed first."""
    touched: dict[str, set[int]] = defaultdict(set)
    for p in prs:
        for f in p.files or []:
            if p.number is not None:
                touched[f.path].add(p.number)
    hot = [HotFile(path=path, prs=sorted(nums)) for path, nums in touched.items() if len(nums) >= min_prs]
    return sorted(hot, key=lambda h: (-len(h.prs), h.path))


def key_numbers(
    merged: list[PullRequest], analyses: dict[int, PRAnalysis], settings: ReportSettings
) -> set[int]:
    """Key PRs: importance at or above the threshold, the most important first, at most the limit."""
    scored = [(analyses[p.number].importance, p.number) for p in merged if p.number in analyses]
    eligible = sorted((s for s in scored if s[0] >= settings.key_importance_min), key=lambda s: (-s[0], s[1]))
    return {number for _, number in eligible[: settings.key_pr_limit]}


def _add_analysis_figures(report: Report, key: set[int], analyses: dict[int, PRAnalysis]) -> None:
    s = report.stats
    numbers = [p.number for p in report.prs if p.number in analyses]
    tags = Counter(tag for n in numbers for tag in analyses[n].tags)
    risks = Counter(r.label for n in numbers for r in analyses[n].risks)
    s.tags = dict(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0])))
    s.risks = dict(sorted(risks.items(), key=lambda kv: (-kv[1], -RISK_WEIGHT.get(kv[0], 0), kv[0])))
    s.key_prs = len(key)
    if key:
        s.avg_importance = round(sum(analyses[n].importance for n in key) / len(key), 2)
        s.avg_insight = round(sum(analyses[n].insight for n in key) / len(key), 2)
    s.engines = dict(Counter(analyses[n].engine for n in numbers))


def _engine(analyses: dict[int, PRAnalysis]) -> str:
    engines = {a.engine for a in analyses.values()}
    if not engines:
        return "none"
    return engines.pop() if len(engines) == 1 else "mixed"


def _report_pr(p: PullRequest, analysis: PRAnalysis | None, key: bool) -> ReportPR:
    assert p.number is not None
    out = ReportPR(
        number=p.number,
        title=p.title,
        author=p.author,
        url=p.url,
        merged_at=p.merged_at,
        additions=p.additions,
        deletions=p.deletions,
        files=len(p.files) if p.files is not None else None,
        related=p.related,
        key=key,
    )
    if analysis is not None:
        out.summary = analysis.summary
        out.importance = analysis.importance
        out.insight = analysis.insight
        out.tags = analysis.tags
        out.risks = [r.label for r in analysis.risks]
        out.watch = analysis.watch
    return out


# --- themes ---------------------------------------------------------------------------


def topics_of(pr: PullRequest, analysis: PRAnalysis, taxonomy: Taxonomy) -> list[str]:
    """What a PR is about, most specific first: repository tags, title scope, module, area."""
    topics = [tag for tag in analysis.tags if tag in taxonomy.tags]
    parsed = parse_title(pr.title)
    if parsed.scope:
        topics.append(parsed.scope.split(",")[0].strip())
    topics += [b for b in parsed.brackets if b not in ("fix", "feat")]
    churn: Counter[str] = Counter()
    for f in pr.files or []:
        if not (is_test(f.path) or is_doc(f.path) or is_ci(f.path) or "/" not in f.path):
            # tests and docs follow their subject; root files (pyproject, setup.py) name no module
            churn[module_of(f.path)] += (f.additions or 0) + (f.deletions or 0) + 1
    topics += [m for m, _ in churn.most_common(2)]
    if not churn:  # a docs, tests or CI change: its area is its topic
        topics += [tag for tag in ("ci", "docs", "testing", "dependency") if tag in analysis.tags]
    return list(dict.fromkeys(t for t in topics if t))


def build_themes(
    merged: list[PullRequest], analyses: dict[int, PRAnalysis], taxonomy: Taxonomy, t: dict[str, str]
) -> list[Theme]:
    """3-5 topics that cover the most important PRs, each told as a story in merge order."""
    analysed = [p for p in merged if p.number in analyses]
    topics = {p.number: topics_of(p, analyses[p.number], taxonomy) for p in analysed}
    unassigned = {p.number for p in analysed}
    themes: list[Theme] = []
    while len(themes) < MAX_THEMES:
        weight: dict[str, float] = defaultdict(float)
        members: dict[str, list[int]] = defaultdict(list)
        for number in unassigned:
            # A PR counts most for its most specific topic, so generic areas do not swallow the week.
            for rank, topic in enumerate(topics[number]):
                weight[topic] += (1 + analyses[number].importance) / (1 + rank)
                members[topic].append(number)
        candidates = [topic for topic in weight if len(members[topic]) >= 2]
        if not candidates:
            break
        best = max(candidates, key=lambda topic: (weight[topic], topic))
        chosen = [p for p in analysed if p.number in members[best]]  # merge order
        themes.append(_theme(best, chosen, analyses, t))
        unassigned -= {p.number for p in chosen}
    return themes


def _theme(topic: str, prs: list[PullRequest], analyses: dict[int, PRAnalysis], t: dict[str, str]) -> Theme:
    numbers = [p.number for p in prs if p.number is not None]
    lead = lead_kind(Counter(tag for n in numbers for tag in analyses[n].tags), len(numbers))
    steps = []
    for i, p in enumerate(prs[:STORY_STEPS]):
        word = t["story_first"] if i == 0 else (t["story_finally"] if i == len(prs) - 1 else t["story_then"])
        steps.append(
            t["story_step"].format(word=word, number=p.number, summary=analyses[p.number or 0].summary)
        )
    if len(prs) > STORY_STEPS:
        steps.append(t["story_more"].format(n=len(prs) - STORY_STEPS))
    risks = Counter(r.label for n in numbers for r in analyses[n].risks)
    cost = t["story_cost"].format(
        n=len(prs),
        additions=sum(p.additions for p in prs),
        deletions=sum(p.deletions for p in prs),
        risks=", ".join(f"{risk_name(label, t['lang'])} ×{c}" for label, c in risks.most_common(3))
        or t["no_risks"],
    )
    ranked = sorted(numbers, key=lambda n: (-analyses[n].importance, n))
    return Theme(
        title=t["theme_title"].format(topic=topic, n=len(prs), lead=t.get(f"kind_{lead}", lead or "-")),
        prs=numbers,
        story=t["story_sep"].join(steps) + t["story_end"] + cost,
        trend=t.get(f"trend_{lead}", t["trend_mixed"]),
        representative=ranked[:8],
    )


_CHANGE_KINDS = ("feature", "bugfix", "performance", "refactor", "security")
_AREA_KINDS = ("testing", "ci", "docs", "dependency")


def lead_kind(tags: Counter[str], prs: int) -> str | None:
    """The kind of change that leads. Tests and docs ride along with most changes, so a change kind
    (feature, fix, ...) leads when it covers a third of the PRs; else the commonest area does."""
    best: str | None = None
    for kinds in (_CHANGE_KINDS, _AREA_KINDS):
        counted = {k: n for k, n in tags.items() if k in kinds}
        if counted:
            top = max(counted, key=lambda k: (counted[k], -kinds.index(k)))
            if counted[top] * 3 >= prs:
                return top
            best = best or top
    return best


# --- risks, recommendations, judgement --------------------------------------------------


def build_observations(
    report: Report, analyses: dict[int, PRAnalysis], t: dict[str, str], lang: str
) -> list[RiskObservation]:
    """One numbered observation per risk label that fired, the weightiest first, with its evidence."""
    by_label: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for p in report.prs:
        for r in analyses[p.number].risks if p.number in analyses else []:
            by_label[r.label].append((p.number, r.evidence, r.evidence_source))
    ranked = sorted(by_label, key=lambda label: (-RISK_WEIGHT.get(label, 1) * len(by_label[label]), label))
    observations = []
    for label in ranked:
        items = sorted(by_label[label], key=lambda item: (-analyses[item[0]].importance, item[0]))
        evidence = t["evidence_sep"].join(f"#{n}: {ev} [{t['source_' + src]}]" for n, ev, src in items[:4])
        if len(items) > 4:
            evidence += t["evidence_more"].format(n=len(items) - 4)
        observations.append(
            RiskObservation(
                title=t["obs_title"].format(name=risk_name(label, lang), n=len(items)),
                label=label,
                prs=[n for n, _, _ in items],
                evidence=evidence,
            )
        )
    return observations


def build_recommendations(
    report: Report, by_number: dict[int | None, PullRequest], t: dict[str, str]
) -> list[Recommendation]:
    recs = []
    for obs in report.risk_observations[:6]:
        prs = obs.prs[:5]
        recs.append(Recommendation(text=t[f"rec_{obs.label}"].format(prs=_cite(prs)), prs=prs))
    hot = [h for h in report.stats.hot_files if len(h.prs) >= report.stats.hot_file_min_prs][:3]
    if hot:
        prs = sorted({n for h in hot for n in h.prs})[:6]
        files = ", ".join(h.path for h in hot)
        recs.append(Recommendation(text=t["rec_hot_files"].format(files=files, prs=_cite(prs)), prs=prs))
    return recs


def build_summary(report: Report, t: dict[str, str], lang: str) -> str:
    s = report.stats
    tags = ", ".join(f"{tag} ({n})" for tag, n in list(s.tags.items())[:5]) or "-"
    top = list(s.authors.items())[:4]
    share = sum(s.author_share[a] for a, _ in top)
    authors = ", ".join(f"{a} ({n})" for a, n in top) or "-"
    hot = ", ".join(f"{h.path} ({len(h.prs)})" for h in s.hot_files[:3]) or t["none_short"]
    risks = (
        ", ".join(f"{risk_name(label, lang)} ({n})" for label, n in list(s.risks.items())[:3])
        or t["no_risks"]
    )
    lead = lead_kind(Counter(s.tags), s.merged_prs)
    return t["summary_para"].format(
        since=report.window.since,
        until=report.window.until,
        merged=s.merged_prs,
        key=s.key_prs,
        imp=s.avg_importance if s.avg_importance is not None else "-",
        ins=s.avg_insight if s.avg_insight is not None else "-",
        tags=tags,
        authors=authors,
        share=f"{share:.0%}",
        hot=hot,
        risks=risks,
        judgement=t.get(f"judge_{lead}", t["judge_mixed"]) + t[f"level_{report.risk_level}"],
    )


def enforce_citations(report: Report) -> None:
    """Drop every citation of a PR outside the window, and every claim left citing none."""
    window = {p.number for p in report.prs}
    for theme in report.themes:
        theme.prs = [n for n in theme.prs if n in window]
        theme.representative = [n for n in theme.representative if n in window]
    report.themes = [th for th in report.themes if th.prs]
    for obs in report.risk_observations:
        obs.prs = [n for n in obs.prs if n in window]
    report.risk_observations = [o for o in report.risk_observations if o.prs]
    for rec in report.recommendations:
        rec.prs = [n for n in rec.prs if n in window]
    report.recommendations = [r for r in report.recommendations if r.prs]


def _cite(numbers: list[int]) -> str:
    return " ".join(f"#{n}" for n in numbers)
