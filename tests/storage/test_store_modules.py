"""Every public function of the store's modules on SQLite and on PostgreSQL (`any_store`): values read back,
rowcounts and booleans, ordering, upserts that replace, inserts that are idempotent, aware datetimes; then,
on PostgreSQL alone, two stores on one database (two replicas) racing for the same rows."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any, Literal

import pytest

from prdigest import clock
from prdigest.config.storage_url import parse_store_url
from prdigest.model_base import Dismissal, Snooze
from prdigest.models import PRAnalysis, PullRequest, Report, Stats, Window, WindowOut
from prdigest.storage import Store, coverage
from prdigest.storage.cards import card_of, remember_card
from prdigest.storage.chat_points import add as add_points
from prdigest.storage.chat_points import spent
from prdigest.storage.chat_users import KEPT, Looked, looked_up, remember
from prdigest.storage.deliveries import (
    Busy,
    Claim,
    StaleClaim,
    claim,
    complete,
    get_delivery,
    owns,
    page_token,
    release,
    renew,
    report_page,
    uncertain,
)
from prdigest.storage.direct_chats import is_direct, remember_direct
from prdigest.storage.dismissals import delete_dismissal, list_dismissals, save_dismissal
from prdigest.storage.github_cache import get_diffs, put_diff, record_updates, updated_at
from prdigest.storage.llm_budget import month_bounds, month_tokens, record_run
from prdigest.storage.llm_log import (
    CallTotals,
    LLMCall,
    built_cost,
    calls_of_run,
    get_output,
    known_rung,
    pr_summaries,
    purpose_totals,
    put_output,
    recent_failures,
    record_call,
    remember_rung,
    run_totals,
)
from prdigest.storage.migrations import MIGRATIONS
from prdigest.storage.pg_migrations import PG_MIGRATIONS
from prdigest.storage.repo_files import load_repo_file, save_repo_file
from prdigest.storage.revision import revision
from prdigest.storage.snoozes import active_snoozes, save_snooze
from prdigest.storage.subscriptions import (
    delete_subscription,
    get_subscription,
    list_subscriptions,
    save_subscription,
)
from prdigest.subscription import Subscription

REPO = "acme/x"
OTHER = "acme/y"
# Monday 2026-09-14 09:00 UTC, the instant prdigest's clock starts at in every test of this file.
T0 = datetime(2026, 9, 14, 9, tzinfo=UTC)
WEEK = Window(since=date(2026, 9, 7), until=date(2026, 9, 13), tz="Asia/Shanghai")
LEASE = timedelta(minutes=10)
JOIN_S = 60.0  # how long a test waits for each thread it started


@pytest.fixture
def store(any_store: Store) -> Store:
    return any_store


@pytest.fixture(autouse=True)
def fixed_clock(now: datetime) -> Iterator[datetime]:
    """prdigest's clock starts at T0 (after conftest's `now` set it to the test's start)."""
    clock.set_now(T0)
    yield T0


def at(moment: datetime) -> None:
    clock.set_now(moment)


def near(value: datetime, moment: datetime) -> bool:
    """``value`` is aware and a few seconds at most after ``moment`` (a set clock runs on)."""
    return value.utcoffset() is not None and moment <= value < moment + timedelta(seconds=30)


def window(since: str, until: str, tz: str) -> Window:
    return Window(since=date.fromisoformat(since), until=date.fromisoformat(until), tz=tz)


def pr(
    number: int | None,
    title: str = "fix: something",
    merged: str = "2026-09-08T10:00:00+08:00",
    repo: str = REPO,
    **kw: Any,
) -> PullRequest:
    return PullRequest(
        repo=repo,
        number=number,
        sha=f"{number or 0:040d}",
        title=title,
        author=kw.pop("author", "alice"),
        merged_at=datetime.fromisoformat(merged),
        **kw,
    )


def report(
    repo: str = REPO, since: str = "2026-09-07", until: str = "2026-09-13", lang: Literal["zh", "en"] = "en"
) -> Report:
    return Report(
        repo=repo,
        window=WindowOut(
            since=date.fromisoformat(since), until=date.fromisoformat(until), tz="Asia/Shanghai"
        ),
        engine="rules",
        lang=lang,
        source="fixture",
        generated_at=T0,
        stats=Stats(merged_prs=3),
        summary="three PRs",
    )


def analysis(number: int, summary: str, repo: str = REPO) -> PRAnalysis:
    return PRAnalysis(repo=repo, number=number, summary=summary, importance=5, insight=3, version="rules-1")


