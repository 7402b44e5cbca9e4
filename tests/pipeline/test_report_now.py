"""A report of a recent week tells what is open now and follows the repository's own settings, from a
source end to end: the fake GitHub through the real PyGithub, and a clone the test builds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo
from test_github_source import FAST

from prdigest.config import Settings
from prdigest.models import Window
from prdigest.pipeline.single import make_report
from prdigest.render.markdown import render_markdown
from prdigest.sources.git.source import GitSource
from prdigest.sources.github.source import GitHubClient, GitHubSource
from prdigest.storage import Store

REPO = "acme/rocket"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
NOW = datetime(2026, 9, 14, 2, 0, tzinfo=UTC)  # the Monday morning after the week, in Shanghai
REPO_FILE = '[taxonomy.tags.flight]\npaths = ["flight/**"]\n'


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO, files={".prdigest.toml": REPO_FILE}))
        for number, day in ((1, 8), (2, 10)):
            merged = datetime(2026, 9, day, 3, 0, tzinfo=UTC)
            repo.add(number, merged_at=merged, files=[FakeFile("flight/engine.py", 40, 4)])
        opened = NOW - timedelta(days=8, hours=1)
        repo.add(7, is_open=True, merged_at=None, created_at=opened, files=[FakeFile("flight/a.py", 5, 1)])
        repo.add(8, is_open=True, merged_at=None, created_at=NOW - timedelta(days=2))
        yield server


def test_the_report_lists_a_pr_waiting_8_days_for_review_and_reads_the_repositorys_file(
    fake: FakeGitHub, store: Store
) -> None:
    source = GitHubSource(GitHubClient(TOKEN, fake.url, FAST), REPO)
    fake.reset_counts()
    report = make_report(Settings(), store, source, WEEK, lang="en", save=False, now=NOW)

    assert report.attention is not None
    assert [(p.number, p.reason, p.waiting_days) for p in report.attention.open_prs] == [
        (7, "waiting_review", 8)
    ]
    assert "open_prs" not in report.unavailable
    # The repository's own taxonomy, read with the open PRs: its tag marks the week's PRs.
    assert report.stats.tags.get("flight") == 2
    assert fake.operations.get("OpenPullRequests") == 1  # the file and the open PRs: one request
    markdown = render_markdown(report)
    assert "#7" in markdown and "8 days" in markdown


def test_an_older_week_has_no_open_prs_and_does_not_ask(fake: FakeGitHub, store: Store) -> None:
    source = GitHubSource(GitHubClient(TOKEN, fake.url, FAST), REPO)
    later = NOW + timedelta(days=30)
    report = make_report(Settings(), store, source, WEEK, lang="en", save=False, now=later)
    assert report.attention is None and "open_prs" not in report.unavailable


def test_a_clone_cannot_tell_what_is_open(tmp_path: Path, store: Store) -> None:
    clone = new_repo(tmp_path / "clone")
    (clone / "a.py").write_text("x = 1\n")
    commit(clone, "Add a (#1)", "2026-09-08T10:00:00+08:00")
    report = make_report(Settings(), store, GitSource(clone, repo=REPO), WEEK, lang="en", save=False, now=NOW)
    assert report.attention is None and "open_prs" in report.unavailable
    assert "open_prs" in render_markdown(report)
