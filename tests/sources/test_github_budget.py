"""One rate-limit budget and one bound on requests in flight per credential (a token, or a GitHub App's
installation), shared by every client of the process; each GraphQL query's cost by GitHub's formula, as
the fake GitHub charges it and as the client logs and counts it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import graphql
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo
from fakes.github_app import FakeApp
from fakes.github_rate import query_cost
from test_github_app_auth import pem

from prdigest import metrics
from prdigest.config import GithubSettings
from prdigest.sources.github.queries import BATCH_QUERY, OPEN_QUERY, follow_up_query
from prdigest.sources.github.source import ClientOptions, GitHubClient, GitHubRateLimited, make_client

REPO = "acme/rocket"
APP_ID = 4343
FAST = ClientOptions(timeout=3, retries=0, backoff=0, max_wait=0, secondary_wait=0)
OPEN = {"owner": "acme", "name": "rocket", "query": f"repo:{REPO} is:pr is:open sort:created-asc"}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        for number in range(1, 7):
            repo.add(number, merged_at=datetime(2026, 9, 8, tzinfo=UTC))
        server.add_repo(FakeRepo("solo/tool")).add(1, merged_at=datetime(2026, 9, 8, tzinfo=UTC))
        try:
            yield server
        finally:
            server.release()


def eventually(check: Callable[[], bool]) -> bool:
    """Whether ``check`` comes true within a few seconds (a bound against hanging, not a pace)."""
    deadline = time.monotonic() + 5
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


# --- the cost of a query -------------------------------------------------------------------------


def test_the_cost_of_a_query_follows_githubs_formula() -> None:
    # GitHub's own example: 1 request for the repositories, 100 for their issues, 5,000 for the issues'
    # labels: 5,101 requests, 51 points.
    docs = """query { viewer { login repositories(first: 100) { edges { node { id
      issues(first: 50) { edges { node { id labels(first: 60) { edges { node { id name } } } } } }
    } } } } }"""
    assert query_cost(graphql.parse(docs), {}) == 51
    # The open-PR query: the search (1 request), each of its 100 PRs' reviews, ready-for-review event,
    # requested reviewers and files (4 x 100), and the default branch's checks (1): 402 requests.
    assert query_cost(graphql.parse(OPEN_QUERY), OPEN) == 4
    # A page of review threads asks for each thread's first comment: 1 + 100 requests a list.
    assert query_cost(graphql.parse(follow_up_query(["reviewThreads"] * 3)), {}) == 3
    # A batch of PRs: the lists of one PR each (`nodes(ids:)` is no connection), under a point.
    assert query_cost(graphql.parse(BATCH_QUERY), {"ids": ["a"] * 50}) == 1


def test_the_fake_charges_the_cost_and_the_client_logs_and_counts_it(
    fake: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    client = GitHubClient(TOKEN, fake.url, FAST)
    counted = metrics.Metrics()
    metrics.use(counted)
    try:
        with caplog.at_level(logging.DEBUG, logger="prdigest.github"):
            data, _ = client.graphql(OPEN_QUERY, OPEN, purpose="attention")
    finally:
        metrics.use(None)
    assert data["rateLimit"] == {**data["rateLimit"], "cost": 4, "remaining": 4996, "limit": 5000}
    assert fake.budget["graphql"] == 4996 and client.points == 4
    assert client.budgets["graphql"].remaining == 4996 and client.budgets["graphql"].limit == 5000
    logged = [r.getMessage() for r in caplog.records if r.name == "prdigest.github"]
    line = "GitHub GraphQL OpenPullRequests (attention): cost 4, 4996 of 5000 points left"
    assert any(m.startswith(line) for m in logged), logged
    points = counted.registry.get_sample_value("prdigest_github_points_total", {"query": "OpenPullRequests"})
    assert points == 4


def test_a_query_costing_more_than_is_left_is_refused_as_github_refuses_it() -> None:
    with FakeGitHub(rate_limited_status=429) as fake:
        fake.add_repo(FakeRepo(REPO))
        fake.budget["graphql"] = 3  # the open-PR query costs 4
        client = GitHubClient(TOKEN, fake.url, FAST)
        with pytest.raises(GitHubRateLimited, match=r"graphql rate limit is spent \(3 of 5000 points left"):
            client.graphql(OPEN_QUERY, OPEN)
        assert fake.budget["graphql"] == 3 and fake.operations == {}  # refused before it ran


def test_a_403_whose_retries_ran_out_on_a_spent_budget_is_a_rate_limit() -> None:
    # The reset GitHub names has passed but its budget is not yet renewed: PyGithub retries, reads the
    # last 403's body to tell why, and hands that answer on without its message. The headers still say.
    with FakeGitHub(limit=4, window=2, clock=lambda: time.time() - 10) as fake:
        fake.add_repo(FakeRepo(REPO))
        client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=1, backoff=0, max_wait=5))
        client.graphql(OPEN_QUERY, OPEN)  # the 4 points
        with pytest.raises(GitHubRateLimited, match="graphql rate limit is spent") as raised:
            client.graphql(OPEN_QUERY, OPEN)
        assert fake.requests == 3  # the query, then a refusal retried once
        assert raised.value.retry_at == client.budgets["graphql"].reset_at is not None


def test_a_credentials_budget_is_refilled_an_hour_after_its_windows_first_request() -> None:
    now = [1_800_000_000.0]
    with FakeGitHub(clock=lambda: now[0]) as fake:
        fake.add_repo(FakeRepo(REPO))
        client = GitHubClient(TOKEN, fake.url, FAST)
        client.graphql(OPEN_QUERY, OPEN)
        first = client.budgets["graphql"]
        assert first.remaining == 4996 and first.reset_at == datetime.fromtimestamp(now[0] + 3600, UTC)
        now[0] += 3599
        client.graphql(OPEN_QUERY, OPEN)
        assert client.budgets["graphql"].remaining == 4992  # the same window
        now[0] += 1
        client.graphql(OPEN_QUERY, OPEN)
        again = client.budgets["graphql"]
        assert again.remaining == 4996 and again.reset_at == datetime.fromtimestamp(now[0] + 3600, UTC)


# --- one budget per credential ---------------------------------------------------------------------


def test_clients_of_one_token_share_its_budget(fake: FakeGitHub) -> None:
    spender = GitHubClient(TOKEN, fake.url, FAST)
    careful = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, backoff=0, reserve=4))
    other = GitHubClient("ghp_another0000000000", fake.url, FAST)
    fake.budget["graphql"] = 6
    assert spender.fetch_pr(REPO, 1) is not None  # 1 point: 5 left
    assert careful.budgets["graphql"].remaining == 5 and other.budgets == {}
    before = fake.requests
    # 5 left, 1 to spend: 4 would be left, the reserve; then the next would cross it.
    assert careful.fetch_pr(REPO, 2) is not None
    with pytest.raises(GitHubRateLimited, match=r"stopped before GitHub's graphql rate limit runs out"):
        careful.fetch_pr(REPO, 3)
    with pytest.raises(GitHubRateLimited):  # the careful client's spending counts for the spender too
        GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, reserve=4)).fetch_pr(REPO, 3)
    assert fake.requests == before + 1 and fake.budget["graphql"] == 4
    assert careful.points == 1 and spender.points == 1  # each counts its own points
    spender.fetch_diff(REPO, 1)  # REST: its headers name the core budget
    assert careful.budgets["core"].remaining == fake.budget["core"] == 4999


def test_a_request_in_flight_counts_against_the_reserve(fake: FakeGitHub) -> None:
    first = GitHubClient(TOKEN, fake.url, FAST)
    second = GitHubClient(TOKEN, fake.url, FAST)
    fake.budget["graphql"] = 9
    first.graphql(OPEN_QUERY, OPEN)  # 4 points: 5 left, and the query's cost is known
    fake.hold()
    worker = threading.Thread(target=first.graphql, args=(OPEN_QUERY, OPEN))
    worker.start()
    assert fake.wait_in_flight(1)
    # 5 left, 4 of them spoken for by the request in flight: the second's 4 would overspend.
    with pytest.raises(GitHubRateLimited, match="stopped before"):
        second.graphql(OPEN_QUERY, OPEN)
    fake.release()
    worker.join(5)
    assert not worker.is_alive() and fake.budget["graphql"] == 1 and fake.requests == 2


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def test_each_installation_of_an_app_has_a_budget_of_its_own(
    fake: FakeGitHub, key: rsa.RSAPrivateKey
) -> None:
    app = fake.add_app(FakeApp(APP_ID, key.public_key()))
    acme, solo = app.install("acme"), app.install("solo")
    settings = GithubSettings(url=fake.url, app_id=APP_ID, private_key=pem(key))
    first, second = (make_client(settings, FAST, owner="acme") for _ in range(2))
    lone = make_client(settings, FAST, owner="solo")
    assert first.fetch_pr(REPO, 1) is not None and second.fetch_pr(REPO, 2) is not None
    assert lone.fetch_pr("solo/tool", 1) is not None
    assert fake.installation_budget(acme.id)["graphql"] == 12_500 - 2
    assert fake.installation_budget(solo.id)["graphql"] == 12_500 - 1
    assert fake.budget["graphql"] == 5000  # the token's is untouched
    assert first.shared is second.shared and first.shared is not lone.shared
    assert first.budgets["graphql"].remaining == 12_498 and first.budgets["graphql"].limit == 12_500
    assert lone.budgets["graphql"].remaining == 12_499
    assert TOKEN not in first.shared.identity and str(acme.id) in first.shared.identity


# --- requests in flight --------------------------------------------------------------------------


def test_a_credentials_requests_in_flight_stay_within_the_bound(fake: FakeGitHub) -> None:
    settings = GithubSettings(url=fake.url, token=TOKEN, max_in_flight=3)
    clients = [make_client(settings, FAST) for _ in range(6)]  # a thread each, as a team's syncs are
    read: list[int | None] = []

    def fetch(client: GitHubClient, number: int) -> None:
        pr = client.fetch_pr(REPO, number)
        read.append(pr.number if pr else None)

    fake.hold()
    threads = [threading.Thread(target=fetch, args=(c, n)) for n, c in enumerate(clients, start=1)]
    for thread in threads:
        thread.start()
    # Three reach GitHub and wait for their answers; three wait for a slot without being sent.
    assert fake.wait_in_flight(3)
    assert eventually(lambda: clients[0].shared.waiting == 3)
    assert fake.in_flight == 3
    fake.release()
    for thread in threads:
        thread.join(5)
    assert sorted(read) == [1, 2, 3, 4, 5, 6]
    assert fake.peak_in_flight == 3 and clients[0].shared.waiting == 0
