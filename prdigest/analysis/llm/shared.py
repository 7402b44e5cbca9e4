"""One LLM analysis per PR across the reports built at once: Monday's deliveries of a zh and an en team
(or two teams) of one repository, in threads or workers, each find the PRs merged since the last prepare
uncached. The first run to claim a PR's analysis asks the model; the others wait for its answer in the
cache, and ask themselves only if it gave none (failed, or its run died: the claim's lease runs out).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from prdigest.clock import utc_now
from prdigest.models import PRAnalysis, PullRequest
from prdigest.storage import Store, analysis_claims

LEASE = timedelta(minutes=5)  # longer than any analysis with its retries and repair
POLL_S = 0.5

Item = tuple[int, PullRequest]


class Claims:
    """A run's claims of the analyses it is about to ask for; ``keys[n]`` is PR n's analysis key."""

    def __init__(self, store: Store, holder: str, keys: dict[int, str]):
        self.store, self.holder, self.keys = store, holder, keys

    def split(self, todo: list[Item]) -> tuple[list[Item], list[Item]]:
        """The PRs this run claimed (to ask about), and those another run is asking about."""
        now = utc_now()
        mine = [
            item
            for item in todo
            if analysis_claims.claim(self.store, self.keys[item[0]], self.holder, now, LEASE)
        ]
        taken = {n for n, _ in mine}
        return mine, [item for item in todo if item[0] not in taken]

    def release(self, mine: list[Item]) -> None:
        analysis_claims.release(self.store, [self.keys[n] for n, _ in mine], self.holder)

    def awaited(
        self,
        theirs: list[Item],
        read: Callable[[str], PRAnalysis | None],
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[dict[int, PRAnalysis], list[Item]]:
        """The others' answers, read from the cache as their claims end (``read(key)``); and the PRs they
        gave none for, or still hold past the lease: this run asks about those itself."""
        found: dict[int, PRAnalysis] = {}
        waiting = list(theirs)
        give_up = time.monotonic() + LEASE.total_seconds()
        while waiting:
            still = analysis_claims.held(self.store, [self.keys[n] for n, _ in waiting], utc_now(), LEASE)
            for n, pr in list(waiting):
                if self.keys[n] not in still:
                    waiting.remove((n, pr))
                    if (analysis := read(self.keys[n])) is not None:
                        found[n] = analysis
            if not waiting or time.monotonic() >= give_up:
                break
            sleep(POLL_S)
        return found, [item for item in theirs if item[0] not in found]
