"""Requests to sync a week from GitHub: prdigest's GraphQL batches against a naive PyGithub REST loop.

Runs against the local fake GitHub (tests/fakes), counting the requests it receives,
and prints one ``name=value`` line per figure. Goals: at most 3 requests for a 40-PR
week, at least 50 times fewer than the naive loop, at most 1 request to re-sync, at most 4 for the
40-PR week with what is open now (the open PRs needing attention, the default branch's checks and the
repository's .prdigest.toml: one request more).
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from github import Auth, Github

from prdigest.config.models import AttentionSettings
from prdigest.models import Window
from prdigest.sources.github.source import ClientOptions, GitHubClient, GitHubSource
from prdigest.sources.github.sync import add_diffs, sync
from prdigest.storage import Store
from tests.fakes.github_api import TOKEN, FakeChecks, FakeGitHub, FakeRepo

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")


def week_repo(name: str, count: int) -> FakeRepo:
    """``count`` PRs in the week, with files, reviews, threads, comments and a few overflowing PRs;
    as many the week after, which a naive client pages through first."""
    repo = FakeRepo(name)
    repo.generate(count, WEEK.start, WEEK.end, seed=count, overflow_every=20)
    repo.generate(count, WEEK.end, WEEK.end + timedelta(days=7), seed=count + 1)
    return repo


def open_repo(name: str, count: int) -> FakeRepo:
    """The week's repository with a dozen open PRs (a few drafts, most reviewed), a red default
    branch and a .prdigest.toml."""
    repo = week_repo(name, count)
    for i, pr in enumerate(
        repo.generate(12, WEEK.start - timedelta(days=14), WEEK.end, seed=7, closed_every=0)
    ):
        pr.merged_at, pr.is_open, pr.draft = None, True, i % 5 == 4
    repo.head_checks = FakeChecks("FAILURE", runs=[("build", "SUCCESS"), ("test", "FAILURE")])
    repo.files[".prdigest.toml"] = '[report]\nlanguage = "en"\n'
    return repo


def naive_sync(fake: FakeGitHub, name: str) -> int:
    """A straightforward REST loop: closed PRs by update time, then each PR and its lists."""
    before = fake.requests
    gh = Github(base_url=fake.url, auth=Auth.Token(TOKEN), per_page=100, seconds_between_requests=None)
    for pull in gh.get_repo(name).get_pulls(state="closed", sort="updated", direction="desc"):
        if pull.updated_at < WEEK.start:
            break
        if pull.merged_at is None or not WEEK.contains(pull.merged_at):
            continue
        _ = pull.additions, pull.deletions, pull.changed_files  # not in list items: one GET per PR
        for listing in (
            pull.get_files(),
            pull.get_reviews(),
            pull.get_review_comments(),
            pull.get_issue_comments(),
        ):
            list(listing)
    return fake.requests - before


def main() -> None:
    figures: dict[str, object] = {}
    with FakeGitHub() as fake:
        for count in (40, 400):
            fake.add_repo(week_repo(f"acme/week{count}", count))
        fake.add_repo(open_repo("acme/open40", 40))
        client = GitHubClient(TOKEN, fake.url, ClientOptions(backoff=0))
        store = Store(":memory:")
        for count in (40, 400):
            before = fake.requests
            result = sync(store, GitHubSource(client, f"acme/week{count}"), WEEK)
            assert len(result.fetched) == count and not result.partial, result.describe()
            figures[f"sync_requests_{count}"] = fake.requests - before
        for count in (40, 400):
            figures[f"naive_requests_{count}"] = naive_sync(fake, f"acme/week{count}")
        before = fake.requests
        source = GitHubSource(client, "acme/open40")
        assert len(sync(store, source, WEEK).fetched) == 40
        attention = source.attention(AttentionSettings(), WEEK.end)
        assert attention is not None and attention.open_prs and source.repo_file()
        figures["sync_requests_40_with_open"] = fake.requests - before
        figures["ratio_40"] = round(figures["naive_requests_40"] / figures["sync_requests_40"], 1)  # type: ignore[operator]

        before = fake.requests
        assert sync(store, GitHubSource(client, "acme/week40"), WEEK).fetched == []
        figures["resync_requests_40"] = fake.requests - before

        before = fake.requests
        done, failed = add_diffs(store, client, store.prs_in_window("acme/week40", WEEK))
        assert len(done) == 40 and not failed
        figures["diff_requests_40"] = fake.requests - before
        store.close()
    for name, value in figures.items():
        print(f"{name}={value}")


if __name__ == "__main__":
    main()
