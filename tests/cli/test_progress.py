"""Counted progress: what long work reports (PRs read, batches synced), and how a terminal shows it."""

from __future__ import annotations

import io
from datetime import timedelta

from fakes.github_api import TOKEN, FakeGitHub, FakeRepo
from rich.console import Console
from test_github_source import FAST, REPO, WEEK

from prdigest.cli.progress import TerminalProgress
from prdigest.config import Settings
from prdigest.pipeline.single import make_report
from prdigest.progress import Progress, progress, reporting_to
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.sources.github.client import GitHubClient
from prdigest.sources.github.source import GitHubSource
from prdigest.sources.github.sync import sync
from prdigest.storage import Store


class Recorder(Progress):
    def __init__(self) -> None:
        self.phases: list[str] = []
        self.counts: list[tuple[str, int, int | None]] = []

    def phase(self, text: str) -> None:
        self.phases.append(text)

    def count(self, what: str, done: int, total: int | None = None) -> None:
        self.counts.append((what, done, total))


def test_outside_a_command_progress_is_quiet_and_restored_after_the_block() -> None:
    quiet = progress()
    recorder = Recorder()
    with reporting_to(recorder):
        assert progress() is recorder
        progress().count("PRs read", 1)
    assert progress() is quiet and recorder.counts == [("PRs read", 1, None)]


def test_a_report_counts_the_prs_it_reads(store: Store) -> None:
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    recorder = Recorder()
    with reporting_to(recorder):
        report = make_report(Settings(), store, source, source.window, use_llm=False)
    read = [done for what, done, _ in recorder.counts if what == "PRs read"]
    assert read and read == sorted(read) and read[-1] == report.stats.merged_prs
    assert recorder.phases[0].startswith("reading the fixture source")
    assert "building the report" in recorder.phases


def test_a_sync_counts_its_batches_to_the_last() -> None:
    with FakeGitHub() as fake:
        repo = fake.add_repo(FakeRepo(REPO))
        repo.generate(120, WEEK.start, WEEK.end - timedelta(hours=1), seed=2)
        recorder = Recorder()
        db = Store(":memory:")
        with reporting_to(recorder):
            sync(db, GitHubSource(GitHubClient(TOKEN, fake.url, FAST), REPO), WEEK)
        db.close()
    batches = [(done, total) for what, done, total in recorder.counts if what == "batches synced"]
    assert batches[0] == (0, 3) and batches[-1] == (3, 3) == (fake.operations["PullRequests"], 3)


def test_a_terminal_shows_each_count_with_its_total_and_nothing_elsewhere() -> None:
    shown = io.StringIO()
    terminal = Console(file=shown, force_terminal=True, width=100)
    with TerminalProgress(terminal) as bars:
        bars.phase("analysing 40 PRs")
        bars.count("PRs analysed", 7, 40)
        bars._bars.refresh()  # draw now, not on the refresh timer
    assert "PRs analysed" in shown.getvalue() and "7/40" in shown.getvalue()

    piped = io.StringIO()
    with TerminalProgress(Console(file=piped, force_terminal=False)) as bars:
        bars.count("PRs analysed", 7, 40)
    assert piped.getvalue() == ""


def test_a_report_with_the_llm_counts_the_prs_it_analysed_to_the_last(store: Store, serve) -> None:
    from test_llm_engine import settings as llm_settings

    fake = serve()
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    recorder = Recorder()
    with reporting_to(recorder):
        report = make_report(Settings(llm=llm_settings(fake)), store, source, source.window)
    analysed = [(done, total) for what, done, total in recorder.counts if what == "PRs analysed"]
    merged = report.stats.merged_prs
    assert analysed[-1] == (merged, merged) and [d for d, _ in analysed] == list(range(1, merged + 1))
