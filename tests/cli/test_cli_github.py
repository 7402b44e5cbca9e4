"""The command line against the fake GitHub: sync, report --repo, and what a new user sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo, iter_prs

from prdigest.models import Report, Window
from prdigest.render.markdown import render_markdown

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
REPO = "acme/rocket"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        repo.generate(40, WEEK.start, WEEK.end, seed=5)
        repo.generate(10, WEEK.start - timedelta(days=7), WEEK.start, seed=6)
        yield server


def prdigest(*args: str, token: str | None = TOKEN, url: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "PRDIGEST_GITHUB_TOKEN")}
    if token is not None:
        env["GITHUB_TOKEN"] = token
    if url:
        env["PRDIGEST_GITHUB_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "prdigest.cli", *args], capture_output=True, text=True, env=env, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_sync_then_report_from_the_cache(fake: FakeGitHub) -> None:
    synced = prdigest("sync", "--repo", REPO, "--week", "2026-W37", url=fake.url)
    assert synced.returncode == 0, synced.stderr
    assert "40 fetched, 0 unchanged" in synced.stdout
    fake.reset_counts()
    again = prdigest("sync", "--repo", REPO, "--week", "2026-W37", url=fake.url)
    assert "0 fetched, 40 unchanged, 1 requests" in again.stdout and fake.requests == 1
    report = prdigest("report", "--repo", REPO, "--week", "2026-W37", "--format", "json", url=fake.url)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    expected = sorted(pr.number for pr in iter_prs(fake.repos[REPO], WEEK.start, WEEK.end))
    assert sorted(p["number"] for p in data["prs"]) == expected
    assert data["source"] == "github" and data["warnings"] == []
    assert "reviews" not in data["unavailable"] and "diff_excerpt" in data["unavailable"]


def test_a_partial_sync_is_said_in_the_report(fake: FakeGitHub) -> None:
    # The listing goes through; reading the PRs meets a spent budget.
    fake.fail("exhaust", times=10, operation="PullRequests")
    result = prdigest("report", "--repo", REPO, "--week", "2026-W37", "--format", "json", url=fake.url)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["warnings"] and "partial: 40 PRs not read" in data["warnings"][0]
    assert data["prs"] == []
    markdown = render_markdown(Report.model_validate(data))
    assert "> ⚠ acme/rocket 2026-09-07..2026-09-13: 0 fetched" in markdown
    # The budget is now spent: the next run cannot even list the week, and says so in one line.
    again = prdigest("report", "--repo", REPO, "--week", "2026-W37", url=fake.url)
    assert again.returncode == 1 and "rate limit" in again.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "token", "message"),
    [
        (["sync", "--repo", REPO, "--week", "2026-W37"], None, "no GitHub token: set GITHUB_TOKEN"),
        (["sync", "--repo", REPO, "--week", "2026-W37"], "wrong", "rejected the token (401 Bad credentials)"),
        (["sync", "--repo", "acme/nope", "--week", "2026-W37"], TOKEN, "acme/nope was not found"),
        (["report", "--repo", REPO, "--week", "2026-W37"], None, "the cache holds no PRs of acme/rocket"),
    ],
)
def test_what_a_new_user_sees(fake: FakeGitHub, args: list[str], token: str | None, message: str) -> None:
    result = prdigest(*args, token=token, url=fake.url)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr and "wrong" not in result.stderr
