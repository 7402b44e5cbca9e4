"""Risks followed until closed: the earlier weeks' observations and recommendations, and their status.

Each earlier week's items are what its own report showed (follow_items); a later PR up to the end of
the window reverts or addresses one by the rules (follow_status), and with an LLM configured the
model says which of each item's few candidate PRs address it (followups.llm). An item closed before
the window is gone from the report; one closed within it is shown so; the rest are open.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from prdigest.analysis.followups.items import RiskItem, week_items
from prdigest.analysis.followups.status import Close, Later, closing
from prdigest.analysis.rules_cache import window_analyses
from prdigest.config import ReportSettings, Taxonomy
from prdigest.models import PullRequest, RiskFollowup, Window
from prdigest.storage import Store

if TYPE_CHECKING:  # the LLM engine (and openai) is imported only when an LLM is configured
    from prdigest.analysis.llm.engine import LLMEngine

MAX_WEEKS = 4  # the weeks before the window whose risks are followed


def follow_risks(
    store: Store,
    repo: str,
    window: Window,
    earlier: list[Window],
    taxonomy: Taxonomy,
    lang: str,
    settings: ReportSettings,
    engine: LLMEngine | None = None,
) -> list[RiskFollowup]:
    """The follow-ups of the risks of ``earlier`` (the weeks before ``window`` the cache holds completely,
    oldest first) at the end of ``window``: open, or addressed or reverted within it; with the report's
    ``engine``, the model judges what the rules found addressed."""
    weeks = [w for w in earlier if w.until < window.since][-MAX_WEEKS:]
    if not weeks:
        return []
    # One read of the earlier weeks and everything after them: the items' PRs and the later PRs.
    span = Window(since=weeks[0].since, until=window.until, tz=window.tz)
    analyses = window_analyses(store, repo, span, taxonomy, lang)
    prs = [p for p in store.prs_in_window(repo, span, excerpts=False) if p.number is not None]
    own = {p.number: p for p in prs if p.number is not None}
    items = _distinct(
        item
        for week in weeks
        for item in week_items(
            repo, week, [p for p in prs if week.contains(p.merged_at)], analyses, settings, lang
        )
    )
    later = [Later.of(p, analyses.get(p.number or 0)) for p in prs]
    found = [closing(item, own, [p for p in later if p.pr.merged_at >= item.week.end]) for item in items]
    if engine is not None:
        found = _judged(engine, repo, lang, items, found, own)
    return [f for item, closes in zip(items, found, strict=True) if (f := _status(item, closes, own, window))]


def _judged(
    engine: LLMEngine,
    repo: str,
    lang: str,
    items: list[RiskItem],
    found: list[list[Close]],
    own: dict[int, PullRequest],
) -> list[list[Close]]:
    """The closes the model keeps: of each item the rules close whole, its strongest candidates asked
    (a revert is a fact, not asked); an item the model gives no verdict on keeps the rules' closes."""
    from prdigest.analysis.followups.llm import CANDIDATES, Asked, FollowupCheck

    asked: list[tuple[int, Asked]] = []
    for i, (item, closes) in enumerate(zip(items, found, strict=True)):
        addressing = [c for c in closes if c.how == "addressed"]
        if addressing and set().union(*(c.covers for c in closes)) == set(item.prs):
            # The strongest ties first: the PR that covers most of the risk's PRs, then the earliest.
            ranked = sorted(addressing, key=lambda c: (-len(c.covers), own[c.number].merged_at, c.number))
            asked.append((i, Asked(item, tuple(own[c.number] for c in ranked[:CANDIDATES]))))
    verdicts = FollowupCheck(engine, repo, lang).addressed_by([a for _, a in asked], own)
    out = list(found)
    for (i, _), kept in zip(asked, verdicts, strict=True):
        if kept is not None:
            out[i] = [c for c in found[i] if c.how == "reverted" or c.number in kept]
    return out


def _distinct(items: Iterable[RiskItem]) -> list[RiskItem]:
    """One item per label and PRs, the earliest: a risk carried over several weeks is followed once."""
    seen: dict[tuple[str, tuple[int, ...]], RiskItem] = {}
    for item in items:
        seen.setdefault((item.label, tuple(sorted(item.prs))), item)
    return list(seen.values())


def _status(
    item: RiskItem, closes: list[Close], own: dict[int, PullRequest], window: Window
) -> RiskFollowup | None:
    """The item's follow-up at the end of ``window``: closed once each of its PRs is reverted or addressed
    (a test of one fix of three leaves the risk open); None when that was before the window."""
    followup = RiskFollowup(
        label=item.label, title=item.title, prs=list(item.prs), since=item.week.since, status="open"
    )
    first: dict[int, datetime] = {}  # each of its PRs: when the first later PR closed it
    for c in closes:
        for n in c.covers:
            first[n] = min(first.get(n, own[c.number].merged_at), own[c.number].merged_at)
    if set(first) != set(item.prs):
        return followup.model_copy(update={"weeks_open": (window.since - item.week.since).days // 7})
    if max(first.values()) < window.start:
        return None
    # Reverted when every one of its PRs is: the changes it named are gone.
    reverted = set().union(*(c.covers for c in closes if c.how == "reverted")) == set(item.prs)
    by = sorted({c.number for c in closes}, key=lambda n: (own[n].merged_at, n))
    return followup.model_copy(update={"status": "reverted" if reverted else "addressed", "by": by})
