"""The GitHub source reads the options a PR changed from its definition files' texts (``object(expression:)``
beside the follow-up pages): what it cannot read leaves a PR's options unknown, never wrong."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo

from prdigest.models import PullRequest, Window
from prdigest.sources.github import definitions
from prdigest.sources.github.definitions import blob
from prdigest.sources.github.source import ClientOptions, GitHubClient, GitHubSource

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
REPO = "acme/trainer"
BEFORE = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n"
BEFORE += "    lr: float = 0.1\n    seed: int = 0\n"
AFTER = BEFORE.replace("    seed: int = 0\n", "")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        for k in range(4):  # four PRs, each dropping Config.seed from its own module
            path = f"trainer/config_{k}.py"
            merged = datetime(2026, 9, 8, 10, tzinfo=UTC) + timedelta(hours=k)
            repo.add(10 + k, merged_at=merged, files=[FakeFile(path, 0, 1, before=BEFORE, after=AFTER)])
        # Lines only added to a definition file, and a test changed: nothing can have been removed.
        merged = datetime(2026, 9, 9, 10, tzinfo=UTC)
        files = [FakeFile("trainer/more.py", 3, 0), FakeFile("tests/test_config.py", 1, 5)]
        repo.add(20, merged_at=merged, files=files)
        yield server


def read(fake: FakeGitHub) -> dict[int, PullRequest]:
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, backoff=0))
    return {pr.number or 0: pr for pr in GitHubSource(client, REPO).fetch(WEEK)}


def test_the_texts_come_in_one_request_and_only_where_an_option_can_have_gone(fake: FakeGitHub) -> None:
    prs = read(fake)
    for number in range(10, 14):
        options = prs[number].options
        assert options is not None and options.removed == {"field:Config.seed": "0"}
    assert prs[20].options is not None and prs[20].options.empty
    # The listing, the batch, one request for the 8 texts (before and after of 4 files); none for #20.
    assert fake.operations == {"ListMerged": 1, "PullRequests": 1, "FollowUp": 1}


def test_a_text_github_fails_to_give_leaves_that_prs_options_unknown(fake: FakeGitHub) -> None:
    fake.repos[REPO].broken_texts.add("trainer/config_2.py")
    prs = read(fake)
    assert prs[12].options is None  # unknown: not "the file is gone, and every option with it"
    assert prs[11].options is not None and "field:Config.seed" in prs[11].options.removed
    assert len(prs) == 5  # the PR itself is read whole


def test_texts_past_the_syncs_budget_are_not_read(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("prdigest.sources.github.models.MAX_TEXTS", 4)  # two PRs' texts
    prs = read(fake)
    assert [n for n in range(10, 14) if prs[n].options is not None] == [10, 11]


def test_a_binary_truncated_or_huge_text_is_read_as_no_text() -> None:
    node = {"__typename": "Blob", "oid": "a" * 40, "text": "x = 1\n", "byteSize": 6}
    assert blob({**node, "isBinary": False, "isTruncated": False}) == ("a" * 40, "x = 1\n")
    assert blob({**node, "isBinary": True, "isTruncated": False}) is None
    assert blob({**node, "isBinary": False, "isTruncated": True}) is None
    assert blob({**node, "byteSize": definitions.MAX_BLOB + 1}) is None
    assert blob({"__typename": "Tree", "oid": "b" * 40}) is None
    assert blob(None) is None
