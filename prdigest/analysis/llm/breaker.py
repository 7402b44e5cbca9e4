"""A run stops asking a model that keeps failing it.

A weak model (a small local one) fails nearly every request, invalid output, a reply the quality gate
refuses, a timeout, and each failure costs seconds to a minute of its server's time: asking it every
other PR and the narrative costs the report minutes and ends in the rules' answers anyway. So once the
run's first ``FAILS_TO_STOP`` requests have failed before any has been answered well, the run sends no
more: the rules analyse the PRs left (counted as ``stopped``, not cached, so a later report asks again)
and write the narrative, and the report says so. A model that has answered well once in the run is never
stopped: a strong one's occasional junk is the gate's and the repair's to handle.
"""

from __future__ import annotations

import threading

from prdigest.analysis.llm.client import LLMUnavailable
from prdigest.i18n import texts

FAILS_TO_STOP = 3
# The outcomes that say the model cannot do the job; a refused way of asking (``rejected``) is the
# ladder's to step over, and a server's own trouble (rate limits, outages) is not the model's.
FAILED = frozenset({"invalid", "gate", "timeout"})


class LLMStopped(LLMUnavailable):
    """The run has stopped asking the model: the rules decide what is left."""


class Breaker:
    """Counts a run's requests by outcome; thread-safe, the engine sends in parallel."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.good = 0
        self.failed = 0
        self.stopped = 0  # requests not sent because the run stopped asking

    def note(self, outcome: str) -> None:
        """Count a request's outcome; after a failed one, raise LLMStopped if the run has now failed as
        the module says (so that not even its repair is sent)."""
        with self._lock:
            self.good += outcome == "ok"
            self.failed += outcome in FAILED
        if outcome in FAILED:
            self.check()

    @property
    def open(self) -> bool:
        with self._lock:
            return self.failed >= FAILS_TO_STOP and self.good == 0

    def check(self) -> None:
        """Raise LLMStopped once the model has failed the run as the module says."""
        if self.open:
            with self._lock:
                self.stopped += 1
                failed, asked = self.failed, self.failed + self.good
            raise LLMStopped(f"the model failed {failed} of the run's {asked} requests; no more are sent")

    def note_text(self, model: str, lang: str) -> str | None:
        """What a report says when the run stopped asking, else None."""
        if not self.stopped:
            return None
        asked = self.failed + self.good
        return texts(lang)["llm_stopped"].format(model=model, failed=self.failed, asked=asked)
