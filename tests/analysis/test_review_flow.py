"""The review flow from a fixture file (`prdigest report --fixture FILE`): figures recomputed here from
the file's own `created_at` and `reviews[].submitted_at`, week over week; and the rules of the flow on
PR models: authors and bots review nothing, the percentile, concentration, unknown reviews."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import fmean, median
from typing import Any

import pytest

from prdigest.analysis.review_flow import concentration, percentile, pr_flow, review_flow, week_risks
from prdigest.analysis.team import combined_stats
from prdigest.models import PRAnalysis, PullRequest, Review, Stats

pytestmark = pytest.mark.timeout(120)

REPO = "acme/rocket"
MONDAY = datetime(2026, 9, 7, tzinfo=UTC)  # 2026-W37 (the days are counted in UTC below)
BOT = "ci-reviewer[bot]"


def iso(moment: datetime) -> str:
    return moment.isoformat()


def fixture_pr(number: int, opened: datetime, merged: datetime, author: str, reviews: list[tuple]) -> dict:
    return {
        "number": number,
        "title": f"docs: page {number}",
        "author": author,
        "created_at": iso(opened),
        "merged_at": iso(merged),
        "files": [{"path": f"docs/p{number}.md", "additions": 3, "deletions": 0}],
        "reviews": [
            {"author": who, "state": state, "submitted_at": iso(when), "is_bot": who.endswith("[bot]")}
            for who, state, when in reviews
        ],
    }


def week_prs(week_start: datetime, back: int, first_number: int) -> list[dict[str, Any]]:
    """Four PRs of a week: reviews come later the further back the week is; one approved by its author
    alone and one reviewed by a bot alone in the report's own week (back 0)."""
    out = []
    for k in range(4):
        opened = week_start + timedelta(days=k, hours=1)
        first = opened + timedelta(hours=2 + 3 * back + k)
        approved = first + timedelta(hours=1)
        merged = approved + timedelta(hours=1 + k)
        reviews = [("bob", "COMMENTED", first), ("carol", "APPROVED", approved)]
        author = "alice"
        if back == 0 and k == 2:
            reviews = [("alice", "APPROVED", approved)]  # its author's approval alone
        if back == 0 and k == 3:
            author, reviews = "dave", [(BOT, "APPROVED", approved)]  # a bot's alone
        out.append(fixture_pr(first_number + k, opened, merged, author, reviews))
    return out


@pytest.fixture
def fixture_file(tmp_path: Path) -> Path:
    prs = [
        pr for back in range(5) for pr in week_prs(MONDAY - timedelta(days=7 * back), back, 100 * back + 1)
    ]
    path = tmp_path / "week.json"
    path.write_text(json.dumps({"repo": REPO, "prs": prs}), encoding="utf-8")
    return path


def recomputed(prs: list[dict[str, Any]]) -> dict[str, float | None]:
    """The medians and count of a week, from the file's own timestamps."""
    first, approval, total, unreviewed = [], [], [], 0
    for pr in prs:
        opened, merged = datetime.fromisoformat(pr["created_at"]), datetime.fromisoformat(pr["merged_at"])
        total.append((merged - opened).total_seconds() / 3600)
        others = [r for r in pr["reviews"] if r["author"] != pr["author"] and not r["is_bot"]]
        if not others:
            unreviewed += 1
            continue
        times = sorted(datetime.fromisoformat(r["submitted_at"]) for r in others)
        first.append((times[0] - opened).total_seconds() / 3600)
        approvals = sorted(
            datetime.fromisoformat(r["submitted_at"]) for r in others if r["state"] == "APPROVED"
        )
        approval += [(merged - approvals[0]).total_seconds() / 3600] if approvals else []
    return {
        "first_review_hours_median": median(first) if first else None,
        "approval_to_merge_hours_median": median(approval) if approval else None,
        "open_to_merge_hours_median": median(total),
        "merged_without_review": unreviewed,
    }


