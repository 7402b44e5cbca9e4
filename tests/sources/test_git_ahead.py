"""git's output held between its pump and the parser: bounded by its bytes, however small the pipe's
blocks are, and given back in order."""

from __future__ import annotations

import threading

import pytest

from prdigest.sources.git import output
from prdigest.sources.git.output import Ahead


def test_blocks_come_back_in_order_and_the_end_after_them() -> None:
    blocks = Ahead()
    for block in (b"a", b"bc", b""):
        blocks.put(block)
    assert [blocks.get(), blocks.get(), blocks.get()] == [b"a", b"bc", b""]


def test_the_pump_waits_once_the_bytes_ahead_reach_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "AHEAD", 4)
    blocks = Ahead()
    for block in (b"ab", b"cd"):  # 4 bytes: the bound, in two blocks of a pipe's size
        blocks.put(block)
    moved = threading.Event()

    def put() -> None:
        blocks.put(b"ef")
        moved.set()

    threading.Thread(target=put, daemon=True).start()
    assert not moved.wait(0.2)  # held while 4 bytes wait for the parser
    assert blocks.get() == b"ab"
    assert moved.wait(5)  # room again: the block is moved
    assert [blocks.get(), blocks.get()] == [b"cd", b"ef"]


def test_dropping_makes_room_for_a_pump_that_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "AHEAD", 2)
    blocks = Ahead()
    blocks.put(b"ab")
    moved = threading.Event()
    threading.Thread(target=lambda: (blocks.put(b""), moved.set()), daemon=True).start()
    blocks.drop(timeout=0.05)
    assert moved.wait(5) and blocks.get() == b""
