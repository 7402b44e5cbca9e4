"""Build the Report: figures computed from the PR data, sections derived from the analyses.

Nothing here is generated: counts, shares, hot files and risk counts are code,
themes are the week's stories (stories.py: PRs tied by code, references and
words), observations come from the risk labels and their evidence, and
recommendations from what the PRs behind each label did. Every PR a
section cites is a PR of the window (`enforce_citations`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime

from prdigest.analysis.review_flow import review_flow
from prdigest.analysis.risks.level import level_cause, level_sentence, risk_level
from prdigest.analysis.rules import RISK_WEIGHT, released
from prdigest.analysis.stories.group import find_stories
from prdigest.analysis.stories.text import (
    headline,
    listed,
    n_prs,
    pr_kind,
    spaced,
    story_kind,
    tell,
    topic_of,
)
from prdigest.clock import utc_now
from prdigest.config import ReportSettings, Taxonomy
from prdigest.i18n import report_texts, risk_name
from prdigest.i18n.tags import tag_name
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
    as_lang,
)

MAX_THEMES = 5
MIN_THEMES = 3


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
    unavailable = sorted(set(unavailable))
    # Unknown, not zero, where the source knows no reviews (a clone).
    stats.review_flow = review_flow(merged) if "reviews" not in unavailable else None
    key = key_numbers([p.number for p in merged], analyses, settings)
    report = Report(
        repo=repo,
        window=WindowOut(since=window.since, until=window.until, tz=window.tz),
        engine=_engine(analyses),
        lang=as_lang(lang),
        source=source,
        generated_at=now or utc_now(),
        stats=stats,
        prs=[_report_pr(p, analyses.get(p.number or 0), p.number in key) for p in merged],
        direct_pushes=[
            DirectPush(sha=p.sha or "", title=p.title, author=p.author, merged_at=p.merged_at) for p in pushes
        ],
        unavailable=unavailable,
    )
    if analyses:
        _add_analysis_figures(report, key, analyses)
        t = report_texts(lang, window.since, window.until)
        told = build_themes(merged, analyses, window, t)
        report.themes = [theme for _, theme in told]
        report.risk_observations = build_observations(report, analyses, t, lang)
        report.recommendations = build_recommendations(report, analyses, t)
        risks = [r for p in merged if p.number in analyses for r in analyses[p.number].risks]
        report.risk_level = risk_level(risks)
        report.level_cause = level_cause(report.risk_level, report.risk_observations, risks)
        report.summary = build_summary(report, analyses, t, lang, [topic for topic, _ in told])
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
    numbers: Iterable[int | None], analyses: dict[int, PRAnalysis], settings: ReportSettings
) -> set[int]:
    """Key PRs among ``numbers`` (the merged PRs'): importance at or above the threshold, the most
    important first, at most the limit. The trend counts earlier weeks' key PRs by this rule too."""
    scored = [(analyses[n].importance, n) for n in numbers if n is not None and n in analyses]
    eligible = sorted((s for s in scored if s[0] >= settings.key_importance_min), key=lambda s: (-s[0], s[1]))
    return {number for _, number in eligible[: settings.key_pr_limit]}


def _add_analysis_figures(report: Report, key: set[int], analyses: dict[int, PRAnalysis]) -> None:
    s = report.stats
    numbers = [p.number for p in report.prs if p.number in analyses]
    tags = Counter(tag for n in numbers for tag in analyses[n].tags)
    risks = risk_counts(analyses[n] for n in numbers)
    s.tags = dict(sorted(tags.items(), key=lambda kv: (-kv[1], kv[0])))
    s.risks = dict(sorted(risks.items(), key=lambda kv: (-kv[1], -RISK_WEIGHT.get(kv[0], 0), kv[0])))
    s.key_prs = len(key)
    if key:
        s.avg_importance = round(sum(analyses[n].importance for n in key) / len(key), 2)
        s.avg_insight = round(sum(analyses[n].insight for n in key) / len(key), 2)
    s.engines = dict(Counter(analyses[n].engine for n in numbers))


def risk_counts(analyses: Iterable[PRAnalysis]) -> Counter[str]:
    """How many times each risk label fired on the PRs (the report's and its earlier weeks' figures)."""
    return Counter(r.label for a in analyses for r in a.risks)


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
        out.weak_risks = [r.label for r in analysis.weak_risks]
        out.watch = analysis.watch
    return out


# --- themes ---------------------------------------------------------------------------


def build_themes(
    merged: list[PullRequest], analyses: dict[int, PRAnalysis], window: Window, t: dict[str, str]
) -> list[tuple[str, Theme]]:
    """3-5 stories of PRs tied by code, references and vocabulary (see stories.py), the weightiest first,
    each with its subject."""
    analysed = [p for p in merged if p.number in analyses]
    importance = {n: a.importance for n, a in analyses.items()}
    found = find_stories(analysed, importance, limit=MAX_THEMES, minimum=MIN_THEMES)
    themes = []
    told: Counter[str] = Counter()  # stories of one kind are told in turns of phrase of their own
    for story in found:
        kind = story_kind(story.prs, analyses)
        topic = topic_of(story, analysed)
        themes.append((topic, tell(story, analyses, topic, window, t, variant=told[kind])))
        told[kind] += 1
    return themes


_CHANGE_KINDS = ("feature", "bugfix", "performance", "refactor", "security")
_AREA_KINDS = ("testing", "ci", "docs", "dependency")


def lead_kind(tags: Counter[str], prs: int) -> str | None:
    """The kind of change that leads. Tests and docs ride along with most changes, so a change kind
    (feature, fix, ...) leads when it covers a third of the PRs, an area (tests, docs, CI) only when it
    covers half; else the commonest change kind, and no area: a week of fixes that touched tests was
    not about tests."""
    best: str | None = None
    for kinds, share in ((_CHANGE_KINDS, 3), (_AREA_KINDS, 2)):
        counted = {k: n for k, n in tags.items() if k in kinds}
        if counted:
            top = max(counted, key=lambda k: (counted[k], -kinds.index(k)))
            if counted[top] * share >= prs:
                return top
            best = best or (top if kinds is _CHANGE_KINDS else None)
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
    # The weightiest kind of risk first, however few PRs carry it: twenty core-path changes matter less than
    # one option removed.
    ranked = sorted(by_label, key=lambda label: (-RISK_WEIGHT.get(label, 1), -len(by_label[label]), label))
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
    report: Report, analyses: dict[int, PRAnalysis], t: dict[str, str]
) -> list[Recommendation]:
    """What to do about each of the weightiest risks, said from what its PRs did, and about the hot files."""
    return [rec for _, rec in labelled_recommendations(report, analyses, t)]


