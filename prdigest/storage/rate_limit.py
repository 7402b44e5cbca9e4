"""When each LLM endpoint (and model) is next free to take a request: the rate limit that every thread
and process sharing this store honours (`analysis/llm/rate.py` says how long a request occupies it).

One statement per request, in a transaction of its own: the row is locked for that statement alone
(PostgreSQL: the upsert's row lock; SQLite: the file's write lock), never while the caller waits its turn.
"""

from __future__ import annotations

from prdigest.storage.db import Store

# The endpoint's next free time, or now if that has passed: its turn begins then.
_TURN = "(case when llm_rate.free_at > ? then llm_rate.free_at else ? end)"


def book(store: Store, endpoint: str, model: str, now: float, seconds: float, latest: float) -> float | None:
    """Occupy the endpoint for ``seconds`` from its next free time, if that is no later than ``latest``:
    that start time; None (nothing booked) if it is later. Times are seconds since the epoch, by the
    caller's clock: the clocks of the machines sharing a store agree to well within a turn."""
    with store.writing(durable=False) as tx:  # a booking lost to a crash of the server costs one turn
        row = tx.one(
            "insert into llm_rate (endpoint, model, free_at) values (?, ?, ?) "
            f"on conflict (endpoint, model) do update set free_at = {_TURN} + ? "
            f"where {_TURN} <= ? returning free_at",
            [endpoint, model, now + seconds, now, now, seconds, now, now, latest],
        )
    return None if row is None else float(row["free_at"]) - seconds
