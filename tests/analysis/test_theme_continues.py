"""Themes that continue: a theme of the week names the earlier PRs it carries on from (their files,
its subsystem, the PRs it references); a new theme names none. On a git repository built here, and on
PRs made here."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from conftest import commit, new_repo

from prdigest.analysis.continuity import continue_themes
from prdigest.config import load_settings
from prdigest.models import FileChange, PullRequest, Theme, Window
from prdigest.pipeline.single import make_report
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

REPO = "acme/app"
WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")  # 2026-W37
NOW = datetime(2026, 9, 14, 9, tzinfo=UTC)


def write(repo: Path, path: str, lines: int, seed: int) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"def f{seed}_{i}(x):\n    return x * {i}\n" for i in range(lines)))


def build_clone(path: Path) -> Path:
    """W36: the sharding work (#1, #2 on two files of pkg/shard) and an unrelated fix (#3). W37: the
    sharding work goes on (#4, #5 on the same files) and a new streaming subsystem starts (#6, #7)."""
    repo = new_repo(path)
    shard = ["pkg/shard/state.py", "pkg/shard/plan.py"]
    stream = ["pkg/stream/server.py", "pkg/stream/queue.py"]
    prs = [
        (1, "2026-08-31", "feat(shard): split optimizer state across ranks", shard),
        (2, "2026-09-02", "fix(shard): gather optimizer state on save", shard),
        (3, "2026-09-03", "fix(cli): exit code on bad flags", ["pkg/cli/args.py"]),
        (4, "2026-09-08", "feat(shard): reshard optimizer state on resume", shard),
        (5, "2026-09-09", "perf(shard): overlap optimizer state gather", shard),
        (6, "2026-09-10", "feat(stream): token streaming server", stream),
        (7, "2026-09-11", "feat(stream): streaming server backpressure", stream),
    ]
    for number, day, title, paths in prs:
        for k, p in enumerate(paths):
            write(repo, p, 40 + number, number * 10 + k)
        commit(repo, f"{title} (#{number})", f"{day}T10:00:00+00:00")
    return repo


def test_a_theme_carried_on_from_last_week_names_its_earlier_prs_a_new_one_none(tmp_path: Path) -> None:
    clone = build_clone(tmp_path / "app")
    settings = load_settings(env={})
    settings = settings.model_copy(update={"report": settings.report.model_copy(update={"timezone": "UTC"})})
    store = Store(tmp_path / "c.db")  # empty: the earlier weeks are read from the clone
    report = make_report(
        settings, store, GitSource(clone, repo=REPO), WEEK, lang="en", save=False, use_llm=False, now=NOW
    )
    by_first = {min(th.prs): th for th in report.themes}

    assert sorted(by_first[4].prs) == [4, 5] and sorted(by_first[6].prs) == [6, 7]
    assert sorted(by_first[4].continues or []) == [1, 2]  # not #3, which changed other code
    assert by_first[6].continues is None


def pr(number: int, paths: list[str], day: int, body: str = "") -> PullRequest:
    return PullRequest(
        repo=REPO, number=number, title=f"change {number}", body=body, author="ann",
        merged_at=datetime(2026, 9, day, 10, tzinfo=UTC), files=[FileChange(path=p) for p in paths],
    )  # fmt: skip


def theme(*numbers: int) -> Theme:
    return Theme(title="t", prs=list(numbers), story="")


def test_a_reference_carries_on_and_what_most_earlier_prs_touch_does_not() -> None:
    earlier = [
        pr(1, ["CHANGES.md", "a/x/one.py"], 1),
        pr(2, ["CHANGES.md", "b/y/two.py"], 2),
        pr(3, ["CHANGES.md", "c/z/three.py"], 3),
        pr(4, ["CHANGES.md", "README.md", "d/w/four.py"], 4),
        pr(5, ["e/v/five.py"], 4),
    ]
    week = [
        pr(10, ["CHANGES.md", "README.md", "f/u/ten.py"], 8),  # shares only files most earlier PRs touch
        pr(11, ["CHANGES.md", "f/u/eleven.py"], 9),
        pr(12, ["g/t/twelve.py"], 9, body="Follow-up to #5: the same fix for g."),
        pr(13, ["CHANGES.md", "g/t/thirteen.py"], 10),
        pr(14, ["d/w/four.py", "d/w/more.py"], 10),  # the subsystem of #4
        pr(15, ["d/w/other.py"], 11),
    ]
    themes = [theme(10, 11), theme(12, 13), theme(14, 15)]
    continue_themes(themes, week, earlier)
    assert [th.continues for th in themes] == [None, [5], [4]]


def test_the_most_relevant_five_are_named_the_latest_first_among_equals() -> None:
    earlier = [pr(n, ["s/k/a.py", "s/k/b.py"], n) for n in range(1, 8)] + [pr(8, ["s/k/c.py"], 7)]
    themes = [theme(20, 21)]
    continue_themes(themes, [pr(20, ["s/k/a.py", "s/k/b.py"], 8), pr(21, ["s/k/a.py"], 9)], earlier)
    assert themes[0].continues == [7, 6, 5, 4, 3]  # two shared files each, over #8's subsystem alone