def rows(store: Store, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with store.reading() as tx:
        return tx.rows(sql, params or [])


# --- cards ------------------------------------------------------------------------------------------------


def test_cards_remember_replace_and_find_weekly_deliveries(store: Store) -> None:
    assert card_of(store, "slack", "C1", None) is None
    assert card_of(store, "slack", "C1", "") is None
    assert card_of(store, "slack", "C1", "m1") is None
    remember_card(store, "slack", "C1", "m1", report())
    assert card_of(store, "slack", "C1", "m1") == {
        "repo": REPO, "since": "2026-09-07", "until": "2026-09-13", "tz": "Asia/Shanghai", "lang": "en",
    }  # fmt: skip
    # The same message again replaces the row; another chat or platform does not see it.
    remember_card(store, "slack", "C1", "m1", report(OTHER, "2026-09-14", "2026-09-20", lang="zh"))
    found = card_of(store, "slack", "C1", "m1")
    assert found is not None and (found["repo"], found["since"], found["lang"]) == (OTHER, "2026-09-14", "zh")
    assert card_of(store, "slack", "C2", "m1") is None
    assert card_of(store, "lark", "C1", "m1") is None
    assert rows(store, "select count(*) as n from cards")[0]["n"] == 1

    # A weekly delivery's card: the deliveries row names the message, the report and the subscription.
    sub = save_subscription(store, Subscription(platform="lark", chat_id="oc_1", repo=REPO, lang="en"))
    assert sub.id is not None
    report_id = store.save_report(report(since="2026-08-31", until="2026-09-06"))
    key = f"prdigest:{sub.id}:2026-W36"
    claim(store, key, sub.id, "2026-W36", "w1", LEASE)
    assert card_of(store, "lark", "oc_1", "om_9") is None  # no message yet
    complete(store, key, "posted", "om_9", report_id)
    assert card_of(store, "lark", "oc_1", "om_9") == {
        "repo": REPO, "since": "2026-08-31", "until": "2026-09-06", "tz": "Asia/Shanghai", "lang": "en",
    }  # fmt: skip
    assert card_of(store, "lark", "oc_2", "om_9") is None
    assert card_of(store, "slack", "oc_1", "om_9") is None


# --- chat points --------------------------------------------------------------------------------------------


def test_chat_points_count_by_utc_hour_and_forget_past_hours(store: Store) -> None:
    nine = datetime(2026, 9, 14, 9, 5, tzinfo=UTC)
    assert spent(store, "C1", nine) == 0
    add_points(store, "C1", nine, 3)
    add_points(store, "C1", nine + timedelta(minutes=50), 2)  # 09:55: the same hour
    add_points(store, "C1", nine, 0)  # nothing
    add_points(store, "C1", nine, -4)  # nothing
    add_points(store, "C2", nine, 7)
    assert spent(store, "C1", nine) == 5
    # The same instant in another timezone is the same UTC hour.
    assert spent(store, "C1", nine.astimezone(timezone(timedelta(hours=8)))) == 5
    assert spent(store, "C2", nine) == 7
    ten = nine + timedelta(hours=1)
    assert spent(store, "C1", ten) == 0
    add_points(store, "C1", ten, 1)
    assert spent(store, "C1", ten) == 1
    # A count in a new hour drops every earlier hour, of every chat.
    assert spent(store, "C1", nine) == 0 and spent(store, "C2", nine) == 0
    assert rows(store, "select chat, hour, points from chat_points") == [
        {"chat": "C1", "hour": "2026-09-14T10", "points": 1}
    ]


# --- chat users ---------------------------------------------------------------------------------------------


def test_chat_users_are_kept_a_day_by_casefolded_email(store: Store) -> None:
    asked = datetime(2026, 9, 14, 17, 0, tzinfo=timezone(timedelta(hours=8)))  # 09:00 UTC
    assert looked_up(store, "slack", "ann@example.com", asked) is None
    remember(store, "slack", "Ann@Example.COM", "U1", asked)
    got = looked_up(store, "slack", "ANN@example.com", asked + timedelta(hours=1))
    assert got == Looked("U1", asked)
    assert got is not None and got.looked_at.utcoffset() == timedelta(0)
    assert looked_up(store, "lark", "ann@example.com", asked) is None  # per platform
    assert looked_up(store, "slack", "ann@example.com", asked + KEPT) is None  # a day later
    assert looked_up(store, "slack", "ann@example.com", asked - timedelta(seconds=1)) is None  # earlier
    # A second answer replaces the first: here "no such user".
    later = asked + timedelta(days=2)
    remember(store, "slack", "ann@example.com", None, later)
    assert looked_up(store, "slack", "ann@example.com", later) == Looked(None, later)
    assert rows(store, "select count(*) as n from chat_users")[0]["n"] == 1


# --- coverage -----------------------------------------------------------------------------------------------


def spans(store: Store, repo: str = REPO) -> list[tuple[str, str, str]]:
    found = rows(
        store,
        "select source, start_at, end_at from coverage where repo = ? order by source, start_at",
        [repo],
    )
    return [(r["source"], r["start_at"], r["end_at"]) for r in found]


def utc(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 9, day, hour, tzinfo=UTC)


def test_coverage_merges_touching_spans_and_names_missing_days(store: Store) -> None:
    coverage.record(store, REPO, "git", utc(7), utc(8))
    coverage.record(store, REPO, "git", utc(9), utc(10))
    coverage.record(store, REPO, "git", utc(10), utc(10))  # empty: nothing
    coverage.record(store, REPO, "git", utc(11), utc(10))  # backwards: nothing
    assert spans(store) == [
        ("git", "2026-09-07T00:00:00+00:00", "2026-09-08T00:00:00+00:00"),
        ("git", "2026-09-09T00:00:00+00:00", "2026-09-10T00:00:00+00:00"),
    ]
    # Touching both ends: the three become one; a span given in another timezone is kept in UTC.
    coverage.record(store, REPO, "git", utc(8), utc(8, 8).astimezone(timezone(timedelta(hours=8))))
    coverage.record(store, REPO, "git", utc(8, 8), utc(9))
    assert spans(store) == [("git", "2026-09-07T00:00:00+00:00", "2026-09-10T00:00:00+00:00")]
    # Inside an existing span, or overlapping its end: still one.
    coverage.record(store, REPO, "git", utc(7, 5), utc(8))
    coverage.record(store, REPO, "git", utc(9, 12), utc(11))
    coverage.record(store, REPO, "github", utc(12), utc(13))
    coverage.record(store, OTHER, "git", utc(1), utc(30))
    assert spans(store) == [
        ("git", "2026-09-07T00:00:00+00:00", "2026-09-11T00:00:00+00:00"),
        ("github", "2026-09-12T00:00:00+00:00", "2026-09-13T00:00:00+00:00"),
    ]

    week = window("2026-09-07", "2026-09-13", "UTC")
    after = utc(14, 9)

    def missing(**kw: Any) -> list[tuple[date, date]]:
        return [(w.since, w.until) for w in coverage.missing(store, REPO, week, after, **kw)]

    d = date.fromisoformat
    assert missing() == [(d("2026-09-11"), d("2026-09-11")), (d("2026-09-13"), d("2026-09-13"))]
    assert missing(source="git") == [(d("2026-09-11"), d("2026-09-13"))]
    assert missing(source="github") == [
        (d("2026-09-07"), d("2026-09-11")),
        (d("2026-09-13"), d("2026-09-13")),
    ]
    assert missing(also=[(utc(11), utc(12)), (utc(13), utc(14))]) == []
    # Up to now: a day not begun is not missing; one begun is, until read.
    assert coverage.missing(store, REPO, week, utc(11, 6)) == [window("2026-09-11", "2026-09-11", "UTC")]
    assert coverage.missing(store, REPO, week, utc(6)) == []
    assert coverage.missing(store, OTHER, week, after) == []
    # Shanghai's Monday starts at 16:00 UTC on Sunday, which no span covers.
    shanghai = coverage.missing(store, REPO, WEEK, after)
    assert shanghai == [
        window("2026-09-07", "2026-09-07", "Asia/Shanghai"),
        window("2026-09-11", "2026-09-13", "Asia/Shanghai"),
    ]


def test_coverage_record_window_leaves_the_lacking_days_out(store: Store) -> None:
    week = window("2026-09-07", "2026-09-13", "UTC")
    coverage.record_window(store, REPO, "github", week, read_at=utc(12, 6), lacking=[utc(9, 15)])
    assert spans(store) == [
        ("github", "2026-09-07T00:00:00+00:00", "2026-09-09T00:00:00+00:00"),
        ("github", "2026-09-10T00:00:00+00:00", "2026-09-12T06:00:00+00:00"),
    ]
    got = coverage.missing(store, REPO, week, utc(14))
    assert [(w.since.day, w.until.day) for w in got] == [(9, 9), (12, 13)]
    assert [
        (w.since.day, w.until.day) for w in coverage.runs([date(2026, 9, i) for i in (1, 2, 3, 5)], "UTC")
    ] == [
        (1, 3),
        (5, 5),
    ]


# --- deliveries ---------------------------------------------------------------------------------------------


def test_delivery_claims_are_fenced(store: Store) -> None:
    key = "prdigest:1:2026-W37"
    assert get_delivery(store, key) is None
    assert claim(store, key, 1, "2026-W37", "w1", LEASE) == Claim(None, 1)
    row = get_delivery(store, key)
    assert row is not None
    assert (row.status, row.claimed_by, row.fence, row.message_id, row.report_id) == (
        "claimed",
        "w1",
        1,
        "",
        None,
    )
    assert (row.subscription_id, row.week) == (1, "2026-W37")
    assert near(row.claimed_at, T0)
    assert owns(store, key, 1) and not owns(store, key, 2) and not owns(store, "nope", 1)

    # Another worker, within the lease: Busy, with the row.
    with pytest.raises(Busy) as busy:
        claim(store, key, 1, "2026-W37", "w2", LEASE)
    assert busy.value.row.claimed_by == "w1" and busy.value.row.fence == 1
    # The same worker again (a restart): its claim, the next fence.
    again = claim(store, key, 1, "2026-W37", "w1", LEASE)
    assert again.fence == 2 and again.before is not None and again.before.fence == 1
    assert not owns(store, key, 1) and owns(store, key, 2)
    assert renew(store, key, 2) is True
    assert renew(store, key, 1) is False

    # The lease runs out: another worker takes the key over; the old claim is stale.
    at(T0 + LEASE + timedelta(minutes=1))
    took = claim(store, key, 1, "2026-W37", "w2", LEASE)
    assert took.fence == 3 and took.before is not None and took.before.claimed_by == "w1"
    assert renew(store, key, 2) is False
    with pytest.raises(StaleClaim):
        complete(store, key, "posted", "m-old", None, fence=2)
    release(store, key, fence=2)  # not its claim: nothing
    uncertain(store, key, fence=2)  # nor this
    row = get_delivery(store, key)
    assert row is not None and (row.claimed_by, row.fence, row.status) == ("w2", 3, "claimed")

    complete(store, key, "posted", "m-1", 42, fence=3)
    row = get_delivery(store, key)
    assert row is not None and (row.status, row.message_id, row.report_id, row.fence) == (
        "posted",
        "m-1",
        42,
        3,
    )
    assert not owns(store, key, 3) and renew(store, key, 3) is False
    at(T0 + timedelta(days=30))
    with pytest.raises(Busy):  # posted: no worker takes it, however old
        claim(store, key, 1, "2026-W37", "w2", LEASE)
    release(store, key)  # only a claimed row is released
    assert get_delivery(store, key) is not None
    # Unfenced, complete records the outcome whoever holds the key.
    complete(store, key, "skipped", "", None)
    row = get_delivery(store, key)
    assert row is not None and (row.status, row.message_id, row.report_id) == ("skipped", "", None)


def test_delivery_release_and_uncertain(store: Store) -> None:
    key = "prdigest:2:2026-W37"
    claim(store, key, 2, "2026-W37", "w1", LEASE)
    release(store, key, fence=1)
    assert get_delivery(store, key) is None
    assert claim(store, key, 2, "2026-W37", "w2", LEASE) == Claim(None, 1)  # a new key again
    release(store, key)
    assert get_delivery(store, key) is None

    claim(store, key, 2, "2026-W37", "w1", LEASE)
    uncertain(store, key, fence=1)
    row = get_delivery(store, key)
    assert row is not None and row.claimed_by == "" and row.claimed_at == datetime.fromtimestamp(0, UTC)
    assert owns(store, key, 1)  # still claimed, but expired: the next worker takes it over at once
    took = claim(store, key, 2, "2026-W37", "w2", LEASE)
    assert took.fence == 2 and took.before is not None and took.before.claimed_by == ""
    uncertain(store, key)  # unfenced
    row = get_delivery(store, key)
    assert row is not None and row.claimed_by == "" and row.fence == 2


def test_report_pages(store: Store) -> None:
    report_id = store.save_report(report())
    token = page_token(store, report_id, "C1")
    asker = page_token(store, report_id, viewer="asker")
    assert token != asker and len(token) >= 16
    page = report_page(store, token)
    assert page is not None
    assert (page.report_id, page.chat_id, page.viewer) == (report_id, "C1", "chat")
    assert near(page.created_at, T0)
    page = report_page(store, asker)
    assert page is not None and (page.chat_id, page.viewer) == (None, "asker")
    assert report_page(store, "no-such-token") is None


# --- direct chats -------------------------------------------------------------------------------------------


def test_direct_chats(store: Store) -> None:
    assert is_direct(store, "lark", "oc_1") is False
    remember_direct(store, "lark", "oc_1")
    remember_direct(store, "lark", "oc_1")  # again: nothing
    assert is_direct(store, "lark", "oc_1") is True
    assert is_direct(store, "slack", "oc_1") is False
    assert is_direct(store, "lark", "oc_2") is False
    assert rows(store, "select count(*) as n from direct_chats")[0]["n"] == 1


# --- dismissals ---------------------------------------------------------------------------------------------


def test_dismissals(store: Store) -> None:
    first = Dismissal(repo=REPO, number=7, label="no_tests", by="U1", at=T0)
    save_dismissal(store, first)
    save_dismissal(store, Dismissal(repo=REPO, number=3, label="risky", by="U1", at=T0))
    save_dismissal(store, Dismissal(repo=REPO, number=7, label="large", by="U1", at=T0))
    save_dismissal(store, Dismissal(repo=OTHER, number=7, label="no_tests", by="U9", at=T0))
    # The same PR and label again replaces who and when.
    later = datetime(2026, 9, 15, 10, tzinfo=timezone(timedelta(hours=8)))
    save_dismissal(store, Dismissal(repo=REPO, number=7, label="no_tests", by="U2", at=later))
    got = list_dismissals(store, REPO)
    assert [(d.number, d.label) for d in got] == [(3, "risky"), (7, "large"), (7, "no_tests")]
    assert got[2].by == "U2" and got[2].at == later and got[2].at.utcoffset() is not None
    assert delete_dismissal(store, REPO, 7, "no_tests") is True
    assert delete_dismissal(store, REPO, 7, "no_tests") is False
    assert [(d.number, d.label) for d in list_dismissals(store, REPO)] == [(3, "risky"), (7, "large")]
    assert [d.by for d in list_dismissals(store, OTHER)] == ["U9"]
    assert list_dismissals(store, "acme/none") == []


# --- GitHub cache -------------------------------------------------------------------------------------------


def test_updated_at_joins_the_github_prs_only(store: Store) -> None:
    store.upsert_prs([pr(1, source="github"), pr(2, source="git"), pr(3, source="github")])
    store.upsert_prs([pr(1, source="github", repo=OTHER)])
    moment = datetime(2026, 9, 10, 12, tzinfo=timezone(timedelta(hours=8)))
    record_updates(store, REPO, {1: moment, 2: moment, 4: moment})  # 4: no row in prs
    assert updated_at(store, REPO, [1, 2, 3, 4, 5]) == {1: moment}
    assert updated_at(store, REPO, [1])[1].utcoffset() == timedelta(0)
    assert updated_at(store, OTHER, [1]) == {}  # the updates are per repository
    assert updated_at(store, REPO, []) == {}
    # A second record replaces the first.
    newer = moment + timedelta(days=1)
    record_updates(store, REPO, {1: newer, 3: newer})
    assert updated_at(store, REPO, iter([3, 1, 1])) == {1: newer, 3: newer}
    record_updates(store, REPO, {})  # nothing


def test_github_cache_reads_more_than_500_numbers(store: Store) -> None:
    numbers = range(1, 1204)
    store.upsert_prs(pr(n, source="github") for n in numbers)
    moment = datetime(2026, 9, 10, tzinfo=UTC)
    record_updates(store, REPO, {n: moment + timedelta(minutes=n) for n in numbers})
    got = updated_at(store, REPO, range(1, 1300))
    assert len(got) == 1203 and got[1203] == moment + timedelta(minutes=1203)
    for n in (1, 500, 501, 1000, 1001):
        put_diff(store, REPO, n, f"diff {n}")
    diffs = get_diffs(store, REPO, range(1, 1300))
    assert diffs == {n: f"diff {n}" for n in (1, 500, 501, 1000, 1001)}


def test_diffs_are_replaced(store: Store) -> None:
    assert get_diffs(store, REPO, [1]) == {}
    put_diff(store, REPO, 1, "old")
    put_diff(store, REPO, 1, "new\n+ line")
    put_diff(store, OTHER, 1, "other")
    assert get_diffs(store, REPO, [1, 2]) == {1: "new\n+ line"}
    assert get_diffs(store, OTHER, [1]) == {1: "other"}
    assert get_diffs(store, REPO, []) == {}


# --- LLM budget and log -------------------------------------------------------------------------------------


def call(run_id: str, purpose: str = "analyse_pr", subject: str = "acme/x#1", **kw: Any) -> LLMCall:
    fields: dict[str, Any] = {
        "model": "m1", "prompt_version": "p1", "prompt_hash": "h", "rung": "json_schema",
        "input_tokens": 100, "output_tokens": 10, "latency_ms": 5, "outcome": "ok",
    }  # fmt: skip
    return LLMCall(run_id=run_id, purpose=purpose, subject=subject, **{**fields, **kw})


def test_llm_budget_counts_the_month_per_endpoint(store: Store) -> None:
    start, end = month_bounds(datetime(2026, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))))
    assert (start, end) == (datetime(2027, 1, 1, tzinfo=UTC), datetime(2027, 2, 1, tzinfo=UTC))
    assert month_bounds(T0) == (datetime(2026, 9, 1, tzinfo=UTC), datetime(2026, 10, 1, tzinfo=UTC))

    record_run(store, "run-a", "https://a.example/v1", "m1")
    record_run(store, "run-a", "https://b.example/v1", "m2")  # again: the first stays
    record_run(store, "run-b", "https://b.example/v1", "m1")
    assert rows(store, "select endpoint, model from llm_runs where run_id = ?", ["run-a"]) == [
        {"endpoint": "https://a.example/v1", "model": "m1"}
    ]
    record_call(store, call("run-a", input_tokens=100, output_tokens=10))
    record_call(store, call("run-b", input_tokens=1000, output_tokens=1))
    record_call(store, call("run-old", input_tokens=5, output_tokens=5))  # no run row: every endpoint's
    at(datetime(2026, 8, 31, 23, 59, tzinfo=UTC))
    record_call(store, call("run-a", input_tokens=7777, output_tokens=0))  # last month
    assert month_tokens(store, "https://a.example/v1", T0) == 120
    assert month_tokens(store, "https://b.example/v1", T0) == 1011
    assert month_tokens(store, "https://c.example/v1", T0) == 10
    assert month_tokens(store, "https://a.example/v1", datetime(2026, 8, 15, tzinfo=UTC)) == 7777
    assert month_tokens(store, "https://a.example/v1", datetime(2026, 7, 15, tzinfo=UTC)) == 0


