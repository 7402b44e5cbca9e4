"""What one chat command may read from GitHub: at most [chat] max_sync_days days, the newest first, so
that one user's two-year report cannot spend the budget another chat's weekly answer needs."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo, subscribe
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo

from prdigest.config import ChatSettings, load_settings
from prdigest.errors import ConfigError
from prdigest.handlers import Context, Services, handle
from prdigest.handlers.lanes import lane_of
from prdigest.handlers.request import request
from prdigest.i18n import texts
from prdigest.models import Window
from prdigest.sources.bounded import BoundedSource, chat_reads
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory
from prdigest.storage import Store, chat_points

REPO = "acme/huge"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
MONDAY = datetime(2026, 9, 14, 9, tzinfo=UTC)
ASKER = Context(platform="slack", chat_id="C_ASKER", user_id="U1")
TEAM = Context(platform="slack", chat_id="C_TEAM", user_id="U2")
# Enough for a week of the team's PRs and a bounded read; a read of two years spends it all. The fake
# charges a point a query (graphql_cost=1), as the counts here assume.
BUDGET = 10


def services(fake: FakeGitHub, tmp_path: Path, extra: str = "") -> Services:
    config = tmp_path / "prdigest.toml"
    config.write_text('[report]\ntimezone = "UTC"\nlanguage = "en"\n' + extra)
    settings = load_settings(config, env={"GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": fake.url})
    store = Store(tmp_path / "cache.db")
    for ctx in (ASKER, TEAM):  # two chats of the same repository: one member's request, the team's week
        subscribe(store, ctx.platform, ctx.chat_id, REPO, tz="UTC")
    return Services(settings=settings, store=store, default_repo=REPO, source_for=source_factory(settings),
                    clock=lambda: MONDAY)  # fmt: skip


def huge(fake: FakeGitHub) -> FakeRepo:
    """Two years of PRs, four a week."""
    repo = fake.add_repo(FakeRepo(REPO))
    repo.generate(416, datetime(2024, 9, 16, tzinfo=UTC), WEEK.end, seed=3, rich=False, closed_every=0)
    return repo


def searched_days(fake: FakeGitHub) -> set[date]:
    """The first days of every merged:A..B range GitHub was searched for."""
    found = re.findall(r"merged:(\d{4}-\d{2}-\d{2})", " ".join(fake.searches))
    return {date.fromisoformat(day) for day in found}


def test_a_two_year_report_reads_only_its_last_35_days_and_the_team_is_still_answered(tmp_path: Path) -> None:
    with FakeGitHub(limit=BUDGET, graphql_cost=1) as fake:
        huge(fake)
        svc = services(fake, tmp_path)
        reply = handle(f"report 2024-09-16..{WEEK.until} {REPO}", ASKER, svc)
        assert reply.report is not None
        first_read = WEEK.until - timedelta(days=34)
        assert searched_days(fake) and min(searched_days(fake)) >= first_read  # nothing older was asked for
        capped = texts("en")["read_capped"].format(
            repo=REPO, limit=35, since=date(2024, 9, 16), until=first_read - timedelta(days=1)
        )
        assert capped in reply.report.warnings
        fake.repos[REPO].generate(3, WEEK.start, WEEK.end, seed=9, rich=False, closed_every=0)  # new since
        week = handle(f"report {WEEK.since}..{WEEK.until} {REPO}", TEAM, svc)
        assert week.report is not None and week.report.stats.merged_prs == 7  # the week read afresh
        assert not any("Could not read" in w for w in week.report.warnings)
        svc.store.close()


def test_unbounded_the_same_report_spends_the_budget_the_team_needed(tmp_path: Path) -> None:
    # The finding this bound answers: with the bound lifted, one user's report leaves the team's week
    # unread (GitHub's budget is spent).
    with FakeGitHub(limit=BUDGET, graphql_cost=1) as fake:
        huge(fake)
        svc = services(fake, tmp_path, "[chat]\nmax_sync_days = 3660\n")
        handle(f"report 2024-09-16..{WEEK.until} {REPO}", ASKER, svc)
        week = handle(f"report {WEEK.since}..{WEEK.until} {REPO}", TEAM, svc)
        assert week.kind == "error" and "rate limit" in week.text
        svc.store.close()


def test_a_period_longer_than_the_bound_runs_in_the_slow_lane(tmp_path: Path) -> None:
    with FakeGitHub() as fake:
        huge(fake)
        svc = services(fake, tmp_path, "[chat]\nmax_sync_days = 7\n")
        handle(f"report {WEEK.since}..{WEEK.until} {REPO}", TEAM, svc)  # the week is cached now
        assert lane_of(request(f"risks {WEEK.since}..{WEEK.until} {REPO}", TEAM), svc).slow is False
        assert lane_of(request(f"risks 2026-09-06..{WEEK.until} {REPO}", TEAM), svc).slow is True  # 8 days
        svc.store.close()


def test_a_clone_is_read_whole(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "clone")
    commit(repo, "feat: start (#1)", "2026-09-08T10:00:00+00:00")
    clone = GitSource(repo, repo="acme/local")
    store = Store(tmp_path / "cache.db")
    sources = {"acme/local": clone}
    with chat_reads(
        store, sources.get, "slack:C1", "en", ChatSettings(max_sync_days=1), MONDAY
    ) as source_for:
        assert source_for("acme/local") is clone  # a local read costs no request budget
        assert source_for("acme/other") is None
    store.close()


class Recording:
    """A remote source that records the windows it is asked to read; each read costs ``cost`` points."""

    kind, repo, unavailable, reads_history, finds_prs = "remote", REPO, (), False, True

    def __init__(self, cost: int = 0) -> None:
        self.read: list[tuple[date, date]] = []
        self.cost = cost

    def read_into(self, store, window, each_batch=None):
        self.read.append((window.since, window.until))
        return []

    def points_spent(self) -> int:
        return self.cost * len(self.read)


def test_the_bound_is_shared_by_the_reads_of_one_command_newest_first() -> None:
    inner = Recording()
    source = BoundedSource(inner, "zh", 10, 500, 500)  # type: ignore[arg-type]
    assert source.read_into(None, WEEK) == []  # type: ignore[arg-type]
    earlier = Window(since="2026-08-31", until="2026-09-06", tz="UTC")
    (warning,) = source.read_into(None, earlier)  # type: ignore[arg-type]
    assert inner.read == [(WEEK.since, WEEK.until), (date(2026, 9, 4), date(2026, 9, 6))]
    assert "10" in warning and "2026-08-31" in warning and "2026-09-03" in warning and "缓存" in warning
    assert source.read_into(None, earlier) != [] and len(inner.read) == 2  # spent: nothing more is read


def test_a_chats_points_for_the_hour_are_shared_by_its_commands(tmp_path: Path) -> None:
    store = Store(tmp_path / "cache.db")
    limits = ChatSettings(max_sync_days=3660, github_points_per_hour=25)
    inner = Recording(cost=10)
    for _ in range(2):  # two commands: 10 points each
        with chat_reads(store, lambda repo: inner, "slack:C1", "en", limits, MONDAY) as source_for:
            assert source_for(REPO).read_into(store, WEEK) == []  # type: ignore[union-attr]
    assert chat_points.spent(store, "slack:C1", MONDAY) == 20 and len(inner.read) == 2
    with chat_reads(store, lambda repo: inner, "slack:C1", "en", limits, MONDAY) as source_for:
        source = source_for(REPO)
        assert source is not None and source.read_into(store, WEEK) == []  # 5 left: this read starts
        (spent,) = source.read_into(store, WEEK)  # none left: nothing is read
    assert len(inner.read) == 3 and "25 GitHub points" in spent and str(WEEK.since) in spent
    with chat_reads(store, lambda repo: inner, "lark:oc_2", "en", limits, MONDAY) as source_for:
        assert source_for(REPO).read_into(store, WEEK) == [] and len(inner.read) == 4  # type: ignore[union-attr]
    later = MONDAY + timedelta(hours=1)
    with chat_reads(store, lambda repo: inner, "slack:C1", "en", limits, later) as source_for:
        assert source_for(REPO).read_into(store, WEEK) == [] and len(inner.read) == 5  # type: ignore[union-attr]
    assert chat_points.spent(store, "slack:C1", later) == 10
    store.close()


def test_github_reads_are_counted_in_points(tmp_path: Path) -> None:
    with FakeGitHub(graphql_cost=1) as fake:
        huge(fake)
        # The repository's file costs a point, then the week's read starts with one left, and finishes.
        svc = services(fake, tmp_path, "[chat]\ngithub_points_per_hour = 2\n")
        first = handle(f"report {WEEK.since}..{WEEK.until} {REPO}", ASKER, svc)
        assert first.report is not None and first.report.stats.merged_prs == 4
        spent = chat_points.spent(svc.store, "slack:C_ASKER", MONDAY)
        assert spent == (5000 - fake.budget["graphql"]) + (5000 - fake.budget["core"]) > 2
        fake.reset_counts()
        again = handle(f"report 2026-08-31..2026-09-06 {REPO}", ASKER, svc)  # the points are spent
        assert again.report is not None and fake.searches == []
        assert any("2 GitHub points" in w for w in again.report.warnings)
        svc.store.close()


@pytest.mark.parametrize("key", ["max_sync_days", "github_points_per_hour"])
@pytest.mark.parametrize("value", ["-1", '"many"', "9999999"])
def test_a_bad_bound_is_named(tmp_path: Path, key: str, value: str) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(f"[chat]\n{key} = {value}\n")
    with pytest.raises(ConfigError, match=key):
        load_settings(config, env={})
    with pytest.raises(ConfigError, match=f"PRDIGEST_CHAT__{key.upper()}"):
        load_settings(env={f"PRDIGEST_CHAT__{key.upper()}": value.strip('"')})


def test_a_chat_whose_points_are_spent_asks_github_nothing_not_even_for_the_newest_pr(tmp_path: Path) -> None:
    with FakeGitHub() as fake:
        huge(fake)
        svc = services(fake, tmp_path, "[chat]\ngithub_points_per_hour = 0\n")
        reply = handle(f"risks {WEEK.since}..{WEEK.until} {REPO}", TEAM, svc)
        assert reply.report is None and texts("en")["read_points_spent"].split("{")[0] in reply.text
        assert fake.requests == 0  # the empty week's hint (the newest PR) is read within the points too
        svc.store.close()
