"""What each LLM endpoint spent this calendar month (UTC), for its monthly token budget.

``llm_calls`` says which run made a call, ``llm_runs`` which endpoint a run used. A call whose
run has no row (logged before runs were kept) counts against every endpoint: a budget errs on
the side of spending less.
"""

from __future__ import annotations

from datetime import UTC, datetime

from prdigest.clock import utc_now
from prdigest.storage.db import Store


def record_run(store: Store, run_id: str, endpoint: str, model: str) -> None:
    """Note the endpoint of a run before its first request is sent (once; again is a no-op)."""
    row = {
        "run_id": run_id,
        "endpoint": endpoint,
        "model": model,
        "started_at": utc_now().isoformat(),
    }
    with store.writing() as tx:
        tx.insert("llm_runs", row, ignore=True)


def month_bounds(now: datetime) -> tuple[datetime, datetime]:
    """The calendar month (UTC) holding ``now``: [first instant, first instant of the next)."""
    now = now.astimezone(UTC)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = (
        start.replace(year=start.year + 1, month=1)
        if start.month == 12
        else start.replace(month=start.month + 1)
    )
    return start, end


def month_tokens(store: Store, endpoint: str, now: datetime) -> int:
    """Input plus output tokens of the calls to ``endpoint`` in the calendar month (UTC) of ``now``."""
    start, end = month_bounds(now)
    with store.reading() as tx:
        row = tx.one(
            # llm_calls(created_at) is indexed: the month's rows only are read.
            "select coalesce(sum(c.input_tokens + c.output_tokens), 0) as used from llm_calls c "
            "left join llm_runs r on r.run_id = c.run_id "
            "where c.created_at >= ? and c.created_at < ? and (r.endpoint = ? or r.endpoint is null)",
            [start.isoformat(), end.isoformat(), endpoint],
        )
    return int(row["used"]) if row else 0