def test_llm_log_totals_and_calls(store: Store) -> None:
    assert run_totals(store, "r1") == CallTotals(0, 0, 0)
    assert purpose_totals(store, "r1") == {}
    assert calls_of_run(store, "r1") == []
    first = call("r1", "analyse_pr", "acme/x#1", input_tokens=100, output_tokens=10)
    second = call("r1", "narrate", "acme/x 2026-W37", input_tokens=50, output_tokens=40, rung="prompt")
    third = call("r1", "analyse_pr", "acme/x#2", input_tokens=1, output_tokens=2, outcome="invalid")
    for c in (first, second, third):
        record_call(store, c)
    record_call(store, call("r2", input_tokens=9, output_tokens=9))
    assert run_totals(store, "r1") == CallTotals(3, 151, 52)
    assert isinstance(run_totals(store, "r1").input_tokens, int)
    assert purpose_totals(store, "r1") == {
        "analyse_pr": CallTotals(2, 101, 12),
        "narrate": CallTotals(1, 50, 40),
    }
    assert calls_of_run(store, "r1") == [first, second, third]
    assert calls_of_run(store, "r2") == [call("r2", input_tokens=9, output_tokens=9)]


def test_llm_log_built_cost_is_the_last_other_run(store: Store) -> None:
    record_call(store, call("old", "analyse_pr", "acme/x#1", input_tokens=500, output_tokens=50))
    record_call(store, call("made", "analyse_pr", "acme/x#1", input_tokens=100, output_tokens=10))
    record_call(store, call("made", "repair", "acme/x#1", input_tokens=20, output_tokens=2))
    record_call(store, call("made", "analyse_pr", "acme/x#1", prompt_version="p2", input_tokens=9))
    record_call(store, call("made", "narrate", "acme/x W37", input_tokens=30, output_tokens=3))
    record_call(store, call("now", "analyse_pr", "acme/x#1", input_tokens=1, output_tokens=1))
    made = [("acme/x#1", "p1"), ("acme/x W37", "p1"), ("acme/x#1", "p1"), ("acme/x#9", "p1")]
    assert built_cost(store, made, "now") == {
        "analyse_pr": CallTotals(1, 100, 10),
        "repair": CallTotals(1, 20, 2),
        "narrate": CallTotals(1, 30, 3),
    }
    # Asked by this run alone: nothing reused.
    assert built_cost(store, [("acme/x W37", "p1")], "made") == {}
    assert built_cost(store, [], "now") == {}


