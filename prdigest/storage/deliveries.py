"""Delivery rows (exactly once per subscription and week) and report page tokens."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from prdigest.clock import utc_now
from prdigest.storage.db import Store


@dataclass
class Delivery:
    key: str
    subscription_id: int
    week: str
    status: str
    message_id: str
    report_id: int | None
    claimed_by: str
    claimed_at: datetime


def get_delivery(store: Store, key: str) -> Delivery | None:
    with store.reading() as db:
        rows = list(db.query("select * from deliveries where key = ?", [key]))
    return _delivery(rows[0]) if rows else None


def claim(
    store: Store, key: str, subscription_id: int, week: str, worker: str, lease: timedelta
) -> Delivery | None:
    """Take the key for this worker: a new key, or a claim whose lease ran out (its worker died).

    Returns the row as it was before (None for a new key), or raises Busy when another worker
    holds a live claim or the week is already posted."""
    now = utc_now()
    with store.writing() as db:
        rows = list(db.query("select * from deliveries where key = ?", [key]))
        if not rows:
            db.table("deliveries").insert(
                {"key": key, "subscription_id": subscription_id, "week": week, "status": "claimed",
                 "message_id": "", "report_id": None, "claimed_by": worker, "claimed_at": now.isoformat(),
                 "completed_at": ""}
            )  # fmt: skip
            return None
        before = _delivery(rows[0])
        if before.status != "claimed" or (before.claimed_by != worker and now - before.claimed_at < lease):
            raise Busy(before)
        db.table("deliveries").update(key, {"claimed_by": worker, "claimed_at": now.isoformat()})
        return before


def complete(store: Store, key: str, status: str, message_id: str, report_id: int | None) -> None:
    with store.writing() as db:
        db.table("deliveries").update(
            key,
            {"status": status, "message_id": message_id, "report_id": report_id,
             "completed_at": utc_now().isoformat()},
        )  # fmt: skip


def release(store: Store, key: str) -> None:
    """Give a claim back after a failed post, so the next run tries again at once."""
    with store.writing() as db:
        db.execute("delete from deliveries where key = ? and status = 'claimed'", [key])


def uncertain(store: Store, key: str) -> None:
    """A post that may have gone out (a send timed out, the platform answered 5xx): keep the claim,
    expired, so the next run takes it over and looks for the post in the chat before posting again."""
    expired = datetime.fromtimestamp(0, UTC).isoformat()
    with store.writing() as db:
        db.execute(
            "update deliveries set claimed_by = '', claimed_at = ? where key = ? and status = 'claimed'",
            [expired, key],
        )


class Busy(Exception):
    def __init__(self, row: Delivery):
        super().__init__(f"delivery {row.key} is {row.status}")
        self.row = row


Viewer = Literal["chat", "asker"]  # who a page was granted to: the chat's subscriptions, or the asker


@dataclass(frozen=True)
class ReportPage:
    report_id: int
    created_at: datetime  # when its link was made: the page expires counted from then
    chat_id: str | None = None  # the chat it was made for (None: a page older than the record)
    viewer: Viewer = "chat"


def page_token(store: Store, report_id: int, chat_id: str | None = None, viewer: Viewer = "chat") -> str:
    token = secrets.token_urlsafe(16)
    with store.writing() as db:
        db.table("report_pages").insert({
            "token": token, "report_id": report_id, "created_at": utc_now().isoformat(),
            "chat_id": chat_id, "viewer": viewer,
        })  # fmt: skip
    return token


def report_page(store: Store, token: str) -> ReportPage | None:
    with store.reading() as db:
        sql = "select report_id, created_at, chat_id, viewer from report_pages where token = ?"
        rows = list(db.query(sql, [token]))
    if not rows:
        return None
    row = rows[0]
    viewer: Viewer = "asker" if row["viewer"] == "asker" else "chat"
    return ReportPage(row["report_id"], datetime.fromisoformat(row["created_at"]), row["chat_id"], viewer)


def _delivery(row: dict[str, Any]) -> Delivery:
    return Delivery(
        key=row["key"], subscription_id=row["subscription_id"], week=row["week"], status=row["status"],
        message_id=row["message_id"] or "", report_id=row["report_id"], claimed_by=row["claimed_by"] or "",
        claimed_at=datetime.fromisoformat(row["claimed_at"]),
    )  # fmt: skip
