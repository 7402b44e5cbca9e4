"""Which run is asking the LLM about a PR now: a PR merged since the last prepare is in every report of
its repository on Monday (a zh and an en team, two teams), built at once by threads and workers; the
first to claim its analysis asks, and the others wait for its answer instead of paying for it again.

A claim is a row per analysis key, taken in one statement; one older than its lease (its run died) is
taken over. Times are ISO 8601 text, UTC, as everywhere in the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from prdigest.storage.db import Store


def claim(store: Store, key: str, holder: str, now: datetime, lease: timedelta) -> bool:
    """Whether ``holder`` now holds the analysis of ``key``: no one did, or the claim's lease ran out."""
    with store.writing(durable=False) as tx:  # a claim lost to a server crash costs one extra request
        row = tx.one(
            "insert into analysis_claims (key, holder, claimed_at) values (?, ?, ?) "
            "on conflict (key) do update set holder = excluded.holder, claimed_at = excluded.claimed_at "
            "where analysis_claims.claimed_at < ? returning holder",
            [key, holder, now.isoformat(), (now - lease).isoformat()],
        )
    return row is not None and row["holder"] == holder


def renew(store: Store, keys: Iterable[str], holder: str, now: datetime) -> None:
    """``holder`` is still asking: its claims of ``keys`` start their lease again at ``now``."""
    with store.writing(durable=False) as tx:
        tx.run_many(
            "update analysis_claims set claimed_at = ? where key = ? and holder = ?",
            [(now.isoformat(), k, holder) for k in keys],
        )


def release(store: Store, keys: Iterable[str], holder: str) -> None:
    """``holder``'s claims of ``keys`` ended (answered or failed): a waiting run looks in the cache."""
    with store.writing(durable=False) as tx:
        tx.run_many("delete from analysis_claims where key = ? and holder = ?", [(k, holder) for k in keys])


def held(store: Store, keys: Iterable[str], now: datetime, lease: timedelta) -> set[str]:
    """The ``keys`` another run holds still (within the lease)."""
    wanted = list(keys)
    if not wanted:
        return set()
    marks = ",".join("?" * len(wanted))
    with store.reading() as tx:
        rows = tx.rows(
            f"select key from analysis_claims where key in ({marks}) and claimed_at >= ?",
            [*wanted, (now - lease).isoformat()],
        )
    return {row["key"] for row in rows}