def labelled_recommendations(
    report: Report, analyses: dict[int, PRAnalysis], t: dict[str, str]
) -> list[tuple[str, Recommendation]]:
    """The recommendations, each with the risk label it answers ("hot_files" for the hot files')."""
    recs = [(obs.label, rec) for obs in report.risk_observations[:6] for rec in _recommend(obs, analyses, t)]
    hot = [h for h in report.stats.hot_files if len(h.prs) >= report.stats.hot_file_min_prs][:3]
    if hot:
        prs = sorted({n for h in hot for n in h.prs})[:6]
        files = ", ".join(h.path for h in hot)
        text = t["rec_hot_files"].format(files=files, prs=_cite(prs))
        recs.append(("hot_files", Recommendation(text=text, prs=prs)))
    return recs


# Words that say a PR fixes a security problem rather than adds code where a mistake would be one.
_SECURITY_FIX = re.compile(
    r"\b(security|vulnerab\w*|cve-\d+|exploit\w*|injection|sanitiz\w*|escap\w+|harden\w*|unsafe|insecure"
    r"|travers\w*|xss|csrf|ssrf|leak\w*|expos\w*|privilege\w*|permission\w*|auth\w*)\b",
    re.I,
)
_OPTION = re.compile(r"--[A-Za-z0-9][\w-]*")
EVIDENCE_CHARS = 80


