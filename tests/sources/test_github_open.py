"""What is open on GitHub now: the open PRs that need someone and whom they ask (requested reviewers,
CODEOWNERS owners), the default branch's checks and the repository's .prdigest.toml, in one request;
an owner's repositories. Through the real PyGithub against the local fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fakes.github_api import TOKEN, FakeChecks, FakeFile, FakeGitHub, FakeRepo, FakeReview
from test_github_source import FAST, REPO

from prdigest.config import GithubSettings, Settings
from prdigest.config.models import AttentionSettings
from prdigest.sources.github.open_prs import OpenState, attention, needs_attention
from prdigest.sources.github.queries import OPEN_FILES
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


# --- whom an open PR asks ------------------------------------------------------------------

CODEOWNERS = """\
*              @lead
*.py           @acme/python @alice   # alice owns Python, but not her own PRs
/docs/         @writer docs@example.com
/core/vendor/
"""


def asked(client: GitHubClient) -> dict[int, tuple[list[str], list[str], list[str]]]:
    """Per open PR needing attention: its requested reviewers, its files' code owners, whom it asks."""
    attention = GitHubSource(client, REPO).attention(THRESHOLDS, NOW)
    assert attention is not None
    return {pr.number: (pr.requested, pr.owners, pr.asked) for pr in attention.open_prs}


def files(*paths: str) -> list[FakeFile]:
    return [FakeFile(path, 1, 0) for path in paths]


def test_requested_reviewers_users_and_teams_in_githubs_order_without_bots(
    fake: FakeGitHub, client: GitHubClient
) -> None:
    open_pr(fake, 10, 8, requested=["bob", "acme/kernels", "renovate[bot]", "eve"])
    # bob approved since he was asked: GitHub no longer lists his request; eve's is still open.
    approved = [review("bob", "APPROVED", 4)]
    open_pr(fake, 12, 9, reviews=approved, review_decision="APPROVED", requested=["bob", "eve"])
    open_pr(fake, 14, 8)  # nobody asked, and no CODEOWNERS
    fake.reset_counts()

    got = asked(client)

    assert got[10] == (["bob", "acme/kernels", "eve"], [], ["bob", "acme/kernels", "eve"])
    assert got[12] == (["eve"], [], ["eve"])
    assert got[14] == ([], [], [])
    assert fake.counts == {"POST /graphql": 1}


def test_requested_reviewers_once_each_and_no_bots_or_mannequins() -> None:
    def user(login: str) -> dict[str, object]:
        return {"requestedReviewer": {"__typename": "User", "login": login}}

    team = {"__typename": "Team", "slug": "core", "organization": {"login": "acme"}}
    node = {
        "number": 5,
        "createdAt": "2026-09-01T00:00:00Z",
        "author": {"__typename": "User", "login": "chen"},
        "reviewRequests": {
            "totalCount": 9,
            "nodes": [
                user("bob"),
                {"requestedReviewer": team},
                user("Bob"),  # logins ignore case
                {"requestedReviewer": team},
                {"requestedReviewer": {"__typename": "Bot", "login": "renovate"}},
                {"requestedReviewer": {"__typename": "Mannequin", "login": "imported"}},
                {"requestedReviewer": None},  # a reviewer the token cannot see
                None,
                user("chen"),
            ],
        },
    }
    pr = needs_attention(node, THRESHOLDS, NOW)
    assert pr is not None and pr.requested == ["bob", "acme/core"] and pr.asked == ["bob", "acme/core"]


