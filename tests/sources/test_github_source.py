"""The GitHub source and sync, through the real PyGithub against the local fake GitHub."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fakes.github_api import (
    TOKEN,
    FakeComment,
    FakeFile,
    FakeGitHub,
    FakePR,
    FakeRepo,
    FakeReview,
    FakeThread,
    Fault,
    iter_prs,
)

from prdigest.config import GithubSettings, load_settings
from prdigest.models import PullRequest, Window
from prdigest.sources.diffs import DIFF_LINES_PER_PR
from prdigest.sources.github.source import (
    TOO_LARGE,
    ClientOptions,
    GitHubAuthError,
    GitHubClient,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubSource,
    GitHubUnavailable,
    Listed,
    make_client,
    to_pull_request,
)
from prdigest.sources.github.sync import add_diffs, sync
from prdigest.storage import Store

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
NEXT_WEEK = Window(since="2026-09-14", until="2026-09-20", tz="Asia/Shanghai")
REPO = "acme/rocket"
# No waiting in tests: retries follow at once, and any rate-limit wait is over the limit.
FAST = ClientOptions(timeout=3, retries=2, backoff=0, max_wait=0, secondary_wait=0)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        repo.generate(60, WEEK.start - timedelta(days=7), WEEK.start, seed=1)
        repo.generate(120, WEEK.start, WEEK.end, seed=2, overflow_every=40)
        repo.generate(30, NEXT_WEEK.start, NEXT_WEEK.end, seed=3)
        yield server


@pytest.fixture
def client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(TOKEN, fake.url, FAST)


def in_window(fake: FakeGitHub, window: Window, repo: str = REPO) -> list[FakePR]:
    return list(iter_prs(fake.repos[repo], window.start, window.end))


def expected(pr: FakePR) -> dict[str, Any]:
    """What prdigest must make of a fake PR, written from the fake's own data."""

    def who(login: str | None) -> str:
        return login or "ghost"

    checks = None
    if pr.checks is not None:
        failing = [n for n, c in pr.checks.runs if c == "FAILURE"] + [
            n for n, s in pr.checks.statuses if s in ("FAILURE", "ERROR")
        ]
        skipped = [n for n, c in pr.checks.runs if c == "SKIPPED"]
        checks = {"state": pr.checks.state, "failing": failing, "skipped": skipped}
    mentioned = {int(n) for n in re.findall(r"#(\d+)", pr.body)}
    return {
        "number": pr.number,
        "sha": f"{pr.number:040x}",
        "title": pr.title,
        "body": pr.body,
        "author": who(pr.author),
        "author_association": pr.association,
        "labels": pr.labels,
        "created_at": pr.created_at,
        "merged_at": pr.merged_at,
        "merged_by": who(pr.merged_by),
        "base_branch": pr.base,
        "additions": pr.additions,
        "deletions": pr.deletions,
        "files": [(f.path, f.additions, f.deletions) for f in pr.files],
        "commits": pr.commits,
        "reviews": [(who(r.author), r.state, r.body, who(r.author).endswith("[bot]")) for r in pr.reviews],
        "review_threads": [
            (t.path, t.resolved, t.outdated, who(t.comments[0][0]), t.comments[0][1]) for t in pr.threads
        ],
        "comments": [
            (who(c.author), c.body, c.created_at, who(c.author).endswith("[bot]")) for c in pr.comments
        ],
        "checks": checks,
        "is_fork": pr.cross_repo,
        "url": f"https://github.com/{pr.repo}/pull/{pr.number}",
        "related": sorted((set(pr.closing) | mentioned) - {pr.number}),
        "source": "github",
    }


def actual(pr: PullRequest) -> dict[str, Any]:
    return {
        "number": pr.number,
        "sha": pr.sha,
        "title": pr.title,
        "body": pr.body,
        "author": pr.author,
        "author_association": pr.author_association,
        "labels": pr.labels,
        "created_at": pr.created_at,
        "merged_at": pr.merged_at,
        "merged_by": pr.merged_by,
        "base_branch": pr.base_branch,
        "additions": pr.additions,
        "deletions": pr.deletions,
        "files": [(f.path, f.additions, f.deletions) for f in pr.files or []],
        "commits": pr.commits,
        "reviews": [(r.author, r.state, r.body, r.is_bot) for r in pr.reviews or []],
        "review_threads": [
            (t.path, t.is_resolved, t.is_outdated, t.author, t.body) for t in pr.review_threads or []
        ],
        "comments": [(c.author, c.body, c.created_at, c.is_bot) for c in pr.comments or []],
        "checks": pr.checks.model_dump() if pr.checks else None,
        "is_fork": pr.is_fork,
        "url": pr.url,
        "related": pr.related,
        "source": pr.source,
    }


