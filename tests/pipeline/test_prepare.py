"""Prepare ahead, report on time: a prepare syncs a repository's last days from the fake GitHub (real
PyGithub) and analyses them with the LLM (real openai SDK), diffs fetched then; Monday's scheduled
delivery asks the LLM only about the PR merged since and fetches no diff. Without a prepare schedule the
delivery fetches what it needs, as before."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo
from fakes.openai_api import FakeOpenAI
from serve_support import llm_env
from test_delivery import Recorder

from prdigest import clock
from prdigest.bot.delivery import deliver_subscription
from prdigest.bot.scheduler import PREPARE_JOB, WeeklyScheduler
from prdigest.config import Settings, load_settings
from prdigest.pipeline.prepare import prepare_all, prepare_window, subscribed_repos
from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription

pytestmark = pytest.mark.timeout(120)

REPO = "acme/rocket"
PREPARED_AT = datetime(2026, 9, 13, 2, 0, tzinfo=UTC)  # Sunday's prepare
FIRE = datetime(2026, 9, 14, 9, 30, tzinfo=UTC)  # Monday's delivery, 2026-W37
PER_REPO = 7  # GitHub points a repository's first prepare spends here (two searches, a fetch, a diff)


def merged(day: int, hour: int) -> dict[str, datetime]:
    at = datetime(2026, 9, day, hour, tzinfo=UTC)
    return {"created_at": at - timedelta(hours=5), "merged_at": at}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        for n, day in enumerate((8, 9, 10, 11), start=1):
            repo.add(n, author="alice", files=[FakeFile(f"core/mod{n}.py", 20 + n, 3)], **merged(day, 10))
        yield server


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    yield
    clock.set_now(None)


def settings_of(github: FakeGitHub, llm: FakeOpenAI, **extra: str) -> Settings:
    env = {"PRDIGEST_GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": github.url, **llm_env(llm), **extra}
    return load_settings(env={**env, "PRDIGEST_LLM__MAX_RETRIES": "0"})


def diffs_fetched(github: FakeGitHub) -> int:
    return sum(n for what, n in github.counts.items() if what.startswith(f"GET /repos/{REPO}/pulls/"))


def analyses_asked(llm: FakeOpenAI) -> int:
    return sum("<untrusted_pr_data>" in r.user for r in llm.requests)


def subscribe(store: Store) -> Subscription:
    sub = Subscription(platform="slack", chat_id="C1", repo=REPO, lang="en", tz="UTC", time="09:30")
    return save_subscription(store, sub)


def monday(settings: Settings, store: Store, sub: Subscription) -> Recorder:
    clock.set_now(FIRE + timedelta(minutes=1))
    chat = Recorder()
    outcome = deliver_subscription(settings, store, sub, {"slack": chat}, now=FIRE)
    assert outcome.status == "posted" and outcome.report is not None
    assert outcome.report.stats.merged_prs == 5
    assert outcome.report.stats.engines == {"llm": 5}
    return chat


def test_monday_asks_only_about_what_merged_since_the_prepare_and_fetches_no_diff(
    github: FakeGitHub, serve, store: Store
) -> None:
    llm = serve()
    settings = settings_of(github, llm)
    sub = subscribe(store)
    assert subscribed_repos(settings, store) == [REPO]
    clock.set_now(PREPARED_AT)
    [done] = prepare_all(settings, store, PREPARED_AT)
    assert (done.repo, done.prs, done.llm_analysed, done.error) == (REPO, 4, 4, None)
    assert (analyses_asked(llm), diffs_fetched(github)) == (4, 4)
    github.repos[REPO].add(5, author="bob", files=[FakeFile("core/mod5.py", 9, 1)], **merged(13, 10))
    searched = len(github.searches)
    open_reads = github.operations["OpenPullRequests"]

    monday(settings, store, sub)
    assert analyses_asked(llm) == 4 + 1  # the PR merged since the prepare, alone
    assert diffs_fetched(github) == 4  # none on Monday: PR 5 is analysed from its title and files
    # The prepare read the week up to Sunday 02:00 and the four weeks before (the trend's): Monday reads
    # the rest of Sunday alone, and the same week in Chinese for another chat reads nothing.
    sunday = "merged:2026-09-13T00:00:00+00:00..2026-09-13T23:59:59+00:00"
    merged_searches = [f"repo:{REPO} is:pr is:merged {sunday} sort:created-asc"]
    assert [q for q in github.searches[searched:] if "is:merged" in q] == merged_searches
    zh = save_subscription(
        store, Subscription(platform="slack", chat_id="C2", repo=REPO, lang="zh", tz="UTC")
    )
    monday(settings, store, zh)
    assert [q for q in github.searches[searched:] if "is:merged" in q] == merged_searches
    assert analyses_asked(llm) == 5  # one analysis per PR, whatever the language
    assert github.operations["OpenPullRequests"] == open_reads + 1  # what is open: read once for both


def test_without_a_prepare_schedule_the_delivery_fetches_the_diffs_it_needs(
    github: FakeGitHub, serve, store: Store
) -> None:
    llm = serve()
    settings = settings_of(github, llm, PRDIGEST_SCHEDULE__PREPARE_AT="off")
    github.repos[REPO].add(5, author="bob", files=[FakeFile("core/mod5.py", 9, 1)], **merged(13, 10))
    monday(settings, store, subscribe(store))
    assert (analyses_asked(llm), diffs_fetched(github)) == (5, 5)


def test_a_second_prepare_asks_nothing_new_and_one_failing_repository_leaves_the_others(
    github: FakeGitHub, serve, store: Store
) -> None:
    llm = serve()
    settings = settings_of(github, llm)
    clock.set_now(PREPARED_AT)
    prepare_all(settings, store, PREPARED_AT, [REPO])
    again = prepare_all(settings, store, PREPARED_AT, [REPO, "acme/missing"])
    assert [(d.repo, d.prs, d.llm_analysed) for d in again] == [(REPO, 4, 0), ("acme/missing", 0, 0)]
    assert again[0].error is None and again[1].error and "acme/missing" in again[1].describe()
    assert analyses_asked(llm) == 4


def test_the_prepare_window_holds_the_last_eight_days_through_today() -> None:
    window = prepare_window(datetime(2026, 9, 13, 23, 59, tzinfo=UTC))
    assert (str(window.since), str(window.until), window.tz) == ("2026-09-06", "2026-09-13", "UTC")


@pytest.mark.parametrize(
    ("prepare_at", "next_fire"), [("02:00", datetime(2026, 9, 14, 2, tzinfo=UTC)), ("off", None)]
)
def test_serves_scheduler_prepares_daily_at_the_configured_time(
    store: Store, prepare_at: str, next_fire: datetime | None
) -> None:
    settings = load_settings(env={"PRDIGEST_SCHEDULE__PREPARE_AT": prepare_at})
    scheduler = WeeklyScheduler(settings, store, {})
    scheduler.start(paused=True)
    try:
        found = scheduler._scheduler.get_job(PREPARE_JOB)
        after = datetime(2026, 9, 13, 12, tzinfo=UTC)
        assert (found.trigger.get_next_fire_time(None, after) if found else None) == next_fire
    finally:
        scheduler.shutdown()


def test_a_bad_prepare_time_is_a_clear_error() -> None:
    from prdigest.errors import ConfigError

    with pytest.raises(ConfigError, match="prepare_at"):
        load_settings(env={"PRDIGEST_SCHEDULE__PREPARE_AT": "25:00"})


def test_repositories_githubs_rate_limit_stopped_are_prepared_again_once_it_is_renewed(
    serve, store: Store
) -> None:
    llm = serve()
    # GitHub's clock stands still until the prepare waits: its budget (one repository's points, for a window
    # of 2 s) is spent by the first repository whatever the machine's speed, and renewed by the wait.
    github_now = [time.time()]
    with FakeGitHub(limit=PER_REPO + 2, window=2, clock=lambda: github_now[0]) as github:
        for name in ("acme/one", "acme/two"):
            github.add_repo(FakeRepo(name)).add(
                1, author="alice", files=[FakeFile("a.py", 3, 1)], **merged(9, 10)
            )
        settings = settings_of(github, llm)
        clock.set_now(PREPARED_AT)
        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            time.sleep(seconds)
            github_now[0] = time.time()

        done = prepare_all(settings, store, PREPARED_AT, ["acme/one", "acme/two"], sleep=sleep)
    assert [(d.repo, d.prs, d.error) for d in done] == [("acme/one", 1, None), ("acme/two", 1, None)]
    assert len(waits) == 1 and 0 <= waits[0] <= 4
