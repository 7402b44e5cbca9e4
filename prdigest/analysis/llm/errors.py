"""Why the LLM gave no usable answer: the rules engine then answers instead. Apart from the client, so
that what sends through it (the rate limit) can refuse the same way."""

from __future__ import annotations

from prdigest.errors import PrdigestError


class LLMError(PrdigestError):
    """The LLM gave no usable answer; the rules engine answers instead."""


class LLMUnavailable(LLMError):
    """The request failed: timeout, rate limit, server error, refused key, unreachable server."""

    def __init__(self, message: str, *, fatal: bool = False, outcome: str = "error"):
        super().__init__(message)
        # Fatal: no later request of this run can succeed (wrong key or model, server down).
        self.fatal = fatal
        self.outcome = outcome  # why, for a request refused before it was sent (the rate limit's turn)


class LLMContextFull(LLMUnavailable):
    """The prompt did not fit the server's context: asked again with less evidence, it may."""


class LLMBadOutput(LLMError):
    """The answer stayed invalid after the repair request, or no rung of the ladder was accepted."""
