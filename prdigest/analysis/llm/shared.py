"""One LLM analysis per PR across the reports built at once: Monday's deliveries of a zh and an en team
(or two teams) of one repository, in threads or workers, each find the PRs merged since the last prepare
uncached. The first run to claim a PR's analysis asks the model; the others wait for its answer in the
cache, and ask themselves only if it gave none (failed, or its run died: the claim's lease runs out).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from prdigest.clock import utc_now
from prdigest.models import PRAnalysis, PullRequest
from prdigest.storage import Store, analysis_claims

# A claim lasts this long unless its run renews it (every third of it, while it asks): a run that died
# (a worker killed) leaves its PRs to the others within the lease.
LEASE = timedelta(seconds=30)
POLL_S = 0.5
MAX_WAIT = timedelta(minutes=10)  # a live run's answers, however slow the model: then ask them here

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

    @contextmanager
    def holding(self, mine: list[Item]) -> Iterator[None]:
        """Within the block the claims of ``mine`` are renewed; after it they are released."""
        keys = [self.keys[n] for n, _ in mine]
        done = threading.Event()

        def renew() -> None:
            while not done.wait(LEASE.total_seconds() / 3):
                analysis_claims.renew(self.store, keys, self.holder, utc_now())

        beat = threading.Thread(target=renew, name="prdigest-claims", daemon=True)
        if keys:
            beat.start()
        try:
            yield
        finally:
            done.set()
            if keys:
                beat.join(timeout=5)
                analysis_claims.release(self.store, keys, self.holder)

    def awaited(
        self,
        theirs: list[Item],
        read: Callable[[str], PRAnalysis | None],
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[dict[int, PRAnalysis], list[Item]]:
        """The others' answers, read from the cache as their claims end (``read(key)``); and the PRs they
        gave none for (failed, or their run died: its claims were not renewed), or still hold after
        ``MAX_WAIT``: this run asks about those itself."""
        found: dict[int, PRAnalysis] = {}
        waiting = list(theirs)
        give_up = time.monotonic() + MAX_WAIT.total_seconds()
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
