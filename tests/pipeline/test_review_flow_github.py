"""The review flow of a week read from GitHub, end to end: the fake GitHub through the real PyGithub,
make_report, and figures recomputed here from the fake's own timestamps; the flow's risks, muted and
dismissed like any label; and a clone, which knows no reviews."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import fmean, median

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakePR, FakeRepo, FakeReview
from test_github_source import FAST

from prdigest.config import Settings
from prdigest.models import Dismissal, Report, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.sources.github.source import GitHubClient, GitHubSource
from prdigest.storage import Store
from prdigest.storage.dismissals import save_dismissal
from prdigest.subscription import Subscription

pytestmark = pytest.mark.timeout(120)

REPO = "acme/rocket"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
# Long after the week: no open PRs are read, only the week and its four earlier weeks.
NOW = datetime(2026, 11, 2, 2, 0, tzinfo=UTC)
BOT = "copilot-pull-request-reviewer[bot]"
CORE = FakeFile("core/engine.py", 30, 4)
DOCS = FakeFile("docs/guide.md", 12, 0)


def at(day: int, hour: float) -> datetime:
    """An instant of September 2026 (UTC); the week's Monday is the 7th."""
    return datetime(2026, 9, day, tzinfo=UTC) + timedelta(hours=hour)


def review(author: str, state: str, when: datetime) -> FakeReview:
    return FakeReview(author, state, "", when)


def the_week(repo: FakeRepo) -> None:
    """Five PRs of 2026-W37, one of each case."""
    # Reviewed, commented then approved by others: first review after 5 h, merged 2 h after approval.
    repo.add(
        1,
        author="alice",
        created_at=at(8, 0),
        merged_at=at(8, 10),
        files=[DOCS],
        reviews=[review("bob", "COMMENTED", at(8, 5)), review("carol", "APPROVED", at(8, 8))],
    )
    # Opened as a draft, marked ready 20 h later: its wait for a review starts then.
    repo.add(
        2,
        author="alice",
        created_at=at(8, 2),
        ready_at=at(8, 22),
        merged_at=at(9, 8),
        files=[DOCS],
        reviews=[review("bob", "APPROVED", at(9, 4))],
    )
    # Approved by its author alone, on a core path: merged without review.
    repo.add(
        3,
        author="dave",
        created_at=at(9, 1),
        merged_at=at(9, 3),
        files=[CORE],
        reviews=[review("dave", "APPROVED", at(9, 2))],
    )
    # Reviewed by a bot alone: merged without review, and the bot is no reviewer.
    repo.add(
        4,
        author="eve",
        created_at=at(10, 0),
        merged_at=at(10, 6),
        files=[DOCS],
        reviews=[review(BOT, "APPROVED", at(10, 1))],
    )
    # Changes requested, then approved: the first review counts, and the first approval.
    repo.add(
        5,
        author="eve",
        created_at=at(10, 2),
        merged_at=at(12, 4),
        files=[DOCS],
        reviews=[review("bob", "CHANGES_REQUESTED", at(10, 3)), review("bob", "APPROVED", at(10, 9))],
    )


def earlier_weeks(repo: FakeRepo) -> None:
    """Three reviewed PRs in each of the four weeks before, waiting longer each week back."""
    number = 100
    for back in range(1, 5):
        monday = 7 - 7 * back
        for k in range(3):
            opened = at(7, 0) + timedelta(days=monday - 7 + k + 0.5)
            wait = 4 * back + k
            reviews = [review("bob", "APPROVED", opened + timedelta(hours=wait))]
            merged = opened + timedelta(hours=wait + 3)
            repo.add(
                number, author="alice", created_at=opened, merged_at=merged, files=[DOCS], reviews=reviews
            )
            number += 1


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        repo = server.add_repo(FakeRepo(REPO))
        the_week(repo)
        earlier_weeks(repo)
        yield server


def hours(start: datetime, end: datetime) -> float:
    return max(0.0, (end - start).total_seconds() / 3600)


def expected_flow(prs: list[FakePR]) -> dict[str, float | None]:
    """The week's medians and count, recomputed from the fake's own data."""
    first, approval, total, unreviewed = [], [], [], 0
    for pr in prs:
        assert pr.merged_at is not None
        others = sorted(
            (r for r in pr.reviews if r.author not in (pr.author, None) and not r.author.endswith("[bot]")),
            key=lambda r: r.submitted_at,
        )
        opened = max(pr.created_at, pr.ready_at or pr.created_at)
        total.append(hours(pr.created_at, pr.merged_at))
        if not others:
            unreviewed += 1
            continue
        first.append(hours(opened, others[0].submitted_at))
        approvals = [r for r in others if r.state == "APPROVED"]
        if approvals:
            approval.append(hours(approvals[0].submitted_at, pr.merged_at))
    return {
        "first_review_hours_median": median(first) if first else None,
        "approval_to_merge_hours_median": median(approval) if approval else None,
        "open_to_merge_hours_median": median(total),
        "merged_without_review": unreviewed,
    }


def in_week(fake: FakeGitHub, week: Window) -> list[FakePR]:
    return [p for p in fake.repos[REPO].prs.values() if p.merged_at and week.start <= p.merged_at < week.end]


def report_of(fake: FakeGitHub, store: Store, **kw: object) -> Report:
    source = GitHubSource(GitHubClient(TOKEN, fake.url, FAST), REPO)
    return make_report(Settings(), store, source, WEEK, lang="en", save=False, now=NOW, **kw)  # type: ignore[arg-type]