def test_a_fixture_reports_the_flow_its_timestamps_give(fixture_file: Path, run_cli: Any) -> None:
    result = run_cli(
        "report", "--fixture", str(fixture_file), "--week", "2026-W37", "--tz", "UTC", "--lang", "en",
        "--format", "json", "--db", str(fixture_file.with_suffix(".db")), timeout=90,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    flow, trend = report["stats"]["review_flow"], report["stats"]["trend"]
    weeks = [week_prs(MONDAY - timedelta(days=7 * back), back, 100 * back + 1) for back in range(5)]
    want = recomputed(weeks[0])
    for name, value in want.items():
        assert flow[name] == pytest.approx(value, abs=0.01), name
    assert flow["merged_without_review"] == 2  # the author's own approval, the bot's
    assert flow["reviews_by_reviewer"] == {"bob": 2, "carol": 2}  # no author, no bot
    assert [row["reviewed"] for row in flow["prs"]] == [True, True, False, False]
    earlier = [recomputed(prs) for prs in reversed(weeks[1:])]  # oldest first
    for name in ("first_review_hours_median", "approval_to_merge_hours_median", "open_to_merge_hours_median"):
        previous = [e[name] for e in earlier]
        assert trend[name]["previous"] == pytest.approx(previous, abs=0.01), name
        assert trend[name]["change"] == pytest.approx(
            (want[name] - fmean(previous)) / fmean(previous), abs=0.002
        )
    assert trend["first_review_hours_median"]["previous"] == pytest.approx([15.5, 12.5, 9.5, 6.5])
    assert trend["merged_without_review"] == {"previous": [0.0, 0.0, 0.0, 0.0], "change": None}
    assert "reviews" not in report["unavailable"]


NOW = datetime(2026, 9, 8, 12, tzinfo=UTC)


def pr(number: int, reviews: list[Review] | None, author: str = "ann", **kw: Any) -> PullRequest:
    kw.setdefault("created_at", NOW - timedelta(hours=10))
    return PullRequest(
        repo=REPO, number=number, title="x", author=author, merged_at=NOW, reviews=reviews, **kw
    )


def test_unknown_reviews_give_no_flow_and_no_risk() -> None:
    assert pr_flow(pr(1, None)) is None
    flow = review_flow([pr(1, None), pr(2, None)])
    assert flow.prs == [] and concentration(flow) is None
    analyses = {1: PRAnalysis(repo=REPO, number=1, summary="x", importance=1, insight=1)}
    assert week_risks([pr(1, None)], analyses, "en") is analyses


def test_pending_own_and_bot_reviews_are_no_review() -> None:
    at = NOW - timedelta(hours=4)
    reviews = [
        Review(author="ann", state="APPROVED", submitted_at=at),
        Review(author="bob", state="PENDING", submitted_at=at),
        Review(author="helper", state="COMMENTED", submitted_at=at, is_bot=True),
    ]
    row = pr_flow(pr(1, reviews))
    assert row is not None and not row.reviewed and row.first_review_hours is None
    assert row.open_to_merge_hours == 10.0
    flow = review_flow([pr(1, reviews)])
    assert flow.merged_without_review == 1 and flow.reviews_by_reviewer == {}


def test_a_draft_waits_from_ready_and_a_review_before_it_waits_nothing() -> None:
    ready = NOW - timedelta(hours=5)
    early = [Review(author="bob", state="COMMENTED", submitted_at=ready - timedelta(hours=1))]
    row = pr_flow(pr(1, early, ready_at=ready))
    assert row is not None and row.first_review_hours == 0.0 and row.open_to_merge_hours == 10.0


def test_percentile_is_the_nearest_rank() -> None:
    assert percentile([1.0], 0.9) == 1.0
    assert percentile([float(v) for v in range(1, 11)], 0.9) == 9.0
    assert percentile([float(v) for v in range(1, 12)], 0.9) == 10.0


def test_concentration_needs_ten_reviewed_prs_and_more_than_half() -> None:
    def week(reviewed: int, bobs: int) -> list[PullRequest]:
        return [
            pr(k + 1, [Review(author="bob" if k < bobs else f"r{k}", state="APPROVED", submitted_at=NOW)])
            for k in range(reviewed)
        ]

    assert concentration(review_flow(week(9, 9))) is None  # too few reviewed PRs
    assert concentration(review_flow(week(10, 5))) is None  # half is not more than half
    assert concentration(review_flow(week(10, 6))) == ("bob", 6, 10)


def test_a_team_recomputes_its_medians_and_knows_none_with_a_clone() -> None:
    one = review_flow(
        [pr(1, [Review(author="bob", state="APPROVED", submitted_at=NOW - timedelta(hours=8))])]
    )
    two = review_flow(
        [pr(2, [Review(author="bob", state="APPROVED", submitted_at=NOW - timedelta(hours=6))])]
    )
    team = combined_stats([Stats(review_flow=one), Stats(review_flow=two)]).review_flow
    assert (
        team is not None and team.first_review_hours_median == 3.0 and team.reviews_by_reviewer == {"bob": 2}
    )
    assert combined_stats([Stats(review_flow=one), Stats()]).review_flow is None


def test_markdown_of_the_fixture_says_the_flow(fixture_file: Path, run_cli: Any) -> None:
    result = run_cli(
        "report", "--fixture", str(fixture_file), "--week", "2026-W37", "--tz", "UTC", "--lang", "en",
        "--db", str(fixture_file.with_suffix(".db")), timeout=90,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Review flow" in result.stdout and "merged without review: 2" in result.stdout
