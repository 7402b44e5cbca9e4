"""A fourth source, implementing only the `Source` protocol, runs through a report, `explain` and a weekly
delivery: the pipeline, the handlers and the delivery ask a source nothing else (no kind checks)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from prdigest.bot.delivery import deliver_subscription
from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.models import PullRequest, Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources import registry
from prdigest.sources.base import Source
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.sources.registry import source_factory
from prdigest.storage import Store, coverage
from prdigest.subscription import Subscription

DEMO = FixtureSource(demo_fixture_path())
assert DEMO.window is not None
WEEK: Window = DEMO.window
REPO = "acme/forge"
CONSOLE = Context(platform="console", chat_id="console", user_id="me")
FIRE = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)  # Monday 09:30 in Shanghai: the demo week just ended
OLD = 7  # a PR the stub's host knows and no window read brings into the cache


class StubForge(Source):
    """A forge prdigest has never heard of: the demo week's PRs under another name, no reviews or labels."""

    kind = "stub"
    unavailable = ("labels", "reviews", "review_threads", "checks", "is_fork")

    def __init__(self) -> None:
        self.repo = REPO
        blank = dict.fromkeys(self.unavailable)
        self.prs = [
            pr.model_copy(update={"repo": REPO, "diff_excerpt": None, **blank})
            for pr in DEMO.fetch(WEEK)
            if pr.number != OLD
        ]
        self.old = self.prs[0].model_copy(
            update={"number": OLD, "title": "An old PR", "merged_at": datetime(2025, 1, 2, tzinfo=UTC)}
        )
        self.calls: list[str] = []

    def fetch(self, window: Window) -> list[PullRequest]:
        self.calls.append("fetch")
        return [pr for pr in self.prs if window.contains(pr.merged_at)]

    def fetch_pr(self, number: int) -> PullRequest | None:
        self.calls.append(f"fetch_pr {number}")
        return self.old if number == OLD else None

    def diff(self, number: int, store: Store | None = None) -> str | None:
        self.calls.append(f"diff {number}")
        return None

    def newest_merged(self) -> tuple[int, datetime] | None:
        newest = max(self.prs, key=lambda pr: pr.merged_at)
        return newest.number or 0, newest.merged_at

    def extent(self) -> tuple[datetime | None, datetime | None]:
        return None, WEEK.end  # the forge's export ends with the demo week


class Recorder:
    def __init__(self) -> None:
        self.posted: list[Report] = []

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        self.posted.append(report)
        return f"msg-{len(self.posted)}"

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("nothing to update")

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        raise AssertionError("no card is recovered here")

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return None


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    store = Store(tmp_path / "cache.db")
    yield store
    store.close()


@pytest.fixture
def forge(monkeypatch: pytest.MonkeyPatch) -> StubForge:
    """The stub, registered where a new kind of source registers: `sources.registry.FACTORIES`."""
    stub = StubForge()
    monkeypatch.setattr(registry, "FACTORIES", [lambda settings, repo: stub if repo == REPO else None])
    return stub


def test_a_report_reads_the_fourth_source_through_the_protocol(store: Store, forge: StubForge) -> None:
    settings = load_settings(env={})
    report = make_report(settings, store, forge, WEEK, lang="en", now=FIRE)
    assert report.source == "stub" and report.repo == REPO
    assert report.stats.merged_prs == len(forge.prs) > 20
    # Rule 2: it says what it could not supply, and, keeping the protocol's default, that it cannot tell
    # what is open now.
    assert set(report.unavailable) == {*forge.unavailable, "open_prs"} and report.attention is None
    assert not coverage.missing(store, REPO, WEEK, FIRE)  # complete up to its extent
    assert forge.calls.count("fetch") >= 1
    # A second report of the week from the cache alone says the same.
    again = make_report(settings, store, None, WEEK, repo=REPO, lang="en", now=FIRE, save=False)
    assert again.stats.merged_prs == report.stats.merged_prs


def test_explain_asks_the_fourth_source_for_a_pr_the_cache_lacks(store: Store, forge: StubForge) -> None:
    settings = load_settings(env={})
    svc = Services(
        settings=settings, store=store, default_repo=REPO, source_for=source_factory(settings),
        clock=lambda: FIRE,
    )  # fmt: skip
    reply = handle(f"explain #{OLD}", CONSOLE, svc)
    assert reply.kind == "explain" and reply.pr is not None and reply.pr.title == "An old PR"
    assert f"fetch_pr {OLD}" in forge.calls and store.get_pr(REPO, OLD) is not None
    missing = handle("explain #99999", CONSOLE, svc)
    assert missing.kind == "text" and "the local cache, the stub source" in missing.text


def test_a_weekly_delivery_reads_the_fourth_source(store: Store, forge: StubForge) -> None:
    from prdigest.storage.subscriptions import save_subscription

    settings = load_settings(env={})
    sub = save_subscription(store, Subscription(platform="slack", chat_id="C1", repo=REPO, lang="en"))
    slack = Recorder()
    outcome = deliver_subscription(settings, store, sub, {"slack": slack}, now=FIRE)
    assert outcome.status == "posted" and len(slack.posted) == 1
    posted = slack.posted[0]
    assert posted.source == "stub" and posted.stats.merged_prs == len(forge.prs)
    assert (posted.window.since, posted.window.until) == (WEEK.since, WEEK.until)


def test_the_pipeline_explain_and_delivery_ask_a_source_only_the_protocol() -> None:
    from pathlib import Path

    import prdigest

    root = Path(prdigest.__file__).parent
    for name in ("pipeline/single.py", "handlers/explain.py", "bot/delivery.py"):
        text = (root / name).read_text(encoding="utf-8")
        sniffs = ('.kind == "', '.kind != "', "getattr(source", "type: ignore", "GitSource", "GitHubSource")
        for sniff in sniffs:
            assert sniff not in text, (name, sniff)
    for path in (root / "sources").rglob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name


def test_every_source_implements_the_protocol() -> None:
    from prdigest.sources.git.source import GitSource
    from prdigest.sources.github.source import GitHubSource

    for cls in (GitSource, FixtureSource, GitHubSource, StubForge):
        assert Source in cls.__mro__
        for member in ("fetch", "fetch_pr", "diff", "newest_merged", "extent", "read_into"):
            assert callable(getattr(cls, member)), (cls.__name__, member)
        assert isinstance(cls.reads_history, bool) and isinstance(cls.finds_prs, bool)
