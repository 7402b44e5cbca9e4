"""What is open on GitHub now: the open PRs that need someone, the default branch's checks and the
repository's .prdigest.toml, in one request; an owner's repositories. Through the real PyGithub
against the local fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fakes.github_api import TOKEN, FakeChecks, FakeFile, FakeGitHub, FakeRepo, FakeReview
from test_github_source import FAST, REPO

from prdigest.config import GithubSettings, Settings
from prdigest.config.models import AttentionSettings
from prdigest.sources.github.open_prs import OpenState, attention
from prdigest.sources.github.source import (
    GitHubAuthError,
    GitHubClient,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubSource,
    GitHubUnavailable,
    owner_repositories,
)

NOW = datetime(2026, 9, 20, 12, 0, tzinfo=UTC)
THRESHOLDS = AttentionSettings(review_wait_days=7, approved_wait_days=3, large_lines=1000, limit=10)
SETTINGS_TOML = '[report]\nlanguage = "zh"\n'


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def review(author: str, state: str, days: float) -> FakeReview:
    return FakeReview(author, state, "", days_ago(days))


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO, files={".prdigest.toml": SETTINGS_TOML}))
        repo.head_checks = FakeChecks(
            "FAILURE", runs=[("build", "SUCCESS"), ("test", "FAILURE")], statuses=[("deploy", "ERROR")]
        )
        repo.add(merged_at=days_ago(30), title="merged long ago")  # not open: never listed
        yield server


@pytest.fixture
def client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(TOKEN, fake.url, FAST)


def open_pr(fake: FakeGitHub, number: int, opened_days: float, **fields: object) -> None:
    fields.setdefault("files", [FakeFile("core/engine.py", 10, 2)])
    fake.repos[REPO].add(number, is_open=True, merged_at=None, created_at=days_ago(opened_days), **fields)


def reasons(client: GitHubClient, thresholds: AttentionSettings = THRESHOLDS) -> dict[int, tuple[str, int]]:
    attention = GitHubSource(client, REPO).attention(thresholds, NOW)
    assert attention is not None and attention.read_at == NOW
    return {pr.number: (pr.reason, pr.waiting_days) for pr in attention.open_prs}


def test_open_prs_needing_attention_each_with_its_most_pressing_reason(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    open_pr(fake, 10, 8, author="alice")  # waiting 8 days for a first review
    open_pr(fake, 11, 6, author="alice")  # 6 days: not yet
    open_pr(fake, 12, 9, reviews=[review("bob", "APPROVED", 4)], review_decision="APPROVED")
    open_pr(fake, 13, 5, reviews=[review("bob", "APPROVED", 2)], review_decision="APPROVED")  # 2 days
    open_pr(fake, 14, 2, files=[FakeFile("kernels/attention.cu", 1200, 300)])  # 1,500 lines, no review
    open_pr(fake, 15, 20, draft=True)  # a draft asks nobody yet
    open_pr(fake, 16, 10, reviews=[review("bob", "CHANGES_REQUESTED", 8)])  # reviewed: the author's turn
    # The author's own reply and a bot's review are not a review.
    open_pr(
        fake,
        17,
        12,
        author="chen",
        reviews=[review("chen", "COMMENTED", 1), review("ci[bot]", "COMMENTED", 1)],
    )
    # No required reviews (no decision): the latest review approves, 5 days ago.
    open_pr(fake, 18, 15, reviews=[review("bob", "COMMENTED", 9), review("eve", "APPROVED", 5)])
    # Changes requested by one reviewer outweigh another's approval.
    open_pr(fake, 19, 15, reviews=[review("eve", "APPROVED", 9)], review_decision="CHANGES_REQUESTED")

    assert reasons(client) == {
        17: ("waiting_review", 12),
        10: ("waiting_review", 8),
        18: ("approved_not_merged", 5),
        12: ("approved_not_merged", 4),
        14: ("large_unreviewed", 2),
    }
    attention = GitHubSource(client, REPO).attention(THRESHOLDS, NOW)
    assert attention is not None
    assert [pr.number for pr in attention.open_prs] == [17, 10, 18, 12, 14]  # the longest waiting first
    large = attention.open_prs[-1]
    assert (large.additions, large.deletions, large.author, large.is_draft) == (1200, 300, "alice", False)
    assert large.url == f"https://github.com/{REPO}/pull/14" and large.created_at == days_ago(2)


def test_a_drafts_wait_starts_when_it_is_marked_ready(fake: FakeGitHub, client: GitHubClient) -> None:
    open_pr(fake, 20, 30, ready_at=days_ago(2))  # a month a draft, asked for reviews two days ago
    open_pr(fake, 21, 30, ready_at=days_ago(9))
    open_pr(fake, 22, 30, ready_at=days_ago(1), files=[FakeFile("a.py", 1000, 0)])
    assert reasons(client) == {21: ("waiting_review", 9), 22: ("large_unreviewed", 1)}


def test_the_thresholds_and_the_limit_are_the_settings(fake: FakeGitHub, client: GitHubClient) -> None:
    for number in range(1, 6):
        open_pr(fake, number, 20 + number)
    open_pr(fake, 9, 4, files=[FakeFile("a.py", 300, 0)])
    tight = AttentionSettings(review_wait_days=3, large_lines=300, limit=4)
    assert reasons(client, tight) == {
        5: ("waiting_review", 25),
        4: ("waiting_review", 24),
        3: ("waiting_review", 23),
        2: ("waiting_review", 22),
    }
    assert reasons(client, AttentionSettings(review_wait_days=30, large_lines=5000)) == {}


def test_the_default_branchs_failing_checks_and_the_repository_file_in_one_request(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    open_pr(fake, 10, 8)
    source = GitHubSource(client, REPO)
    fake.reset_counts()

    attention = source.attention(THRESHOLDS, NOW)
    assert source.repo_file() == SETTINGS_TOML
    assert source.attention(THRESHOLDS, NOW + timedelta(days=1)) is not None

    assert fake.counts == {"POST /graphql": 1} and fake.operations == {"OpenPullRequests": 1}
    assert client.requests["open"] == 1
    assert fake.searches == [f"repo:{REPO} is:pr is:open sort:created-asc"]
    assert attention is not None and attention.default_branch == "main"
    checks = attention.default_branch_checks
    assert checks is not None and checks.state == "FAILURE" and checks.failing == ["test", "deploy"]


def test_a_repository_without_file_checks_or_open_prs(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.add_repo(FakeRepo("acme/quiet", default_branch="trunk"))
    source = GitHubSource(client, "acme/quiet")
    attention = source.attention(THRESHOLDS, NOW)
    assert source.repo_file() == ""
    assert attention is not None and attention.open_prs == [] and attention.default_branch == "trunk"
    assert attention.default_branch_checks is None  # no CI ran: unknown, not green


def test_an_empty_repository_has_no_file_and_no_default_branch(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    fake.add_repo(FakeRepo("acme/new", empty=True, files={".prdigest.toml": "ignored"}))
    source = GitHubSource(client, "acme/new")
    assert source.repo_file() == ""
    attention = source.attention(THRESHOLDS, NOW)
    assert (
        attention is not None and attention.default_branch is None and attention.default_branch_checks is None
    )


def test_more_than_a_page_of_open_prs_reads_the_oldest_hundred(
    fake: FakeGitHub, client: GitHubClient, caplog: pytest.LogCaptureFixture
) -> None:
    for number in range(1, 106):
        open_pr(fake, number, 200 - number)
    attention = GitHubSource(client, REPO).attention(AttentionSettings(limit=100), NOW)
    assert attention is not None and len(attention.open_prs) == 100
    assert max(pr.number for pr in attention.open_prs) == 100  # the oldest first
    assert "has 105 open PRs: the 100 opened first are checked" in caplog.text
    assert fake.requests == 1


def test_an_unreadable_answer_is_a_github_error_not_a_crash() -> None:
    node = {"number": 3, "title": "t", "createdAt": "last week", "isDraft": False}
    state = OpenState(REPO, [node], "main", None, "")
    with pytest.raises(GitHubError, match=f"unreadable answer from GitHub on the open PRs of {REPO}"):
        attention(state, THRESHOLDS, NOW)


# --- errors ---------------------------------------------------------------------------------


def test_a_wrong_token_is_named(fake: FakeGitHub) -> None:
    source = GitHubSource(GitHubClient("ghp_wrong", fake.url, FAST), REPO)
    with pytest.raises(GitHubAuthError, match=r"rejected the token \(401 Bad credentials\)"):
        source.repo_file()
    assert fake.requests == 1


def test_an_unknown_repository_is_named(fake: FakeGitHub, client: GitHubClient) -> None:
    with pytest.raises(GitHubNotFound, match="GitHub repository acme/nope was not found"):
        GitHubSource(client, "acme/nope").attention(THRESHOLDS, NOW)


def test_a_spent_rate_limit_is_reported(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.budget["graphql"] = 0  # GitHub answers 403 with its X-RateLimit-* headers
    with pytest.raises(
        GitHubRateLimited, match=r"GitHub's graphql rate limit is spent \(0 of 5000 points left"
    ):
        GitHubSource(client, REPO).attention(THRESHOLDS, NOW)


def test_github_down_is_retried_then_reported_and_read_again_next_time(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    source = GitHubSource(client, REPO)
    fake.fail("502", times=3)
    with pytest.raises(GitHubUnavailable, match="answered 502 3 times in a row; try again later"):
        source.repo_file()
    assert source.repo_file() == SETTINGS_TOML  # a failure is not kept


def test_graphqls_own_rate_limit_error_is_understood(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.fail("rate-limited")
    with pytest.raises(GitHubRateLimited, match="GitHub's GraphQL rate limit is spent"):
        GitHubSource(client, REPO).repo_file()


def test_a_naive_pygithub_client_sees_the_same_open_prs(fake: FakeGitHub) -> None:
    from github import Auth, Github

    open_pr(fake, 10, 8)
    open_pr(fake, 11, 3, draft=True)
    gh = Github(base_url=fake.url, auth=Auth.Token(TOKEN), seconds_between_requests=None)
    pulls = gh.get_repo(REPO).get_pulls(state="open")
    assert [(p.number, p.draft, p.state) for p in pulls] == [(11, True, "open"), (10, False, "open")]
    assert [p.number for p in gh.get_repo(REPO).get_pulls(state="closed")] == [1]


# --- an owner's repositories -------------------------------------------------------------


def settings_for(fake: FakeGitHub) -> Settings:
    return Settings(github=GithubSettings(url=fake.url, token=TOKEN))


def test_an_organizations_repositories_across_pages_without_forks_or_archived(fake: FakeGitHub) -> None:
    names = [f"lib{i:03d}" for i in range(130)]
    for name in reversed(names):
        fake.add_repo(FakeRepo(f"kernels/{name}"))
    fake.add_repo(FakeRepo("kernels/upstream-fork", fork=True))
    fake.add_repo(FakeRepo("kernels/old", archived=True))
    fake.add_repo(FakeRepo("Kernels/Zeta"))  # GitHub logins ignore case
    fake.reset_counts()

    found = owner_repositories(settings_for(fake), "kernels")

    assert found == [*(f"kernels/{n}" for n in names), "Kernels/Zeta"]
    assert fake.operations == {"OwnerRepositories": 2}  # 131 repositories: two pages of 100


def test_a_user_with_no_repositories_has_an_empty_list(fake: FakeGitHub) -> None:
    fake.add_owner("hana", "User")
    assert owner_repositories(settings_for(fake), "hana") == []


def test_an_unknown_owner_is_named(fake: FakeGitHub) -> None:
    with pytest.raises(GitHubNotFound, match="GitHub has no user or organization 'nobody' at http"):
        owner_repositories(settings_for(fake), "nobody")


def test_an_owner_name_that_cannot_be_one_is_refused(fake: FakeGitHub) -> None:
    with pytest.raises(GitHubError, match="'acme/rocket' is not a GitHub user or organization name"):
        owner_repositories(settings_for(fake), "acme/rocket")
    assert fake.requests == 0
