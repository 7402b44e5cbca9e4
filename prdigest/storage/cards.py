"""The report cards the bot posted, so that a follow-up in a card's thread knows what it is about."""

from __future__ import annotations

from typing import Any

from prdigest.clock import utc_now
from prdigest.models import Report
from prdigest.storage.db import Store


def remember_card(store: Store, platform: str, chat_id: str, message_id: str, report: Report) -> None:
    w = report.window
    with store.writing() as tx:
        tx.upsert(
            "cards",
            [{"platform": platform, "chat_id": chat_id, "message_id": message_id, "repo": report.repo,
             "since": w.since.isoformat(), "until": w.until.isoformat(), "tz": w.tz, "lang": report.lang,
             "posted_at": utc_now().isoformat()}],
            pk=("platform", "chat_id", "message_id"),
        )  # fmt: skip


def card_of(store: Store, platform: str, chat_id: str, message_id: str | None) -> dict[str, Any] | None:
    """What the card ``message_id`` (a thread's root) is about (repo, since, until, tz, lang), when the
    bot posted it; else None."""
    if not message_id:
        return None
    key = [platform, chat_id, message_id]
    with store.reading() as tx:
        return tx.one(_POSTED, key) or tx.one(_DELIVERED, key)


_POSTED = (
    "select repo, since, until, tz, lang from cards where platform = ? and chat_id = ? and message_id = ?"
)
# A weekly delivery's card: its row names the message and the report.
_DELIVERED = (
    "select r.repo, r.since, r.until, r.tz, r.lang from deliveries d"
    " join subscriptions s on s.id = d.subscription_id join reports r on r.id = d.report_id"
    " where s.platform = ? and s.chat_id = ? and d.message_id = ?"
)