# --- reading a window -------------------------------------------------------------------


def test_sync_reads_every_pr_of_the_week_with_all_its_fields(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    result = sync(store, GitHubSource(client, REPO), WEEK)

    want = in_window(fake, WEEK)
    assert len(want) == 120
    assert result.fetched == [pr.number for pr in want]
    assert not result.partial and result.failed == {} and result.skipped == []
    cached = {pr.number: pr for pr in store.prs_in_window(REPO, WEEK)}
    for pr in want:
        assert actual(cached[pr.number]) == expected(pr), pr.number
    # 2 listing pages of 100, 3 batches of 50, 1 request for the pages that overflowed with the first
    # 200 texts of the definition files that lost lines (their options), 1 for the rest of the texts.
    assert fake.operations == {"ListMerged": 2, "PullRequests": 3, "FollowUp": 2}
    assert result.requests == fake.requests == 7
    # Each costs a point but the first follow-up: its pages of review threads ask for each thread's
    # first comment, a connection per thread (100 a page), which GitHub charges.
    assert result.rate_limit_remaining == fake.budget["graphql"] == 5000 - 9 == 5000 - client.points


def test_the_week_holds_bots_ghosts_forks_failing_checks_and_unresolved_threads(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    sync(store, GitHubSource(client, REPO), WEEK)
    prs = store.prs_in_window(REPO, WEEK)

    assert any(pr.author == "dependabot[bot]" for pr in prs)
    assert any(pr.author == "ghost" for pr in prs)
    assert any(pr.is_fork for pr in prs) and any(pr.is_fork is False for pr in prs)
    assert any(pr.checks and pr.checks.failing == ["test-gpu"] for pr in prs)
    assert any(pr.checks and pr.checks.skipped == ["docs"] for pr in prs)
    assert any(pr.checks is None for pr in prs)  # no CI ran: unknown, not "passed"
    assert any(
        r.is_bot and r.author == "copilot-pull-request-reviewer[bot]" for pr in prs for r in pr.reviews or []
    )
    assert any(c.is_bot and c.author == "codecov[bot]" for pr in prs for c in pr.comments or [])
    assert any(not t.is_resolved for pr in prs for t in pr.review_threads or [])
    # GitHub answers these lists, so they are lists even when empty; a diff is not fetched by a sync.
    assert all(
        pr.labels is not None and pr.reviews is not None and pr.review_threads is not None for pr in prs
    )
    assert any(pr.labels == [] for pr in prs)
    assert all(pr.diff_excerpt is None and pr.co_authors is None for pr in prs)


def test_monday_0730_in_shanghai_belongs_to_the_shanghai_week(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    repo = fake.add_repo(FakeRepo("acme/tz"))
    monday_0730 = repo.add(
        merged_at=datetime(2026, 9, 6, 23, 30, tzinfo=UTC), title="Monday 07:30 +08 (Sunday UTC)"
    )
    repo.add(
        merged_at=datetime(2026, 9, 6, 15, 59, 59, tzinfo=UTC), title="Sunday 23:59:59 +08, the week before"
    )
    last_second = repo.add(
        merged_at=datetime(2026, 9, 13, 15, 59, 59, tzinfo=UTC), title="Sunday 23:59:59 +08"
    )
    repo.add(merged_at=datetime(2026, 9, 13, 16, 0, tzinfo=UTC), title="next Monday 00:00 +08 (Sunday UTC)")

    result = sync(store, GitHubSource(client, "acme/tz"), WEEK)

    assert result.fetched == [monday_0730.number, last_second.number]
    assert [pr.number for pr in store.prs_in_window("acme/tz", WEEK)] == result.fetched
    assert "merged:2026-09-07T00:00:00+08:00..2026-09-13T23:59:59+08:00" in fake.searches[0]


def test_a_window_of_more_than_1000_prs_is_split_until_each_search_fits(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    repo = fake.add_repo(FakeRepo("acme/mega"))
    repo.generate(1200, WEEK.start, WEEK.end, rich=False, closed_every=0)
    repo.generate(40, NEXT_WEEK.start, NEXT_WEEK.end, rich=False, closed_every=0)

    result = sync(store, GitHubSource(client, "acme/mega"), WEEK)

    assert len(result.fetched) == 1200 and not result.partial
    assert result.fetched == [pr.number for pr in in_window(fake, WEEK, "acme/mega")]
    assert store.count_prs("acme/mega") == 1200
    ranges = [re.search(r"merged:(\S+)", q).group(1) for q in fake.searches]
    assert ranges[0] == "2026-09-07T00:00:00+08:00..2026-09-13T23:59:59+08:00"
    assert "2026-09-07T00:00:00+08:00..2026-09-10T11:59:59+08:00" in ranges
    assert "2026-09-10T12:00:00+08:00..2026-09-13T23:59:59+08:00" in ranges


def test_lists_that_overflow_the_first_page_are_completed_by_follow_ups(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    repo = fake.add_repo(FakeRepo("acme/big"))
    merged = WEEK.start + timedelta(hours=30)
    huge = repo.add(
        merged_at=merged,
        files=[FakeFile(f"src/f{k}.py", 1, 0, "ADDED") for k in range(250)],  # 100 + 100 + 50: two rounds
        reviews=[FakeReview("bob", "COMMENTED", f"r{k}", merged) for k in range(51)],
        threads=[FakeThread("a.py", k % 2 == 0, False, [("eve", f"t{k}")]) for k in range(120)],
        comments=[FakeComment("gus", f"c{k}", merged) for k in range(180)],
        labels=[f"label-{k}" for k in range(55)],
    )
    small = repo.add(merged_at=merged + timedelta(hours=1), files=[FakeFile("README.md", 1, 1)])

    result = sync(store, GitHubSource(client, "acme/big"), WEEK)

    assert result.fetched == [huge.number, small.number]
    pr = store.get_pr("acme/big", huge.number)
    assert pr is not None and actual(pr) == expected(huge)
    assert [f.path for f in pr.files or []] == [f"src/f{k}.py" for k in range(250)]
    # Round 1 reads the next page of all five lists in one request; round 2 the rest of files and comments.
    assert fake.operations == {"ListMerged": 1, "PullRequests": 1, "FollowUp": 2}


def test_the_pipeline_fetch_returns_the_window_or_fails_loudly(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    source = GitHubSource(client, REPO)
    assert source.kind == "github"
    prs = source.fetch(NEXT_WEEK)
    assert [pr.number for pr in prs] == [pr.number for pr in in_window(fake, NEXT_WEEK)]
    assert prs == sorted(prs, key=lambda pr: pr.merged_at)

    broken = in_window(fake, NEXT_WEEK)[3]
    broken.broken = True
    with pytest.raises(GitHubError, match=rf"could not read 1 of 30 PRs of acme/rocket \(#{broken.number}\)"):
        source.fetch(NEXT_WEEK)


# --- incremental sync -------------------------------------------------------------------


def test_a_resync_of_an_unchanged_week_costs_one_request(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    first = sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert len(first.fetched) == 30
    fake.reset_counts()

    again = sync(store, GitHubSource(client, REPO), NEXT_WEEK)

    assert again.fetched == [] and again.unchanged == first.fetched
    assert again.requests == fake.requests == 1
    assert fake.operations == {"ListMerged": 1}


def test_a_resync_reads_only_the_prs_github_updated(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    sync(store, GitHubSource(client, REPO), WEEK)
    changed = in_window(fake, WEEK)[7]
    fake.repos[REPO].touch(changed.number, "late review remark", changed.updated_at + timedelta(days=1))
    fake.reset_counts()

    result = sync(store, GitHubSource(client, REPO), WEEK)

    assert result.fetched == [changed.number] and len(result.unchanged) == 119
    assert fake.operations == {"ListMerged": 2, "PullRequests": 1, "FollowUp": 1}  # its files' texts
    cached = store.get_pr(REPO, changed.number)
    assert cached is not None and cached.comments is not None
    assert cached.comments[-1].body == "late review remark"


def test_a_pr_cached_from_a_git_clone_is_read_again_from_github(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    target = in_window(fake, NEXT_WEEK)[0]
    assert target.merged_at is not None
    store.upsert_prs(
        [
            PullRequest(
                repo=REPO,
                number=target.number,
                title="x",
                author="y",
                merged_at=target.merged_at,
                source="git",
            )
        ]
    )

    result = sync(store, GitHubSource(client, REPO), NEXT_WEEK)

    assert target.number in result.fetched
    cached = store.get_pr(REPO, target.number)
    assert cached is not None and cached.source == "github" and cached.reviews is not None


# --- faults -----------------------------------------------------------------------------


def test_5xx_answers_are_retried(fake: FakeGitHub, client: GitHubClient, store: Store) -> None:
    fake.fail("502", times=2)
    result = sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert len(result.fetched) == 30 and not result.partial
    assert fake.requests == 2 + 3  # two 502s, then the listing, the batch and the files' texts


def test_retries_are_bounded_and_back_off(
    fake: FakeGitHub, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # urllib3 sleeps through time.sleep
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=2))  # production waits
    fake.fail("502", times=3)
    assert len(sync(store, GitHubSource(client, REPO), NEXT_WEEK).fetched) == 30
    assert slept == [2.0, 4.0]  # urllib3: 0, 2, 4 s with backoff factor 1

    fake.fail("502", times=10)
    with pytest.raises(GitHubUnavailable, match=r"answered 502 4 times in a row; try again later"):
        sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert len(fake.faults) == 10 - 4


def test_github_down_while_reading_prs_makes_a_partial_sync(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    fake.faults.extend(Fault("502", operation="PullRequests") for _ in range(100))
    result = sync(store, GitHubSource(client, REPO), WEEK)

    assert result.partial and result.fetched == []
    # The first batch, then its first half and quarter, each with its retries; then the sync stops.
    refused = fake.counts["POST /graphql"] - sum(fake.operations.values())  # answered 502, ran no query
    assert refused == 3 * 3 and "PullRequests" not in fake.operations
    assert len(result.failed) == 12 and len(result.skipped) == 108  # the last batch asked for, the rest
    assert "answered 502 3 times" in (result.reason or "")
    assert "partial: 120 PRs not read" in result.describe()


def test_a_batch_too_heavy_to_answer_is_read_in_halves(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    # GitHub gives up on heavy queries with a 502 or a timeout; a lighter one passes.
    fake.faults.extend(Fault("502", operation="PullRequests", min_ids=30) for _ in range(100))
    result = sync(store, GitHubSource(client, REPO), WEEK)

    assert not result.partial and len(result.fetched) == 120
    assert {pr.number for pr in store.prs_in_window(REPO, WEEK)} == {
        pr.number for pr in in_window(fake, WEEK)
    }
    # 50 fails (3 tries) -> 25 + 25; the next 50 fails too -> 25 + 25; the last 20 pass at once.
    assert fake.operations["PullRequests"] == 2 + 2 + 1
    assert fake.counts["POST /graphql"] - sum(fake.operations.values()) == 3 + 3


def test_an_unreachable_github_stops_at_once_without_halving(fake: FakeGitHub) -> None:
    closed = fake.url
    fake.stop()  # nothing listens on the port any more: connection refused
    client = GitHubClient(TOKEN, closed, FAST)
    moment = datetime(2026, 9, 8, tzinfo=UTC)
    listed = [Listed(n, f"PR_{n}", moment, moment) for n in range(1, 61)]
    outcome = GitHubSource(client, REPO).fetch_listed(listed)
    assert sorted(outcome.failed) == list(range(1, 51)) and outcome.skipped == list(range(51, 61))
    assert outcome.reason is not None and "cannot reach GitHub" in outcome.reason
    assert client.requests["sync"] == 1  # one call (its retries inside), no halves


def test_a_follow_up_that_fails_fails_only_its_prs(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    fake.faults.extend(Fault("502", operation="FollowUp") for _ in range(3))
    overflowing = {pr.number for pr in in_window(fake, WEEK) if len(pr.files) > 100}

    result = sync(store, GitHubSource(client, REPO), WEEK)

    assert set(result.failed) == overflowing and len(overflowing) == 3
    assert len(result.fetched) == 117 and result.skipped == []
    assert all(store.get_pr(REPO, n) is None for n in overflowing)  # never stored truncated


def test_graphqls_own_rate_limit_error_is_understood(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    fake.fail("rate-limited")
    with pytest.raises(GitHubRateLimited, match="GitHub's GraphQL rate limit is spent"):
        sync(store, GitHubSource(client, REPO), NEXT_WEEK)


def test_a_timeout_is_retried(fake: FakeGitHub, client: GitHubClient, store: Store) -> None:
    fake.fail("timeout", delay=10)
    started = time.monotonic()
    result = sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert len(result.fetched) == 30
    assert time.monotonic() - started < 9  # one 3-second timeout, not the 10-second answer
    assert fake.counts["POST /graphql"] == 4  # the timeout, the listing, the batch, the files' texts


def test_timeouts_that_persist_end_with_a_clear_error(fake: FakeGitHub, store: Store) -> None:
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=1, retries=1, backoff=0))
    fake.fail("timeout", times=2, delay=10)
    with pytest.raises(GitHubUnavailable, match=r"did not answer within 1 s \(2 attempts\)"):
        sync(store, GitHubSource(client, REPO), NEXT_WEEK)


def test_a_secondary_rate_limit_waits_retry_after_within_bounds(
    fake: FakeGitHub, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=2))
    fake.fail("secondary", retry_after=7)
    fake.fail("secondary", retry_after=3600)  # capped at max_wait
    fake.fail("secondary", retry_after=None)  # GitHub's advice: wait a minute

    result = sync(store, GitHubSource(client, REPO), NEXT_WEEK)

    assert len(result.fetched) == 30
    assert slept == [7, 60, 60]


def test_a_secondary_rate_limit_that_persists_is_reported(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    fake.fail("secondary", times=5, retry_after=1)
    with pytest.raises(GitHubRateLimited, match="secondary rate limit stopped the requests after 3 attempts"):
        sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert fake.requests == 3


def test_a_spent_budget_makes_a_partial_sync_without_waiting_for_the_reset(
    fake: FakeGitHub, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=2))  # production: waits up to 60 s
    fake.faults.append(Fault("exhaust", operation="PullRequests"))

    result = sync(store, GitHubSource(client, REPO), WEEK)

    assert slept == []  # the reset is an hour away: no waiting for it
    assert result.partial and result.fetched == [] and len(result.skipped) == 120
    assert result.reason is not None and "graphql rate limit is spent (0 of 5000 points left" in result.reason
    assert result.rate_limit_remaining == 0
    assert fake.operations == {"ListMerged": 2}  # the 403 answer ran no query


def test_the_sync_stops_before_the_budget_runs_out(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    fake.budget["graphql"] = 4  # two listing pages and two batches

    result = sync(store, GitHubSource(client, REPO), WEEK)

    # 100 PRs read, but 3 of them overflow their first pages: they wait for their follow-ups.
    assert len(result.fetched) == 100 - 3
    assert result.partial and result.not_fetched == 23 and result.failed == {}
    assert "stopped before GitHub's graphql rate limit runs out" in (result.reason or "")
    assert fake.requests == 4 and fake.budget["graphql"] == 0  # no request was refused
    # An hour later the budget is back, and the next sync reads only what is missing.
    fake.budget["graphql"] = 5000
    client.budgets["graphql"].reset_at = datetime.now(UTC) - timedelta(seconds=1)
    fake.reset_counts()
    again = sync(store, GitHubSource(client, REPO), WEEK)
    assert len(again.fetched) == 23 and not again.partial and len(again.unchanged) == 97


def test_a_pr_github_cannot_read_is_reported_and_read_again_next_time(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    broken = in_window(fake, NEXT_WEEK)[5]
    broken.broken = True

    result = sync(store, GitHubSource(client, REPO), NEXT_WEEK)

    assert list(result.failed) == [broken.number]
    assert "Something went wrong" in result.failed[broken.number]
    assert len(result.fetched) == 29 and broken.number not in result.fetched
    assert store.get_pr(REPO, broken.number) is None
    broken.broken = False
    assert sync(store, GitHubSource(client, REPO), NEXT_WEEK).fetched == [broken.number]


# --- configuration and errors a user sees -----------------------------------------------


def test_no_token_says_how_to_give_one() -> None:
    with pytest.raises(
        GitHubAuthError, match=r"no GitHub token: set GITHUB_TOKEN .* or read a local clone with --git"
    ):
        make_client(GithubSettings())


def test_token_and_url_come_from_the_environment(
    fake: FakeGitHub, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("PRDIGEST_GITHUB_URL", fake.url)
    client = make_client(load_settings(), FAST)
    assert len(sync(store, GitHubSource(client, REPO), NEXT_WEEK).fetched) == 30


def test_a_wrong_token_is_named_as_such(fake: FakeGitHub, store: Store) -> None:
    client = GitHubClient("ghp_wrong", fake.url, FAST)
    with pytest.raises(GitHubAuthError) as err:
        sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert str(err.value) == (
        f"GitHub at {fake.url} rejected the token (401 Bad credentials): "
        "check GITHUB_TOKEN or PRDIGEST_GITHUB_TOKEN"
    )
    assert "ghp_wrong" not in str(err.value)
    assert fake.requests == 1  # a 401 is not retried


def test_an_unknown_repository_is_named(fake: FakeGitHub, client: GitHubClient, store: Store) -> None:
    with pytest.raises(GitHubNotFound) as err:
        sync(store, GitHubSource(client, "acme/nope"), NEXT_WEEK)
    assert (
        str(err.value)
        == f"GitHub repository acme/nope was not found at {fake.url}, or the token cannot read it"
    )
    with pytest.raises(GitHubNotFound, match="acme/nope was not found"):
        client.fetch_pr("acme/nope", 1)


def test_a_malformed_repository_name_is_refused(client: GitHubClient) -> None:
    with pytest.raises(GitHubError, match=r"'rocket' is not a GitHub repository name \(OWNER/NAME\)"):
        GitHubSource(client, "rocket")


def test_github_enterprise_urls(store: Store) -> None:
    with FakeGitHub(prefix="/api/v3") as ghe:
        repo = ghe.add_repo(FakeRepo(REPO))
        pr = repo.add(merged_at=WEEK.start + timedelta(days=1), files=[FakeFile("a.py", 2, 1)])
        client = make_client(GithubSettings(url=f"{ghe.url}/", token=TOKEN), FAST)

        assert sync(store, GitHubSource(client, REPO), WEEK).fetched == [pr.number]
        assert client.fetch_diff(REPO, pr.number).startswith("diff --git a/a.py b/a.py")
        assert ghe.counts == {"POST /api/graphql": 3, f"GET /api/v3/repos/{REPO}/pulls/{pr.number}": 1}


# --- one PR, and diffs -------------------------------------------------------------------


def test_fetch_pr_reads_one_pr_in_one_request(fake: FakeGitHub, client: GitHubClient) -> None:
    want = in_window(fake, WEEK)[1]
    pr = GitHubSource(client, REPO).fetch_pr(want.number)
    assert pr is not None and actual(pr) == expected(want)
    assert fake.operations == {"PullRequest": 1, "FollowUp": 1}  # and its definition files' texts

    overflowing = in_window(fake, WEEK)[0]  # 150 files, 60 reviews, 70 threads, 120 comments
    pr = client.fetch_pr(REPO, overflowing.number)
    assert pr is not None and actual(pr) == expected(overflowing)
    assert fake.operations == {"PullRequest": 2, "FollowUp": 2}  # its pages came with its texts


def test_fetch_pr_explains_what_it_cannot_read(fake: FakeGitHub, client: GitHubClient) -> None:
    assert client.fetch_pr(REPO, 99999) is None  # no such PR, as GitSource.fetch_pr says it
    fake.repos[REPO].prs[3].broken = True
    with pytest.raises(GitHubError, match=r"cannot read acme/rocket#3: Something went wrong"):
        client.fetch_pr(REPO, 3)
    closed = next(pr for pr in fake.repos[REPO].prs.values() if pr.merged_at is None)
    with pytest.raises(GitHubError, match=rf"acme/rocket#{closed.number} is not merged"):
        client.fetch_pr(REPO, closed.number)


def test_fetch_diff_is_one_capped_request_then_cached_for_good(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    pr = fake.repos[REPO].add(
        merged_at=WEEK.start + timedelta(days=2),
        files=[
            FakeFile("core/engine.py", DIFF_LINES_PER_PR, 50, "MODIFIED"),
            FakeFile("new.py", 5, 0, "ADDED"),
        ],
    )
    excerpt = client.fetch_diff(REPO, pr.number, store)

    lines = excerpt.splitlines()
    assert lines[0] == "diff --git a/core/engine.py b/core/engine.py"
    assert " context" not in lines and not any(
        line.startswith(("index ", "@@ -", "+++", "---")) for line in lines
    )
    assert sum(line.startswith(("+", "-")) for line in lines) == DIFF_LINES_PER_PR
    assert lines[-1] == "... (55 more changed lines)"
    assert client.requests == {"diff": 1}
    assert fake.counts == {f"GET /repos/{REPO}/pulls/{pr.number}": 1}

    fake.reset_counts()
    assert client.fetch_diff(REPO, pr.number, store) == excerpt
    assert fake.requests == 0 and client.requests == {"diff": 1}


def test_a_diff_too_large_for_github_is_noted_and_cached(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    pr = fake.repos[REPO].add(merged_at=WEEK.start + timedelta(days=2), huge_diff=True)
    assert client.fetch_diff(REPO, pr.number, store) == TOO_LARGE
    assert client.fetch_diff(REPO, pr.number, store) == TOO_LARGE
    assert fake.requests == 1
    with pytest.raises(GitHubNotFound, match="acme/rocket has no pull request #99999"):
        client.fetch_diff(REPO, 99999, store)


def test_diffs_are_added_apart_from_the_sync_and_survive_a_resync(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    prs = store.prs_in_window(REPO, NEXT_WEEK)
    fake.reset_counts()

    done, failed = add_diffs(store, client, prs)

    assert failed == {} and len(done) == 30 and client.requests["diff"] == 30 == fake.requests
    assert all(
        pr.diff_excerpt and pr.diff_excerpt.startswith("diff --git")
        for pr in store.prs_in_window(REPO, NEXT_WEEK)
    )
    # A PR read again keeps its diff; adding diffs again costs nothing.
    changed = in_window(fake, NEXT_WEEK)[2]
    fake.repos[REPO].touch(changed.number, "after merge", changed.updated_at + timedelta(hours=1))
    assert sync(store, GitHubSource(client, REPO), NEXT_WEEK).fetched == [changed.number]
    cached = store.get_pr(REPO, changed.number)
    assert cached is not None and cached.diff_excerpt == next(
        p.diff_excerpt for p in done if p.number == changed.number
    )
    fake.reset_counts()
    add_diffs(store, client, store.prs_in_window(REPO, NEXT_WEEK))
    assert fake.requests == 0


def test_adding_diffs_stops_at_the_rate_limit_and_says_which_prs_lack_one(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    prs = store.prs_in_window(REPO, NEXT_WEEK)
    fake.budget["core"] = 10

    done, failed = add_diffs(store, client, prs)

    assert len(done) == 10 and len(failed) == 20  # spent to the last point, never refused
    assert all("core rate limit" in why for why in failed.values())


# --- GitHub's answers, converted -----------------------------------------------------------


def test_what_github_does_not_say_stays_unknown() -> None:
    node = {"number": 12, "title": None, "body": None, "author": None, "mergedAt": "2026-09-08T01:00:00Z"}
    pr = to_pull_request(REPO, node)
    assert pr.author == "ghost" and pr.title == "" and pr.body == ""
    assert pr.merged_at == datetime(2026, 9, 8, 1, tzinfo=UTC)
    for name in ("labels", "files", "reviews", "review_threads", "comments", "checks", "is_fork", "commits"):
        assert getattr(pr, name) is None, name
    assert pr.merged_by is None and pr.created_at is None


def test_nulls_inside_github_answers_are_handled() -> None:
    node = {
        "number": 12,
        "title": "t",
        "body": "see #12 and #7, and https://github.com/acme/rocket/pull/9",
        "mergedAt": "2026-09-08T01:00:00Z",
        "author": {"__typename": "Bot", "login": "renovate"},
        "mergedBy": None,
        "labels": {"nodes": [None, {"name": "ci"}]},
        "files": {
            "nodes": [{"path": "a.bin", "additions": None, "deletions": None, "changeType": "CHANGED"}]
        },
        "reviews": {"nodes": [{"state": "APPROVED", "author": None, "body": None, "submittedAt": None}]},
        "reviewThreads": {
            "nodes": [{"isResolved": False, "isOutdated": None, "path": "a.py", "comments": None}]
        },
        "comments": {"nodes": []},
        "closingIssuesReferences": None,
        "lastCommit": {"totalCount": 2, "nodes": [{"commit": {"statusCheckRollup": None}}]},
        "isCrossRepository": None,
        "headRepository": None,
    }
    pr = to_pull_request(REPO, node)
    assert pr.author == "renovate[bot]" and pr.merged_by == "ghost"
    assert pr.labels == ["ci"] and pr.comments == [] and pr.checks is None and pr.commits == 2
    assert pr.files is not None and (pr.files[0].status, pr.files[0].additions) == ("modified", 0)
    assert pr.reviews is not None and pr.reviews[0].author == "ghost" and not pr.reviews[0].is_bot
    assert pr.review_threads is not None and pr.review_threads[0].author is None
    assert pr.is_fork is None
    assert pr.related == [7, 9]


# --- the fake serves the REST endpoints a naive client would use ----------------------------


def test_a_naive_pygithub_rest_loop_sees_the_same_week(fake: FakeGitHub) -> None:
    from github import Auth, BadCredentialsException, Github

    gh = Github(
        base_url=fake.url, auth=Auth.Token(TOKEN), per_page=100, retry=None, seconds_between_requests=None
    )
    repo = gh.get_repo(REPO)
    seen = []
    for pull in repo.get_pulls(state="closed", sort="updated", direction="desc"):
        if pull.updated_at < NEXT_WEEK.start:
            break
        if pull.merged_at and NEXT_WEEK.contains(pull.merged_at):
            seen.append(
                (pull.number, pull.additions, len(list(pull.get_files())), len(list(pull.get_reviews())))
            )
            list(pull.get_review_comments())
            list(pull.get_issue_comments())
    want = in_window(fake, NEXT_WEEK)
    assert sorted(seen) == [(pr.number, pr.additions, len(pr.files), len(pr.reviews)) for pr in want]
    assert fake.requests >= 5 * len(want)
    assert gh.get_rate_limit().resources.core.remaining == fake.budget["core"]
    with pytest.raises(BadCredentialsException):
        Github(base_url=fake.url, auth=Auth.Token("nope"), retry=None).get_repo(REPO)


def test_prs_merged_into_another_branch_than_the_default_are_left_out(
    fake: FakeGitHub, client: GitHubClient, store: Store
) -> None:
    repo = fake.repos[REPO]
    release = in_window(fake, NEXT_WEEK)[:3]
    for pr in release:
        pr.base = "release/1.0"
    main_line = sorted(pr.number for pr in in_window(fake, NEXT_WEEK) if pr not in release)

    synced = sync(store, GitHubSource(client, REPO), NEXT_WEEK)
    assert synced.fetched == main_line and not synced.partial
    # The default branch came with the list.
    assert fake.operations == {"ListMerged": 1, "PullRequests": 1, "FollowUp": 1}

    repo.default_branch = "develop"  # nothing is merged into it: the week is empty, and complete
    for base, want in ((None, []), ("release/1.0", sorted(pr.number for pr in release))):
        fresh = Store(":memory:")
        assert sync(fresh, GitHubSource(client, REPO, base), NEXT_WEEK).fetched == want
        fresh.close()


def test_a_repositorys_base_branch_setting_reaches_its_github_source(fake: FakeGitHub) -> None:
    from prdigest.sources.registry import source_factory

    env = {"PRDIGEST_GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": fake.url,
           "PRDIGEST_REPOS": json.dumps([{"name": REPO, "base_branch": "release/1.0"}])}  # fmt: skip
    source = source_factory(load_settings(env=env))(REPO)
    assert isinstance(source, GitHubSource) and source.base_branch == "release/1.0"
    other = source_factory(load_settings(env=env))("acme/other")
    assert isinstance(other, GitHubSource) and other.base_branch is None
