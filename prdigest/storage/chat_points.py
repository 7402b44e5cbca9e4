"""The GitHub points each chat's commands spent, by the hour (UTC), for [chat] github_points_per_hour."""

from __future__ import annotations

from datetime import UTC, datetime

from prdigest.storage.db import Store


def _hour(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H")


def spent(store: Store, chat: str, now: datetime) -> int:
    """The points ``chat`` spent in the hour (UTC) of ``now``."""
    with store.reading() as tx:
        row = tx.one("select points from chat_points where chat = ? and hour = ?", [chat, _hour(now)])
    return int(row["points"]) if row else 0


def add(store: Store, chat: str, now: datetime, points: int) -> None:
    """Count ``points`` more against ``chat`` in the hour of ``now``."""
    if points <= 0:
        return
    hour = _hour(now)
    with store.writing() as tx:
        tx.run("delete from chat_points where hour < ?", [hour])  # only this hour counts
        tx.run(
            "insert into chat_points (chat, hour, points) values (?, ?, ?) "
            "on conflict (chat, hour) do update set points = chat_points.points + excluded.points",
            [chat, hour, points],
        )
