"""The chats known to be direct messages: a Lark button's event does not say whether its chat is one."""

from __future__ import annotations

from prdigest.storage.db import Store


def remember_direct(store: Store, platform: str, chat_id: str) -> None:
    with store.writing() as tx:
        tx.run(
            "insert into direct_chats (platform, chat_id) values (?, ?) on conflict do nothing",
            [platform, chat_id],
        )


def is_direct(store: Store, platform: str, chat_id: str) -> bool:
    with store.reading() as tx:
        sql = "select 1 as found from direct_chats where platform = ? and chat_id = ?"
        return tx.one(sql, [platform, chat_id]) is not None
