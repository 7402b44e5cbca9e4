"""Themes that continue: a theme of the week names the earlier PRs tied to it (a reference either way, or
its feature named in its files or subsystem), each earlier PR under one theme at most; shared code alone
ties nothing, and a new theme names none. On a git repository built here, and on PRs made here."""

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
    assert sorted(by_first[4].continues or []) == [1, 2]  # not #3, on other code and another subject
    assert by_first[6].continues is None


def pr(number: int, paths: list[str], day: int, title: str = "", body: str = "") -> PullRequest:
    return PullRequest(
        repo=REPO, number=number, title=title or f"change {number}", body=body, author="ann",
        merged_at=datetime(2026, 9, day, 10, tzinfo=UTC), files=[FileChange(path=p) for p in paths],
    )  # fmt: skip


def theme(*numbers: int, title: str = "t") -> Theme:
    return Theme(title=title, prs=list(numbers), story="")


def shard_week() -> list[PullRequest]:
    """Two PRs of the week on optimizer-state sharding, in pkg/shard."""
    return [
        pr(
            20,
            ["pkg/shard/state.py", "pkg/shard/plan.py"],
            8,
            "feat(shard): reshard optimizer state on resume",
        ),
        pr(21, ["pkg/shard/state.py"], 9, "perf(shard): overlap optimizer state gather"),
    ]


SHARDING = "optimizer state: a new capability lands"


def test_shared_files_and_folder_alone_tie_nothing() -> None:
    earlier = [
        pr(1, ["pkg/shard/state.py", "pkg/shard/plan.py"], 1, "fix(cli): exit code on bad flags"),
        pr(2, ["pkg/shard/io.py"], 2, "feat(audio): decode flac samples"),
    ]
    themes = [theme(20, 21, title=SHARDING)]
    continue_themes(themes, shard_week(), earlier)
    assert themes[0].continues is None


def test_a_reference_either_way_carries_on_without_shared_code_or_words() -> None:
    earlier = [
        pr(5, ["g/t/five.py"], 1, "fix(io): retry reads"),
        pr(6, ["h/s/six.py"], 2, "fix(net): close sockets", body="Fixes the leak #13 brings in."),
        pr(7, ["g/t/seven.py"], 3, "fix(io): retry writes"),
    ]
    week = [
        pr(
            12, ["q/r/twelve.py"], 9, "feat(cache): warm on start", body="Follow-up to #5: the same fix here."
        ),
        pr(13, ["q/r/thirteen.py"], 10, "feat(cache): evict by size"),
    ]
    themes = [theme(12, 13, title="cache: a new capability lands")]
    continue_themes(themes, week, earlier)
    assert themes[0].continues == [6, 5]  # #5 named by #12, #6 naming #13; not #7


def test_an_earlier_pr_naming_the_feature_in_its_code_carries_on() -> None:
    earlier = [
        pr(1, ["pkg/shard/state.py", "CHANGES.md"], 1, "feat(shard): split optimizer state across ranks"),
        pr(2, ["pkg/shard/io.py", "CHANGES.md"], 2, "fix: gather optimizer state on save"),  # the subsystem
        pr(3, ["pkg/cli/args.py", "CHANGES.md"], 3, "fix: optimizer state in the CLI summary"),  # other code
        pr(4, ["CHANGES.md"], 4, "docs: optimizer state sharding"),  # a file most PRs change, the week too
        pr(5, ["pkg/shard/plan.py"], 5, "fix: optimizer warmup steps"),  # a part of the name, not most of it
    ]
    week = [*shard_week(), pr(22, ["pkg/web/app.py", "CHANGES.md"], 10, "feat(web): dark mode")]
    week[0].files.append(FileChange(path="CHANGES.md"))
    themes = [theme(20, 21, title=SHARDING)]
    continue_themes(themes, week, earlier)
    assert themes[0].continues == [1, 2]  # #1 shares a file as well


def test_two_themes_never_share_a_predecessor() -> None:
    earlier = [
        # Both features named in both themes' code: an even tie, to the theme listed first.
        pr(1, ["pkg/shard/state.py", "pkg/shard/plan.py"], 1, "refactor: optimizer state and plan cache"),
        pr(2, ["pkg/shard/plan.py"], 2, "fix: plan cache lock"),
        # The first theme's feature named, the second's PR named: the reference ties better.
        pr(3, ["pkg/shard/state.py"], 3, "fix: optimizer state dtype", body="Fixes a case #23 leaves."),
    ]
    week = [
        pr(20, ["pkg/shard/state.py"], 8, "feat(shard): reshard optimizer state"),
        pr(21, ["pkg/shard/state.py"], 9, "perf(shard): overlap optimizer state gather"),
        pr(22, ["pkg/shard/plan.py"], 9, "feat(shard): plan cache"),
        pr(23, ["pkg/shard/plan.py"], 10, "fix(shard): plan cache eviction"),
    ]
    first, second = theme(20, 21, title=SHARDING), theme(22, 23, title="plan cache: a run of fixes")
    continue_themes([first, second], week, earlier)
    assert (first.continues, second.continues) == ([1], [3, 2])
    continue_themes([second, first], week, earlier)  # the order breaks only an even tie
    assert (first.continues, second.continues) == (None, [3, 2, 1])


def test_the_most_relevant_five_are_named_the_latest_first_among_equals() -> None:
    title = "fix(shard): gather optimizer state"
    earlier = [pr(n, ["s/k/a.py", "s/k/b.py"], n, title) for n in range(1, 8)] + [
        pr(8, ["s/k/c.py"], 7, title)
    ]
    week = [
        pr(20, ["s/k/a.py", "s/k/b.py"], 8, title),
        pr(21, ["s/k/a.py"], 9, "perf(shard): optimizer state"),
    ]
    themes = [theme(20, 21, title=SHARDING)]
    continue_themes(themes, week, earlier)
    assert themes[0].continues == [7, 6, 5, 4, 3]  # two shared files each, over #8's subsystem alone
