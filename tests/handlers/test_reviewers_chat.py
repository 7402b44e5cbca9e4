"""`reviewers` / `评审` in chat: the period's review load, medians and PRs, from GitHub (the fake, through
the real PyGithub) in English and Chinese; a clone cannot tell."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo, FakeReview

from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory
from prdigest.storage import Store

pytestmark = pytest.mark.timeout(120)

NOW = datetime(2026, 9, 16, 4, 0, tzinfo=UTC)  # Wednesday of 2026-W38: "last week" is 2026-W37
ADMIN = Context(platform="console", chat_id="console", user_id="me")
MONDAY = datetime(2026, 9, 7, 2, 0, tzinfo=UTC)


def services(store: Store, env: dict[str, str] | None = None, source: GitSource | None = None) -> Services:
    settings = load_settings(env=env or {})
    return Services(
        settings=settings, store=store, default_repo="acme/api", source_for=source_factory(settings, source),
        clock=lambda: NOW,
    )  # fmt: skip


def week(repo: FakeRepo) -> None:
    """Three PRs: reviewed after 2 h and after 30 h, and one its author approved alone."""
    for number, wait, reviewer in ((11, 2, "bob"), (12, 30, "carol"), (13, 1, "dave")):
        opened = MONDAY + timedelta(hours=number)
        reviews = [FakeReview(reviewer, "APPROVED", "", opened + timedelta(hours=wait))]
        reviews += (
            [FakeReview("bob", "COMMENTED", "", opened + timedelta(hours=wait + 1))] if number == 12 else []
        )
        repo.add(number, author="dave", created_at=opened, merged_at=opened + timedelta(hours=wait + 2),
                 files=[FakeFile("docs/a.md", 3, 0)], reviews=reviews)  # fmt: skip


def test_reviewers_answers_the_load_the_medians_and_the_prs(store: Store) -> None:
    with FakeGitHub() as fake:
        week(fake.add_repo(FakeRepo("acme/api")))
        env = {"PRDIGEST_GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": fake.url}
        en = handle("who reviewed the most last week?", ADMIN, services(store, env))
        zh = handle("上周谁评审最多", ADMIN, services(store, env))
    assert en.lang == "en" and "Reviews of acme/api" in en.text
    assert "bob 2, carol 1" in en.text  # dave approved his own PR: no review
    assert "First review after 16 h (median" in en.text  # 2 h and 30 h
    assert "merged without review: 1 #13" in en.text
    assert "Longest to a first review: #12 30 h, #11 2 h" in en.text
    assert zh.lang == "zh" and "评审负担：bob 2 次、carol 1 次" in zh.text
    assert "首次评审等待中位 16 小时" in zh.text and "未经他人评审就合入 1 个 #13" in zh.text


def test_reviewers_of_a_clone_says_it_cannot_tell(tmp_path: Path, store: Store) -> None:
    clone = new_repo(tmp_path / "clone")
    (clone / "a.py").write_text("x = 1\n")
    commit(clone, "fix: a bug (#7)", "2026-09-10T10:00:00+00:00")
    source = GitSource(clone, repo="acme/api")
    en = handle("reviewers last week", ADMIN, services(store, source=source))
    zh = handle("评审 上周", ADMIN, services(store, source=source))
    assert "keeps no reviews" in en.text and "cannot be told" in en.text
    assert "不记录评审" in zh.text and "#7" not in zh.text