def test_llm_outputs_and_rungs_are_replaced(store: Store) -> None:
    assert get_output(store, "k1") is None
    put_output(store, "k1", "narrate", "m1", "p1", '{"a": 1}')
    put_output(store, "k1", "narrate", "m1", "p1", '{"a": 2}')
    put_output(store, "k2", "ask", "m1", "p1", "answer")
    assert get_output(store, "k1") == '{"a": 2}'
    assert get_output(store, "k2") == "answer"
    assert known_rung(store, "https://a/v1", "m1") is None
    remember_rung(store, "https://a/v1", "m1", "json_schema")
    remember_rung(store, "https://a/v1", "m1", "json_object")
    remember_rung(store, "https://a/v1", "m2", "prompt")
    assert known_rung(store, "https://a/v1", "m1") == "json_object"
    assert known_rung(store, "https://a/v1", "m2") == "prompt"
    assert known_rung(store, "https://b/v1", "m1") is None


def test_llm_log_recent_failures_read_each_subjects_last_request(store: Store) -> None:
    at(T0 - timedelta(days=2))
    record_call(store, call("r0", subject="s-old", outcome="timeout"))  # before `since`
    at(T0)
    record_call(store, call("r1", subject="s-a", outcome="ok"))
    record_call(store, call("r1", subject="s-a", outcome="invalid"))  # last: a failure
    record_call(store, call("r1", subject="s-b", outcome="timeout"))
    record_call(store, call("r1", subject="s-b", outcome="ok"))  # last: fine
    record_call(store, call("r1", subject="s-c", outcome="timeout"))
    record_call(store, call("r1", subject="s-d", outcome="invalid", model="m2"))  # another model
    record_call(store, call("r1", subject="s-e", outcome="invalid", prompt_version="p2"))
    record_call(store, call("r1", "narrate", subject="s-f", outcome="invalid"))  # not an analysis
    record_call(store, call("r1", subject="s-g", outcome="rate_limited"))
    subjects = ["s-old", "s-a", "s-b", "s-c", "s-d", "s-e", "s-f", "s-g", "s-none"]
    since = T0 - timedelta(days=1)
    assert recent_failures(store, subjects, "m1", "p1", since) == {"s-a", "s-c"}
    assert recent_failures(store, subjects, "m2", "p1", since) == {"s-d"}
    assert recent_failures(store, subjects, "m1", "p1", T0 - timedelta(days=3)) == {"s-a", "s-c", "s-old"}
    assert recent_failures(store, [], "m1", "p1", since) == set()


