"""Build the Report: every figure is computed here from the PR data, never generated."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime

from prdigest.config import ReportSettings
from prdigest.models import DirectPush, HotFile, PullRequest, Report, ReportPR, Stats, Window, WindowOut


def build_report(
    repo: str,
    window: Window,
    prs: Iterable[PullRequest],
    *,
    source: str,
    unavailable: Iterable[str],
    settings: ReportSettings,
    lang: str | None = None,
    now: datetime | None = None,
) -> Report:
    items = sorted(prs, key=lambda p: p.merged_at)
    merged = [p for p in items if not p.is_direct_push]
    pushes = [p for p in items if p.is_direct_push]
    return Report(
        repo=repo,
        window=WindowOut(since=window.since, until=window.until, tz=window.tz),
        engine="none",
        lang=lang or settings.language,
        source=source,
        generated_at=now or datetime.now(UTC),
        stats=compute_stats(merged, pushes, window, settings),
        prs=[_report_pr(p) for p in merged],
        direct_pushes=[
            DirectPush(sha=p.sha or "", title=p.title, author=p.author, merged_at=p.merged_at) for p in pushes
        ],
        unavailable=sorted(set(unavailable)),
    )


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


def _report_pr(p: PullRequest) -> ReportPR:
    assert p.number is not None
    return ReportPR(
        number=p.number,
        title=p.title,
        author=p.author,
        url=p.url,
        merged_at=p.merged_at,
        additions=p.additions,
        deletions=p.deletions,
        files=len(p.files) if p.files is not None else None,
        related=p.related,
    )
