"""A weekly delivery's nudges ([attention] mention_reviewers): the people asked to review each open PR
waiting for review (its requested reviewers, else its code owners) as the delivering chat's users.

The report is rendered with ``Report.mentions`` (GitHub login -> the adapter's mention); a login no
chat user is found for stays a plain name. Off (the default), the report is sent as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from prdigest.bot.adapters import ChatAdapter
from prdigest.bot.people import mentions
from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.models import Report
from prdigest.render.attention import open_prs, waiting_for_review
from prdigest.storage import Store

Nudge = Callable[[Report], Report]


def asked(report: Report) -> list[str]:
    """The logins the report's open PRs waiting for review asked (a team's: its repositories'), once each."""
    shown = report.parts or [report]
    return list(dict.fromkeys(login for part in shown for op in open_prs(part) if waiting_for_review(op)
                              for login in op.asked))  # fmt: skip


def nudge_for(settings: Settings, store: Store, adapter: ChatAdapter, platform: str) -> Nudge | None:
    """What adds the chat's mentions to a report before the adapter renders it; None when the setting is
    off."""
    if not settings.attention.mention_reviewers:
        return None

    def nudge(report: Report) -> Report:
        logins = asked(report)
        if not logins:
            return report
        found = mentions(settings, store, adapter, platform, logins, utc_now())
        parts = [part.model_copy(update={"mentions": found}) for part in report.parts]
        return report.model_copy(update={"mentions": found, "parts": parts})

    return nudge
