"""Subscriptions in the cache: one row per (platform, chat, repository)."""

from __future__ import annotations

from prdigest.clock import utc_now
from prdigest.storage.db import Store
from prdigest.subscription import Subscription


def save_subscription(store: Store, sub: Subscription) -> Subscription:
    """Create or update the chat's subscription of that repository; returns it with its id."""
    created = sub.created_at or utc_now()
    with store.writing() as db:
        rows = list(
            db.query(
                "select id from subscriptions where platform = ? and chat_id = ? and repo = ?",
                [sub.platform, sub.chat_id, sub.repo],
            )
        )
        row = {
            "platform": sub.platform,
            "chat_id": sub.chat_id,
            "repo": sub.repo,
            "created_at": created.isoformat(),
        }
        if rows:
            sub_id = rows[0]["id"]
            saved = sub.model_copy(update={"id": sub_id, "created_at": created})
            db.table("subscriptions").update(sub_id, {**row, "data": saved.model_dump_json()})
        else:
            sub_id = db.table("subscriptions").insert({**row, "data": ""}).last_pk
            saved = sub.model_copy(update={"id": sub_id, "created_at": created})
            db.table("subscriptions").update(sub_id, {"data": saved.model_dump_json()})
    return saved


def delete_subscription(store: Store, platform: str, chat_id: str, repo: str) -> bool:
    with store.writing() as db:
        cursor = db.execute(
            "delete from subscriptions where platform = ? and chat_id = ? and repo = ?",
            [platform, chat_id, repo],
        )
        return cursor.rowcount > 0


def list_subscriptions(
    store: Store, platform: str | None = None, chat_id: str | None = None
) -> list[Subscription]:
    where, args = [], []
    if platform is not None:
        where.append("platform = ?")
        args.append(platform)
    if chat_id is not None:
        where.append("chat_id = ?")
        args.append(chat_id)
    sql = (
        "select data from subscriptions" + (" where " + " and ".join(where) if where else "") + " order by id"
    )
    with store.reading() as db:
        return [Subscription.model_validate_json(row["data"]) for row in db.query(sql, args)]


def get_subscription(store: Store, sub_id: int) -> Subscription | None:
    with store.reading() as db:
        rows = list(db.query("select data from subscriptions where id = ?", [sub_id]))
    return Subscription.model_validate_json(rows[0]["data"]) if rows else None