def test_pr_summaries_follow_the_latest_analysis(store: Store) -> None:
    store.upsert_prs([pr(1), pr(2), pr(3), pr(1, repo=OTHER)])
    assert pr_summaries(store, REPO, [1, 2, 3]) == {}
    store.put_analysis(pr(1), analysis(1, "first"), "en")
    store.put_analyses([(pr(1), analysis(1, "again")), (pr(2), analysis(2, "second"))], "en")
    assert pr_summaries(store, REPO, [1, 2, 3, 4, 2]) == {1: "again", 2: "second"}
    assert pr_summaries(store, REPO, []) == {}
    assert pr_summaries(store, OTHER, [1]) == {}


# --- repository files, snoozes, subscriptions ------------------------------------------------------------


def test_repo_files(store: Store) -> None:
    assert load_repo_file(store, REPO) is None
    save_repo_file(store, REPO, "[report]\ntop_n = 5\n")
    save_repo_file(store, OTHER, "")  # read, and it has none
    assert load_repo_file(store, REPO) == "[report]\ntop_n = 5\n"
    assert load_repo_file(store, OTHER) == ""
    save_repo_file(store, REPO, "[report]\ntop_n = 7\n")
    assert load_repo_file(store, REPO) == "[report]\ntop_n = 7\n"


