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
    fence: int = 0  # the claim's number: each claim of the key takes the next


def get_delivery(store: Store, key: str) -> Delivery | None:
    with store.reading() as tx:
        row = tx.one("select * from deliveries where key = ?", [key])
    return _delivery(row) if row else None


def claim(store: Store, key: str, subscription_id: int, week: str, worker: str, lease: timedelta) -> Claim:
    """Take the key for this worker: a new key, or a claim whose lease ran out (its worker died).

    Returns the row as it was before (None for a new key) and the claim's fence, or raises Busy when
    another worker holds a live claim or the week is already posted."""
    now = utc_now()
    with store.writing() as tx:
        new = tx.insert(
            "deliveries",
            {"key": key, "subscription_id": subscription_id, "week": week, "status": "claimed",
             "message_id": "", "report_id": None, "claimed_by": worker, "claimed_at": now.isoformat(),
             "completed_at": "", "fence": 1},
            ignore=True,
        )  # fmt: skip
        if new:
            return Claim(None, 1)
        # Taken: the row is locked (PostgreSQL) until this claim commits, so one worker takes it over.
        row = tx.one("select * from deliveries where key = ?" + tx.for_update, [key])
        if row is None:
            raise RuntimeError(f"delivery {key}: neither inserted nor found")
        before = _delivery(row)
        if before.status != "claimed" or (before.claimed_by != worker and now - before.claimed_at < lease):
            raise Busy(before)
        fence = before.fence + 1
        claimed = {"claimed_by": worker, "claimed_at": now.isoformat(), "fence": fence}
        tx.update("deliveries", {"key": key}, claimed)
        return Claim(before, fence)


@dataclass(frozen=True)
class Claim:
    before: Delivery | None  # the row as it was (None: a new key)
    fence: int


def renew(store: Store, key: str, fence: int) -> bool:
    """Extend the lease of claim ``fence`` from now; False when the key is no longer this claim's (its
    lease ran out and another worker took it over, or it was completed)."""
    with store.writing() as tx:
        renewed = tx.run(
            "update deliveries set claimed_at = ? where key = ? and fence = ? and status = 'claimed'",
            [utc_now().isoformat(), key, fence],
        )
    return renewed == 1


def owns(store: Store, key: str, fence: int) -> bool:
    """Whether claim ``fence`` is still the key's open claim."""
    row = get_delivery(store, key)
    return row is not None and row.status == "claimed" and row.fence == fence


def complete(
    store: Store, key: str, status: str, message_id: str, report_id: int | None, fence: int | None = None
) -> None:
    """Record the key's outcome; with ``fence``, only while that claim is the key's (else StaleClaim)."""
    with store.writing() as tx:
        done = tx.run(
            "update deliveries set status = ?, message_id = ?, report_id = ?, completed_at = ? where key = ?"
            + _of(fence),
            [status, message_id, report_id, utc_now().isoformat(), key, *_fenced(fence)],
        )
        if fence is not None and done != 1:
            raise StaleClaim(key, fence)


def release(store: Store, key: str, fence: int | None = None) -> None:
    """Give a claim back after a failed post, so the next run tries again at once (with ``fence``: only
    while that claim is the key's)."""
    with store.writing() as tx:
        tx.run(
            "delete from deliveries where key = ? and status = 'claimed'" + _of(fence), [key, *_fenced(fence)]
        )


def uncertain(store: Store, key: str, fence: int | None = None) -> None:
    """A post that may have gone out (a send timed out, the platform answered 5xx): keep the claim,
    expired, so the next run takes it over and looks for the post in the chat before posting again
    (with ``fence``: only while that claim is the key's)."""
    expired = datetime.fromtimestamp(0, UTC).isoformat()
    with store.writing() as tx:
        tx.run(
            "update deliveries set claimed_by = '', claimed_at = ? where key = ? and status = 'claimed'"
            + _of(fence),
            [expired, key, *_fenced(fence)],
        )


def give_up(store: Store, key: str, subscription_id: int, week: str) -> None:
    """Record that the key's week will not be delivered (it kept failing until its grace period ran out):
    no later run claims it."""
    now = utc_now().isoformat()
    row = {
        "key": key, "subscription_id": subscription_id, "week": week, "status": "given_up", "message_id": "",
        "report_id": None, "claimed_by": "", "claimed_at": now, "completed_at": now,
    }  # fmt: skip
    with store.writing() as tx:
        tx.upsert("deliveries", [row], pk=["key"])


def _of(fence: int | None) -> str:
    return "" if fence is None else " and fence = ?"


def _fenced(fence: int | None) -> list[int]:
    return [] if fence is None else [fence]


class StaleClaim(Exception):
    def __init__(self, key: str, fence: int):
        super().__init__(f"the claim {fence} of {key} was taken over by another worker")


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
    with store.writing() as tx:
        tx.insert("report_pages", {
            "token": token, "report_id": report_id, "created_at": utc_now().isoformat(),
            "chat_id": chat_id, "viewer": viewer,
        })  # fmt: skip
    return token


def report_page(store: Store, token: str) -> ReportPage | None:
    with store.reading() as tx:
        sql = "select report_id, created_at, chat_id, viewer from report_pages where token = ?"
        row = tx.one(sql, [token])
    if row is None:
        return None
    viewer: Viewer = "asker" if row["viewer"] == "asker" else "chat"
    return ReportPage(row["report_id"], datetime.fromisoformat(row["created_at"]), row["chat_id"], viewer)


def _delivery(row: dict[str, Any]) -> Delivery:
    return Delivery(
        key=row["key"], subscription_id=row["subscription_id"], week=row["week"], status=row["status"],
        message_id=row["message_id"] or "", report_id=row["report_id"], claimed_by=row["claimed_by"] or "",
        claimed_at=datetime.fromisoformat(row["claimed_at"]), fence=row.get("fence") or 0,
    )  # fmt: skip
