"""The LLM rate limit's line kept in the store: every connection (every worker process) books its turns
in one line, whichever dialect, and a turn too late is refused without being booked."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prdigest.analysis.llm.rate import StoreTurns
from prdigest.config.storage_url import parse_store_url
from prdigest.storage import Store

ENDPOINT, MODEL = "https://llm.example/v1", "m"
NOW = 1_000_000.0  # a fixed clock: each booking's wait is its place in the line times the turn


@pytest.fixture(params=["sqlite", "postgresql"])
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens a new Store (its own connections, as another process's) on one database of each dialect."""
    where = (
        tmp_path / "rate.db"
        if request.param == "sqlite"
        else parse_store_url(request.getfixturevalue("pg_database"))
    )
    opened: list[Store] = []

    def open_one() -> Store:
        opened.append(Store(where))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


def turns(store: Store, endpoint: str = ENDPOINT, model: str = MODEL) -> StoreTurns:
    return StoreTurns(store, endpoint, model, clock=lambda: NOW)


def test_two_stores_booking_at_once_share_one_line(connect: Callable[[], Store]) -> None:
    lines = [turns(connect()), turns(connect())]
    waits: list[float | None] = []
    lock = threading.Lock()

    def book(line: StoreTurns) -> None:
        for _ in range(5):
            wait = line.book(0.5, patience=3600)
            with lock:
                waits.append(wait)

    threads = [threading.Thread(target=book, args=(lines[i % 2],), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(waits) == 40 and None not in waits
    # Every booking took the next turn: none shared one, none was skipped.
    assert sorted(w for w in waits if w is not None) == pytest.approx([0.5 * k for k in range(40)])


def test_a_turn_past_the_patience_is_refused_and_not_booked(connect: Callable[[], Store]) -> None:
    first, second = turns(connect()), turns(connect())
    assert first.book(10.0, patience=0) == 0.0  # the line was empty: at once
    assert second.book(10.0, patience=9.5) is None  # its turn is 10 s away
    assert second.book(10.0, patience=10) == pytest.approx(10.0)  # the refusal took no turn
    assert first.book(1.0, patience=60) == pytest.approx(20.0)


def test_each_endpoint_and_model_has_its_own_line(connect: Callable[[], Store]) -> None:
    store = connect()
    assert turns(store).book(30.0, patience=0) == 0.0
    assert turns(store, model="other").book(30.0, patience=0) == 0.0
    assert turns(store, endpoint="http://127.0.0.1:8000/v1").book(30.0, patience=0) == 0.0
    assert turns(store).book(30.0, patience=5) is None


def test_a_line_whose_turns_have_passed_starts_at_once(connect: Callable[[], Store]) -> None:
    store = connect()
    assert turns(store).book(30.0, patience=0) == 0.0
    later = StoreTurns(store, ENDPOINT, MODEL, clock=lambda: NOW + 31)
    assert later.book(30.0, patience=0) == 0.0
    assert turns(store).book(1.0, patience=3600) == pytest.approx(61.0)  # behind the later booking
