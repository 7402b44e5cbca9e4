"""What is open now, for a report of a recent week: the source's open PRs needing attention and its
default branch's checks, read once when the report is made."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from prdigest.errors import SourceError
from prdigest.i18n import texts
from prdigest.models import Attention, Window

if TYPE_CHECKING:
    from prdigest.config.models import AttentionSettings
    from prdigest.sources.base import Source

# Open PRs are today's: they belong to the report of this week or the last one, not to a report of an
# older period, whose readers would take them for that period's.
RECENT = timedelta(days=8)


def read_attention(
    thresholds: AttentionSettings, source: Source | None, window: Window, now: datetime, lang: str
) -> tuple[Attention | None, bool, list[str]]:
    """The attention section of a report of ``window`` made at ``now``: (the section, whether the source
    cannot tell (a clone, the cache alone), the report's warnings). A failed read is a warning, never a
    lost report; a window that ended before the last week gets no section."""
    if window.end < now - RECENT:
        return None, False, []
    if source is None:
        return None, True, []
    try:
        found = source.attention(thresholds, now)
    except SourceError as exc:
        return None, False, [texts(lang)["att_unreadable"].format(repo=source.repo, reason=str(exc))]
    return found, found is None, []