def test_the_weeks_medians_are_those_of_the_fakes_timestamps(fake: FakeGitHub, store: Store) -> None:
    report = report_of(fake, store)
    flow = report.stats.review_flow
    assert flow is not None and "reviews" not in report.unavailable
    want = expected_flow(in_week(fake, WEEK))
    assert want["first_review_hours_median"] == pytest.approx(5.0)  # 5, 6 (from ready, not 22), 1
    for name, value in want.items():
        assert getattr(flow, name) == pytest.approx(value, abs=0.01), name
    rows = {row.number: row for row in flow.prs}
    assert rows[2].first_review_hours == pytest.approx(6.0)  # marked ready at 22 h, reviewed at 28 h
    assert rows[5].approval_to_merge_hours == pytest.approx(43.0)
    # Approved by its author alone, or by a bot alone: merged without review.
    assert not rows[3].reviewed and not rows[4].reviewed and flow.merged_without_review == 2
    assert rows[3].first_review_hours is None and rows[4].approval_to_merge_hours is None
    # Reviews of any state, the authors' own and the bots' left out.
    assert flow.reviews_by_reviewer == {"bob": 4, "carol": 1}
    assert flow.first_review_hours_p90 == pytest.approx(6.0)


def test_the_unreviewed_core_change_is_a_risk_and_bots_do_not_review(fake: FakeGitHub, store: Store) -> None:
    report = report_of(fake, store)
    by_number = {p.number: p for p in report.prs}
    assert "unreviewed_core_change" in by_number[3].risks
    assert all("unreviewed_core_change" not in by_number[n].risks for n in (1, 2, 4, 5))
    observation = next(o for o in report.risk_observations if o.label == "unreviewed_core_change")
    assert observation.prs == [3] and "core/engine.py" in observation.evidence
    assert "[reviews]" in observation.evidence  # where the evidence came from


def test_the_trend_compares_the_flow_with_the_four_earlier_weeks(fake: FakeGitHub, store: Store) -> None:
    report = report_of(fake, store)
    weeks = [Window.model_validate({"since": WEEK.since - timedelta(days=7 * back),
                                    "until": WEEK.until - timedelta(days=7 * back), "tz": WEEK.tz})
             for back in range(4, 0, -1)]  # fmt: skip
    earlier = [expected_flow(in_week(fake, week)) for week in weeks]
    assert [e["first_review_hours_median"] for e in earlier] == [17.0, 13.0, 9.0, 5.0]  # oldest first
    trend = report.stats.trend
    for name in ("first_review_hours_median", "approval_to_merge_hours_median", "merged_without_review"):
        previous = [float(e[name] or 0) for e in earlier]
        assert trend[name].previous == pytest.approx(previous), name
        mean = fmean(previous)
        now = getattr(report.stats.review_flow, name)
        assert trend[name].change == (pytest.approx((now - mean) / mean, abs=0.001) if mean else None), name
    assert trend["merged_without_review"].change is None  # no earlier week merged one: no ratio
    assert len(trend["merged_prs"].previous) == 4


def concentrated(repo: FakeRepo) -> None:
    """Twelve PRs reviewed by others in a week, bob giving 9 of the 13 reviews."""
    for k in range(12):
        opened = at(8, 4 * k)
        who = "bob" if k < 9 else ("carol", "dan", "erin")[k - 9]
        reviews = [review(who, "APPROVED", opened + timedelta(hours=2))]
        reviews += [review("carol", "COMMENTED", opened + timedelta(hours=1))] if k == 0 else []
        repo.add(200 + k, author="alice", created_at=opened, merged_at=opened + timedelta(hours=3),
                 files=[DOCS], reviews=reviews)  # fmt: skip


def test_one_reviewer_carrying_the_reviews_is_a_risk_muted_and_dismissed_like_any(store: Store) -> None:
    with FakeGitHub() as server:
        concentrated(server.add_repo(FakeRepo(REPO)))
        report = report_of(server, store)
        observation = next(o for o in report.risk_observations if o.label == "review_concentration")
        assert observation.prs and set(observation.prs) == set(range(200, 209))  # bob's PRs
        assert "bob gave 9 of the week's 13 reviews (69%" in observation.evidence
        save_dismissal(
            store, Dismissal(repo=REPO, number=200, label="review_concentration", by="admin", at=NOW)
        )
        dismissed = report_of(server, store)
        kept = next(o for o in dismissed.risk_observations if o.label == "review_concentration")
        assert 200 not in kept.prs and [d.number for d in dismissed.dismissed] == [200]
        muted = Subscription(platform="slack", chat_id="C1", repo=REPO, muted=["review_concentration"])
        quiet = report_of(server, store, subscription=muted)
        assert all(o.label != "review_concentration" for o in quiet.risk_observations)
        assert "review_concentration" not in quiet.stats.risks


def test_a_clone_knows_no_review_flow_and_no_flow_risk(tmp_path: Path, store: Store) -> None:
    clone = new_repo(tmp_path / "clone")
    (clone / "core").mkdir()
    for k in range(12):
        (clone / "core" / f"m{k}.py").write_text(f"x = {k}\n")
        commit(clone, f"Change the engine {k} (#{k + 1})", f"2026-09-08T{10 + k}:00:00+08:00")
    report = make_report(Settings(), store, GitSource(clone, repo=REPO), WEEK, lang="en", save=False, now=NOW)
    assert report.stats.merged_prs == 12 and "reviews" in report.unavailable
    assert report.stats.review_flow is None
    assert not {"unreviewed_core_change", "review_concentration"} & set(report.stats.risks)
    assert all(
        name not in report.stats.trend for name in ("merged_without_review", "first_review_hours_median")
    )
