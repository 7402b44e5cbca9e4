"""A repository named in other capitals is the same repository (GitHub's names ignore case): its
settings apply and its cached PRs are found."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import demo_services, demo_source

from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.storage import Store

CONSOLE = Context(platform="console", chat_id="console", user_id="me")
HIDDEN = "hyzhang-ml"  # the [[repos]] entry's filters leave this author's PRs out


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    store = Store(tmp_path / "demo.db")
    store.upsert_prs(demo_source().prs)
    entry = {"name": "acme-ml/trainer", "filters": {"authors": [f"!{HIDDEN}"]}}
    yield demo_services(load_settings(env={}, overrides={("repos",): [entry]}), store)
    store.close()


@pytest.mark.parametrize(
    "text", ["top 30 acme-ml/trainer", "top 30 ACME-ML/Trainer", "重点 30 Acme-ML/TRAINER"]
)
def test_top_in_any_capitals_reads_the_repository_with_its_settings(svc: Services, text: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "prs", reply.text
    assert len(reply.prs) == len(demo_source().prs) - 7  # hyzhang-ml's seven PRs filtered out
    assert HIDDEN not in {p.author for p in reply.prs}
    assert "acme-ml/trainer" in reply.text
