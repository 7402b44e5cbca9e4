"""A weekly delivery's nudges ([attention] mention_reviewers): the people asked to review each open PR
waiting for review (its requested reviewers, else its code owners) as the delivering chat's users.

The report is rendered with ``Report.mentions`` (GitHub login -> the adapter's mention); a login no
chat user is found for stays a plain name. Off (the default), the report is sent as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from prdigest.bot.adapters import ChatAdapter, LookupDenied
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


def lookup_warnings(settings: Settings, adapters: list[tuple[str, ChatAdapter]]) -> list[str]:
    """Whether each platform lets the app find the [[people]] without its id by email, asked once with
    the first such email (for `config check`); a line for each platform that does not, or could not say.
    Nothing is asked when nudges are off or every person has the platform's id."""
    if not settings.attention.mention_reviewers:
        return []
    out = []
    for platform, adapter in adapters:
        emails = [e for p in settings.people if getattr(p, platform, None) is None for e in p.email]
        if not emails:
            continue
        try:
            adapter.user_by_email(emails[0])
        except LookupDenied as denied:
            out.append(f"{platform}: {denied}; people without a {platform} id in [[people]] stay plain names")
        except Exception as exc:  # any failure of the platform: the check says it, the rest goes on
            out.append(f"{platform}: could not check finding people by email: {str(exc)[:200]}")
    return out