def test_snoozes(store: Store) -> None:
    week = timedelta(days=7)
    save_snooze(
        store, Snooze(repo=REPO, kind="risk", number=0, label="no_tests", until=T0 + week, by="U1", at=T0)
    )
    ack_at = T0 - timedelta(hours=1)
    save_snooze(store, Snooze(repo=REPO, kind="open", number=15, label="waiting_review", by="U2", at=ack_at))
    save_snooze(store, Snooze(repo=REPO, kind="open", number=16, label="", until=T0, by="U2", at=T0))
    save_snooze(store, Snooze(repo=OTHER, kind="open", number=1, label="", until=T0 + week, by="U3", at=T0))
    got = active_snoozes(store, REPO, T0)
    # Oldest first; the one that ran out at T0 is left out.
    assert [(s.kind, s.number, s.label) for s in got] == [
        ("open", 15, "waiting_review"),
        ("risk", 0, "no_tests"),
    ]
    assert got[0].until is None and got[0].at == ack_at and got[0].at.utcoffset() is not None
    assert got[1].until == T0 + week and got[1].until.utcoffset() is not None
    # The same button again replaces who, when and until.
    later = T0 + timedelta(hours=2)
    save_snooze(
        store, Snooze(repo=REPO, kind="risk", number=0, label="no_tests", until=later, by="U9", at=later)
    )
    got = active_snoozes(store, REPO, T0 + timedelta(hours=1))
    assert [(s.kind, s.by, s.until) for s in got] == [("open", "U2", None), ("risk", "U9", later)]
    assert [s.kind for s in active_snoozes(store, REPO, later)] == ["open"]
    assert [s.by for s in active_snoozes(store, OTHER, T0)] == ["U3"]
    assert rows(store, "select count(*) as n from snoozes")[0]["n"] == 4


def test_subscriptions(store: Store) -> None:
    first = save_subscription(store, Subscription(platform="slack", chat_id="C1", repo=REPO, lang="en"))
    assert first.id is not None and first.created_at is not None and near(first.created_at, T0)
    second = save_subscription(store, Subscription(platform="slack", chat_id="C1", repo=OTHER))
    third = save_subscription(store, Subscription(platform="lark", chat_id="oc_1", repo=REPO))
    assert len({first.id, second.id, third.id}) == 3
    # The same chat and repository again: the same row, updated.
    created = datetime(2026, 1, 2, 3, tzinfo=UTC)
    again = save_subscription(
        store, Subscription(platform="slack", chat_id="C1", repo=REPO, lang="zh", top_n=5, created_at=created)
    )
    assert again.id == first.id and again.created_at == created
    got = get_subscription(store, first.id)
    assert got is not None and (got.id, got.lang, got.top_n, got.created_at) == (first.id, "zh", 5, created)
    assert got.created_at is not None and got.created_at.utcoffset() is not None
    assert get_subscription(store, 999_999) is None
    assert [s.id for s in list_subscriptions(store)] == [first.id, second.id, third.id]
    assert [s.repo for s in list_subscriptions(store, "slack")] == [REPO, OTHER]
    assert [s.id for s in list_subscriptions(store, chat_id="oc_1")] == [third.id]
    assert list_subscriptions(store, "slack", "oc_1") == []
    assert delete_subscription(store, "slack", "C1", OTHER) is True
    assert delete_subscription(store, "slack", "C1", OTHER) is False
    assert [s.id for s in list_subscriptions(store, "slack", "C1")] == [first.id]


# --- revision -----------------------------------------------------------------------------------------------


