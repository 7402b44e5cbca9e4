"""Chat users found by email (Slack users.lookupByEmail, Lark's contact API), kept a day: a report's
mentions ask the platform once a day per person, not once per report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from prdigest.storage.db import Store

# How long an answer holds, found or not: a colleague who joins the chat is mentioned from the next day.
KEPT = timedelta(days=1)


@dataclass(frozen=True)
class Looked:
    """What the platform answered for an email: its user's id, or None when it knows no such user."""

    user_id: str | None
    looked_at: datetime


def looked_up(store: Store, platform: str, email: str, now: datetime) -> Looked | None:
    """The platform's answer for ``email`` (any capitals) when it was asked less than a day before
    ``now``; None when it was not, or longer ago (or, by another clock, later)."""
    with store.reading() as tx:
        row = tx.one(
            "select user_id, looked_at from chat_users where platform = ? and email = ?",
            [platform, email.casefold()],
        )
    if row is None:
        return None
    looked_at = datetime.fromisoformat(row["looked_at"])
    if not looked_at <= now < looked_at + KEPT:
        return None
    return Looked(row["user_id"], looked_at)


def remember(store: Store, platform: str, email: str, user_id: str | None, now: datetime) -> None:
    """Keep the platform's answer for ``email``: its user's id, or None for no such user."""
    row = {
        "platform": platform,
        "email": email.casefold(),
        "user_id": user_id,
        "looked_at": now.astimezone(UTC).isoformat(),
    }
    with store.writing() as tx:
        tx.upsert("chat_users", [row], pk=("platform", "email"))