def test_code_owners_of_the_changed_files_without_the_author(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.repos[REPO].files |= {".github/CODEOWNERS": CODEOWNERS, "CODEOWNERS": "* @not-this-one\n"}
    changed = files("core/engine.py", "docs/guide.md", "core/vendor/lib.c", "setup.py")
    open_pr(fake, 10, 8, author="alice", files=changed)
    open_pr(fake, 11, 8, author="bob", files=files("core/engine.py"))
    open_pr(fake, 12, 8, author="bob", files=files("README.md"), requested=["eve"])
    open_pr(fake, 13, 8, files=files("core/vendor/zlib.c"))  # unowned: the last matching line names nobody
    fake.reset_counts()

    got = asked(client)

    assert got[10] == (
        [],
        ["acme/python", "writer", "docs@example.com"],
        ["acme/python", "writer", "docs@example.com"],
    )
    assert got[11] == ([], ["acme/python", "alice"], ["acme/python", "alice"])
    assert got[12] == (["eve"], ["lead"], ["eve"])  # the requested reviewers first
    assert got[13] == ([], [], [])
    assert fake.counts == {"POST /graphql": 1}


@pytest.mark.parametrize(
    ("where", "owners"),
    [
        ({".github/CODEOWNERS": "* @a\n", "CODEOWNERS": "* @b\n", "docs/CODEOWNERS": "* @c\n"}, ["a"]),
        ({"CODEOWNERS": "* @b\n", "docs/CODEOWNERS": "* @c\n"}, ["b"]),
        ({"docs/CODEOWNERS": "* @c\n"}, ["c"]),
        ({".github/CODEOWNERS": "# nobody yet\n", "CODEOWNERS": "* @b\n"}, []),  # the first found is used
        ({".github/codeowners": "* @a\n", "Docs/CODEOWNERS": "* @c\n"}, []),  # names are case-sensitive
    ],
)
def test_the_codeowners_github_uses(
    fake: FakeGitHub, client: GitHubClient, where: dict[str, str], owners: list[str]
) -> None:
    fake.repos[REPO].files |= where
    open_pr(fake, 10, 8)
    assert asked(client)[10][1] == owners


def test_a_codeowners_that_cannot_be_read_names_nobody_and_loses_nothing(
    fake: FakeGitHub, client: GitHubClient, caplog: pytest.LogCaptureFixture
) -> None:
    repo = fake.repos[REPO]
    repo.files |= {".github/CODEOWNERS": "* @a\n", "CODEOWNERS": "* @b\n"}
    repo.broken_texts = {".github/CODEOWNERS"}  # GitHub fails on that one field
    open_pr(fake, 10, 8, requested=["eve"])
    source = GitHubSource(client, REPO)
    attention = source.attention(THRESHOLDS, NOW)
    assert attention is not None and attention.default_branch == "main"
    assert [(pr.number, pr.requested, pr.owners) for pr in attention.open_prs] == [(10, ["eve"], [])]
    assert source.repo_file() == SETTINGS_TOML
    assert f"GitHub failed to give {REPO}:.github/CODEOWNERS" in caplog.text


def test_a_later_codeowners_that_fails_does_not_matter(fake: FakeGitHub, client: GitHubClient) -> None:
    fake.repos[REPO].files |= {"CODEOWNERS": "* @b\n"}
    fake.repos[REPO].broken_texts = {"docs/CODEOWNERS"}
    open_pr(fake, 10, 8)
    assert asked(client)[10][1] == ["b"]


def test_a_codeowners_github_would_not_load_names_nobody(
    fake: FakeGitHub, client: GitHubClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake.repos[REPO].files |= {"CODEOWNERS": "* @b\n" + "#" * 3 * 1024 * 1024}
    open_pr(fake, 10, 8)
    assert asked(client)[10][1] == []
    assert f"{REPO}:CODEOWNERS is 3 MB or more" in caplog.text


def test_owners_come_from_the_first_page_of_files(
    fake: FakeGitHub, client: GitHubClient, caplog: pytest.LogCaptureFixture
) -> None:
    fake.repos[REPO].files |= {"CODEOWNERS": f"/f0.c @early\n/f{OPEN_FILES}.c @late\n"}
    open_pr(fake, 10, 8, files=files(*(f"f{i}.c" for i in range(OPEN_FILES + 5))))
    with caplog.at_level("INFO"):
        assert asked(client)[10][1] == ["early"]
    said = f"has {OPEN_FILES + 5} changed files: its code owners are those of the first {OPEN_FILES}"
    assert said in caplog.text


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