def test_revision_is_per_repository(store: Store) -> None:
    assert revision(store, REPO) == 0 and revision(store, OTHER) == 0

    def moves(write: Callable[[], object], repo: str = REPO) -> bool:
        before, other = revision(store, repo), revision(store, OTHER if repo == REPO else REPO)
        write()
        assert revision(store, OTHER if repo == REPO else REPO) == other  # the other repository's stands
        return revision(store, repo) > before

    assert moves(lambda: store.upsert_prs([pr(1), pr(2)]))
    assert not moves(lambda: store.upsert_prs([pr(1), pr(2)]))  # unchanged: no new revision
    assert moves(lambda: store.upsert_prs([pr(1, "edited")]))
    assert moves(lambda: store.upsert_prs([pr(1, repo=OTHER)]), OTHER)
    assert moves(lambda: store.put_analysis(pr(2), analysis(2, "summary"), "en"))
    assert not moves(lambda: store.put_analysis(pr(2), analysis(2, "summary"), "en"))
    assert moves(lambda: coverage.record(store, REPO, "git", utc(7), utc(8)))
    assert moves(lambda: coverage.record(store, OTHER, "git", utc(7), utc(8)), OTHER)
    assert moves(lambda: save_dismissal(store, Dismissal(repo=REPO, number=1, label="x", by="U", at=T0)))
    assert moves(lambda: delete_dismissal(store, REPO, 1, "x"))
    assert moves(
        lambda: save_snooze(store, Snooze(repo=REPO, kind="risk", number=0, label="y", by="U", at=T0))
    )
    assert moves(lambda: save_repo_file(store, REPO, "a = 1\n"))
    assert not moves(lambda: save_repo_file(store, REPO, "a = 1\n"))  # the same text again
    assert moves(lambda: save_repo_file(store, REPO, "a = 2\n"))
    # What a report does not read leaves the revision alone.
    assert not moves(lambda: put_diff(store, REPO, 1, "diff"))
    assert not moves(lambda: save_subscription(store, Subscription(platform="slack", chat_id="C", repo=REPO)))
    assert not moves(lambda: store.save_report(report()))
    assert revision(store, "acme/none") == 0


# --- Store --------------------------------------------------------------------------------------------------


def test_store_probe_integrity_and_schema(store: Store) -> None:
    store.probe_write(500)
    names = [fn.__name__ for fn in (MIGRATIONS if store.dialect == "sqlite" else PG_MIGRATIONS)]
    assert store.schema_versions() == names
    assert store.integrity() == {
        "path": store.where,
        "journal_mode": "wal" if store.dialect == "sqlite" else "postgresql",
        "prs": 0,
        "analyses": 0,
        "reports": 0,
    }
    store.upsert_prs([pr(1), pr(2)])
    store.put_analysis(pr(1), analysis(1, "s"), "en")
    store.save_report(report())
    counts = store.integrity()
    assert (counts["prs"], counts["analyses"], counts["reports"]) == (2, 1, 1)
    store.probe_write(500)  # rolled back: it wrote nothing
    assert store.integrity()["prs"] == 2


def test_store_figures_newest_authors_and_keys(store: Store) -> None:
    assert store.newest_prs(REPO) == [] and store.authors(REPO) == [] and store.pr_keys(REPO, WEEK) == []
    first = pr(1, merged="2026-09-08T10:00:00+08:00", additions=10, deletions=1, author="alice")
    store.upsert_prs(
        [
            first,
            pr(2, merged="2026-09-09T10:00:00+08:00", additions=20, deletions=2, author="bob"),
            pr(3, merged="2026-09-09T10:00:00+08:00", additions=5, deletions=0, author="alice"),
            pr(None, "direct push", merged="2026-09-10T10:00:00+08:00", additions=99, author="carol"),
            pr(4, merged="2026-09-15T10:00:00+08:00", additions=1, deletions=1, author="dan"),
            pr(9, repo=OTHER, author="erin"),
        ]
    )
    next_week = window("2026-09-14", "2026-09-20", "Asia/Shanghai")
    empty = window("2026-08-31", "2026-09-06", "Asia/Shanghai")
    assert store.period_figures(REPO, [WEEK, next_week, empty]) == [(3, 35, 3, 2), (1, 1, 1, 1), (0, 0, 0, 0)]
    assert store.period_figures(REPO, []) == []
    assert [p.number for p in store.newest_prs(REPO)] == [4, 3, 2, 1]
    assert [p.number for p in store.newest_prs(REPO, WEEK)] == [3, 2, 1]
    assert [p.number for p in store.newest_prs(REPO, limit=2)] == [4, 3]
    newest = store.newest_prs(REPO)[0]
    assert newest.merged_at == datetime.fromisoformat("2026-09-15T10:00:00+08:00")
    assert newest.merged_at.utcoffset() is not None
    assert sorted(store.authors(REPO)) == ["alice", "bob", "carol", "dan"]
    assert store.authors(OTHER) == ["erin"]
    keys = store.pr_keys(REPO, WEEK)
    assert [(uid, number) for uid, number, _ in keys] == [
        (pr(1).uid, 1),
        (pr(2).uid, 2),
        (pr(3).uid, 3),
    ]
    assert keys[0][2] == first.content_hash()


def test_store_reports(store: Store) -> None:
    assert store.get_report(1) is None
    first = store.save_report(report())
    second = store.save_report(report(OTHER))
    assert second != first
    got = store.get_report(first)
    assert got is not None and got.id == first
    assert got == report().model_copy(update={"id": first})
    assert got.generated_at == T0 and got.generated_at.utcoffset() is not None
    other = store.get_report(second)
    assert other is not None and other.repo == OTHER and other.id == second


# --- two replicas on one PostgreSQL database ---------------------------------------------------------------


@pytest.fixture
def replicas(pg_database: str) -> Iterator[tuple[Store, Store]]:
    """Two stores on the same database: two machines of one deployment."""
    first = Store(parse_store_url(pg_database))
    second = Store(parse_store_url(pg_database))
    try:
        yield first, second
    finally:
        first.close()
        second.close()


