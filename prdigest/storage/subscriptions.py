"""Subscriptions in the cache: one row per (platform, chat, repository)."""

from __future__ import annotations

from prdigest.clock import utc_now
from prdigest.storage.db import Store
from prdigest.subscription import Subscription


def save_subscription(store: Store, sub: Subscription) -> Subscription:
    """Create or update the chat's subscription of that repository; returns it with its id."""
    created = sub.created_at or utc_now()
    with store.writing() as tx:
        tx.lock(f"subscription {sub.platform} {sub.chat_id} {sub.repo}")  # its row is read, then written
        found = tx.one(
            "select id from subscriptions where platform = ? and chat_id = ? and repo = ?",
            [sub.platform, sub.chat_id, sub.repo],
        )
        row = {
            "platform": sub.platform,
            "chat_id": sub.chat_id,
            "repo": sub.repo,
            "created_at": created.isoformat(),
        }
        if found:
            sub_id = int(found["id"])
            saved = sub.model_copy(update={"id": sub_id, "created_at": created})
            tx.update("subscriptions", {"id": sub_id}, {**row, "data": saved.model_dump_json()})
        else:
            sub_id = tx.insert_id("subscriptions", {**row, "data": ""})
            saved = sub.model_copy(update={"id": sub_id, "created_at": created})
            tx.update("subscriptions", {"id": sub_id}, {"data": saved.model_dump_json()})
    return saved


def delete_subscription(store: Store, platform: str, chat_id: str, repo: str) -> bool:
    with store.writing() as tx:
        sql = "delete from subscriptions where platform = ? and chat_id = ? and repo = ?"
        return tx.run(sql, [platform, chat_id, repo]) > 0


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
    with store.reading() as tx:
        rows = tx.rows(sql, args)
    return [Subscription.model_validate_json(row["data"]) for row in rows]


def get_subscription(store: Store, sub_id: int) -> Subscription | None:
    with store.reading() as tx:
        row = tx.one("select data from subscriptions where id = ?", [sub_id])
    return Subscription.model_validate_json(row["data"]) if row else None
