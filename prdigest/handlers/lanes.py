"""Which lane a chat request runs in, decided before it runs: answers from the cache (fast) apart from
LLM calls, source reads and long reports (slow), so that a cached `top` never waits behind questions
to the LLM.

The decision costs the rules' reading of the message and a few indexed reads of the cache; it never
calls the LLM, never builds a source and never reads one. When unsure, a request is slow: a slow
request only waits longer, a wrong fast one would hold a fast worker.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass

from prdigest.handlers.commands import spec
from prdigest.handlers.context import Services
from prdigest.handlers.request import Request
from prdigest.handlers.scope import Answer, asked_week, resolve, window_of
from prdigest.storage import coverage


@dataclass(frozen=True)
class Lane:
    slow: bool
    # With an LLM configured, what a run fills the LLM's caches for (the period's report, one PR):
    # requests for it are fast once a run of it has answered.
    warms: Hashable | None = None


FAST, SLOW = Lane(slow=False), Lane(slow=True)


def lane_of(req: Request, svc: Services, warm: Collection[Hashable] = ()) -> Lane:
    """The lane of a request as read on arrival; ``warm`` holds the ``Lane.warms`` keys of runs that
    answered already in this process."""
    llm = svc.settings.llm is not None
    intent, ctx = req.reading.intent, req.ctx
    if req.reading.error is not None:
        return FAST  # the message cannot be read: answered at once with why
    if req.reading.routable and llm:
        return SLOW  # the LLM routes it (handlers.dispatch)
    kind = spec(intent.command).lane  # the command's own (handlers/commands.py LaneKind)
    if kind == "fast":
        return FAST
    if kind == "question" and llm:
        return SLOW
    if kind == "slow":
        return SLOW  # report: a sync and a whole report
    if ctx.direct:
        return SLOW  # what a direct message sees waits for the platform's word on the asker's chats
    try:
        scope = resolve(intent, ctx, svc)
    except Answer:
        return FAST  # answered at once ("which repository?")
    if kind == "pr":
        if intent.pr is None:
            return FAST  # "which PR?"
        pr = svc.store.get_pr(scope.repo, intent.pr)
        if pr is None:
            return SLOW  # the source may fetch it
        if not llm:
            return FAST
        key: Hashable = ("explain", scope.repo, intent.pr, scope.lang)
        covered = any(
            isinstance(k, tuple) and k[:2] == ("report", scope.repo) and k[3] == scope.lang
            and pr.merged_at is not None and k[2].contains(pr.merged_at)
            for k in warm
        )  # fmt: skip
        return Lane(slow=not (covered or key in warm), warms=key)
    # A question is answered from its period's PRs by their fields (the last week's when it names none), else
    # by a full-text search of the cache.
    window = asked_week(intent, ctx, scope, svc) if kind == "question" else window_of(intent, ctx, scope, svc)
    if window is None or coverage.missing(svc.store, scope.repo, window, svc.clock()):
        return SLOW  # days the cache lacks: a source may be read
    if (window.until - window.since).days + 1 > svc.settings.chat.max_sync_days:
        return SLOW  # a long period: a report over months of PRs
    if not llm:
        return FAST
    key = ("report", scope.repo, window, scope.lang)
    return Lane(slow=key not in warm, warms=key)