def _recommend(
    obs: RiskObservation, analyses: dict[int, PRAnalysis], t: dict[str, str]
) -> list[Recommendation]:
    prs = obs.prs[:5]
    evidence = {n: next((r.evidence for r in analyses[n].risks if r.label == obs.label), "") for n in prs}

    def items(numbers: list[int], what: Callable[[int], str]) -> str:
        return t["rec_sep"].join(t["rec_item"].format(number=n, what=what(n)) for n in numbers)

    def quoted(n: int) -> str:
        return _cut(evidence[n], EVIDENCE_CHARS)

    def rec(key: str, numbers: list[int], **fields: str) -> Recommendation:
        return Recommendation(text=t[key].format(prs=_cite(numbers), **fields), prs=numbers)

    label = obs.label
    if label == "security_sensitive":  # a fix is to be shipped; new sensitive code is to be audited
        fixes = [n for n in prs if _fixes_security(analyses[n])]
        others = [n for n in prs if n not in fixes]
        return [rec("rec_security_fix", fixes)] * bool(fixes) + [
            rec("rec_security_audit", others, items=items(others, quoted))
        ] * bool(others)
    if label == "no_tests":  # a fix wants a test of what it fixed; new logic wants tests of its own
        fixes = [n for n in prs if pr_kind(analyses[n]) == "bugfix"]
        others = [n for n in prs if n not in fixes]
        out = [rec("rec_no_tests_fix", fixes)] if fixes else []
        return out + ([rec("rec_no_tests_change", others)] if others else [])
    if label == "config_breaking":  # name the options the migration note must cover

        def options(n: int) -> str:
            return ", ".join(_OPTION.findall(evidence[n])[:4]) or quoted(n)

        return [rec("rec_config_breaking", prs, items=items(prs, options))]
    if label == "core_path":
        return [rec("rec_core_path", prs, items=items(prs, lambda n: headline(analyses[n].summary)))]
    if label in ("tests_removed", "dependency_change", "perf_regression"):
        return [rec(f"rec_{label}", prs, items=items(prs, quoted))]
    return [rec(f"rec_{label}", prs)]


def build_summary(
    report: Report, analyses: dict[int, PRAnalysis], t: dict[str, str], lang: str, threads: list[str]
) -> str:
    """The week's figures, then its judgement: what it was about, its main threads, what drives its risk."""
    s = report.stats
    tags = ", ".join(f"{tag_name(tag, lang)} ({n})" for tag, n in list(s.tags.items())[:5]) or "-"
    top = list(s.authors.items())[:4]
    share = sum(s.author_share[a] for a, _ in top)
    authors = ", ".join(f"{a} ({n})" for a, n in top) or "-"
    hot = ", ".join(f"{h.path} ({len(h.prs)})" for h in s.hot_files[:3]) or t["none_short"]
    risks = (
        ", ".join(f"{risk_name(label, lang)} ({n})" for label, n in list(s.risks.items())[:3])
        or t["no_risks"]
    )
    lead = lead_kind(Counter(s.tags), s.merged_prs)
    quoted = [f"“{topic}”" if lang == "zh" else topic for topic in threads[:3]]
    along = t["threads_none"] if not quoted else t["threads_one" if len(quoted) == 1 else "threads_many"]
    judgement = t.get(f"judge_{lead}", t["judge_mixed"]) + along.format(threads=listed(quoted, t))
    judgement += _release_and_biggest(report, t)
    text = t["summary_para"].format(
        since=report.window.since,
        until=report.window.until,
        merged=n_prs(s.merged_prs, t),
        key=s.key_prs,
        imp=s.avg_importance if s.avg_importance is not None else "-",
        ins=s.avg_insight if s.avg_insight is not None else "-",
        tags=tags,
        authors=authors,
        share=f"{share:.0%}",
        hot=hot,
        risks=risks,
        judgement=judgement + level_sentence(report, t),
    )
    return spaced(text) if lang == "zh" else text


def _release_and_biggest(report: Report, t: dict[str, str]) -> str:
    """The week's release, if it made one, and its biggest change: what a reader must not miss."""
    out = ""
    releases = [(p, v) for p in report.prs if (v := released(p.title))]
    if releases:
        pr, version = releases[-1]
        out += t["week_release"].format(version=version, pr=pr.number)
    changes = [p for p in report.prs if not released(p.title)]
    if changes:
        top = max(changes, key=lambda p: (p.importance, -p.number))
        out += t["week_biggest"].format(title=top.title.strip(), pr=top.number)
    return out


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


def _fixes_security(analysis: PRAnalysis) -> bool:
    """A fix whose tags or summary say the problem it fixes is a security one."""
    secure = "security" in analysis.tags or _SECURITY_FIX.search(analysis.summary)
    return pr_kind(analysis) == "bugfix" and bool(secure)


def _cite(numbers: list[int]) -> str:
    return " ".join(f"#{n}" for n in numbers)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