def at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` for i in range(count), each in a daemon thread, all started together; what each returned
    or raised."""
    gate = threading.Barrier(count, timeout=JOIN_S)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            gate.wait()
            results[i] = work(i)
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=JOIN_S)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    return results


@pytest.mark.timeout(120)
def test_replicas_claim_a_key_once(replicas: tuple[Store, Store]) -> None:
    key = "prdigest:1:2026-W37"
    got = at_once(8, lambda i: claim(replicas[i % 2], key, 1, "2026-W37", f"worker-{i}", LEASE))
    claims = [r for r in got if isinstance(r, Claim)]
    assert len(claims) == 1 and claims[0] == Claim(None, 1), got
    assert sum(isinstance(r, Busy) for r in got) == 7, got
    winner = next(i for i, r in enumerate(got) if isinstance(r, Claim))
    for store in replicas:
        row = get_delivery(store, key)
        assert row is not None and (row.claimed_by, row.fence) == (f"worker-{winner}", 1)


@pytest.mark.timeout(120)
def test_a_replica_takes_over_an_expired_claim(replicas: tuple[Store, Store]) -> None:
    first, second = replicas
    key = "prdigest:1:2026-W37"
    assert claim(first, key, 1, "2026-W37", "one", LEASE).fence == 1
    with pytest.raises(Busy):
        claim(second, key, 1, "2026-W37", "two", LEASE)
    at(T0 + LEASE + timedelta(seconds=1))
    took = claim(second, key, 1, "2026-W37", "two", LEASE)
    assert took.fence == 2 and took.before is not None and took.before.claimed_by == "one"
    assert not owns(first, key, 1) and owns(first, key, 2)
    assert renew(first, key, 1) is False
    with pytest.raises(StaleClaim):
        complete(first, key, "posted", "m-one", None, fence=1)
    complete(second, key, "posted", "m-two", None, fence=2)
    row = get_delivery(first, key)
    assert row is not None and (row.status, row.message_id, row.claimed_by) == ("posted", "m-two", "two")


@pytest.mark.timeout(120)
def test_replicas_recording_touching_spans_end_in_one(replicas: tuple[Store, Store]) -> None:
    days = 8
    got = at_once(days, lambda i: coverage.record(replicas[i % 2], REPO, "github", utc(1 + i), utc(2 + i)))
    assert got == [None] * days
    assert spans(replicas[0]) == [("github", "2026-09-01T00:00:00+00:00", "2026-09-09T00:00:00+00:00")]


@pytest.mark.timeout(120)
def test_replicas_saving_one_subscription_keep_one_row(replicas: tuple[Store, Store]) -> None:
    sub = Subscription(platform="slack", chat_id="C1", repo=REPO, created_at=T0)
    got = at_once(8, lambda i: save_subscription(replicas[i % 2], sub.model_copy(update={"top_n": 1 + i})))
    assert all(isinstance(s, Subscription) for s in got), got
    assert len({s.id for s in got}) == 1
    found = list_subscriptions(replicas[1])
    assert len(found) == 1 and found[0].id == got[0].id and found[0].top_n in range(1, 9)
    with replicas[0].reading() as tx:
        assert tx.count("subscriptions") == 1


def test_nul_characters_round_trip_on_postgresql(replicas: tuple[Store, Store]) -> None:
    store = replicas[0]
    nul = pr(1, "fix: a\x00b", body="before\x00after", diff_excerpt="+x\x00y")
    escaped = pr(2, "docs: the \\u0000 escape", body='json: "\\u0000"', diff_excerpt="+ \\u0000")
    plain = pr(3, "feat: plain", body="nothing odd", diff_excerpt="+ ok")
    assert store.upsert_prs([nul, escaped, plain]) == 3
    assert store.get_pr(REPO, 1) == nul
    assert store.get_pr(REPO, 2) == escaped
    got = {p.number: p for p in store.prs_in_window(REPO, WEEK, excerpts=False)}
    assert set(got) == {1, 2, 3}
    for original in (nul, escaped):
        read = got[original.number]
        assert (read.title, read.body) == (original.title, original.body)
        assert read.diff_excerpt in (None, original.diff_excerpt)
    assert got[3].diff_excerpt is None
    assert store.prs_in_window(REPO, WEEK) == [nul, escaped, plain]
    assert [p.number for p in store.newest_prs(REPO)] == [3, 2, 1]
    assert store.pr_keys(REPO, WEEK) == [(p.uid, p.number, p.content_hash()) for p in (nul, escaped, plain)]
    # Again, unchanged: the same rows.
    store.upsert_prs([nul, escaped])
    assert replicas[1].get_pr(REPO, 1) == nul and replicas[1].count_prs(REPO) == 3


# PostgreSQL's json operators (-> and ->>) de-escape every string of the document they read, and refuse
# \u0000: PgTx.json_int and PgTx.json_known (storage/postgres.py) fail on a window holding such a PR.
def test_period_figures_over_a_nul_on_postgresql(pg_database: str) -> None:
    store = Store(parse_store_url(pg_database))
    try:
        store.upsert_prs([pr(1, "fix: a\x00b", additions=3, deletions=1), pr(2, additions=5)])
        assert store.period_figures(REPO, [WEEK]) == [(2, 8, 1, 1)]
    finally:
        store.close()


def test_signals_known_over_a_nul_on_postgresql(pg_database: str) -> None:
    store = Store(parse_store_url(pg_database))
    try:
        store.upsert_prs([pr(1, "fix: a\x00b", labels=["bug"]), pr(2)])
        assert store.signals_known(REPO, WEEK, ["labels", "reviews"]) == {"labels"}
    finally:
        store.close()
