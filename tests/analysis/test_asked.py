"""What a question names of a period's PRs: people (login, name parts, a co-author's email local part; case
and accents aside), risks, paths and a ranking."""

from __future__ import annotations

from datetime import UTC, datetime

from prdigest.analysis.asked import read_asked, select
from prdigest.models import FileChange, PullRequest

MERGED = datetime(2026, 9, 8, tzinfo=UTC)


def pr(number: int, author: str, *paths: str, co: list[str] | None = None) -> PullRequest:
    files = [FileChange(path=p, additions=1, deletions=0) for p in paths]
    return PullRequest(repo="acme/app", number=number, title=f"change {number}", author=author,
                       merged_at=MERGED, files=files, co_authors=co)  # fmt: skip


PRS = [
    pr(1, "José Núñez", "app/scheduler.py"),
    pr(2, "octocat", "app/engine/run.py", co=["Jiajun Li <jiajun.li@example.com>"]),
    pr(3, "octocat", "docs/index.md"),
]


def test_people_by_name_part_login_and_email_local_part() -> None:
    assert read_asked("what did jose nunez do?", PRS).people == {"José Núñez"}
    assert select(read_asked("PRs by Octocat", PRS), PRS, []) == [2, 3]
    assert select(read_asked("what did jiajun.li work on?", PRS), PRS, []) == [2]  # a co-author's email


def test_paths_and_subsystems() -> None:
    assert select(read_asked("which PRs touched the scheduler?", PRS), PRS, []) == [1]
    assert select(read_asked("changes under app/engine", PRS), PRS, []) == [2]
    assert not read_asked("what happened to the weather?", PRS).named


def test_risks_and_rankings_are_read() -> None:
    asked = read_asked("which PRs removed tests, the riskiest first?", PRS)
    assert asked.labels == {"tests_removed"} and asked.rank == "risk"
    assert read_asked("上周最重要的改动", PRS).rank == "importance"
