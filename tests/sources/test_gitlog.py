"""The git source on a small repository that holds every shape of history it must read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import commit, git, new_repo

from prdigest.config import check_settings, load_settings
from prdigest.errors import SourceError
from prdigest.models import Window
from prdigest.sources.diffs import DIFF_LINES_PER_PR
from prdigest.sources.git import source as gitlog
from prdigest.sources.git.people import identity
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import open_source

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = new_repo(tmp_path / "clone")
    (path / "core.py").write_text("a = 1\nb = 2\n")
    (path / "old_name.py").write_text("x = 1\n" * 20)
    commit(path, "initial", "2026-09-01T10:00:00+08:00")
    # Sunday 23:59 UTC+8: before the window.
    (path / "core.py").write_text("a = 1\nb = 3\n")
    commit(path, "fix: before the window (#10)", "2026-09-06T23:59:00+08:00")
    # Monday 07:30 in Asia/Shanghai is still Sunday in UTC: inside the window.
    (path / "core.py").write_text("a = 1\nb = 4\nc = 5\n")
    commit(
        path,
        "feat(core): add c (#11)\n\nFollow-up to #10.\n\nCo-authored-by: Pair Person <pair@example.com>",
        "2026-09-06T23:30:00+00:00",
        name="Alice",
        email="123+alice-gh@users.noreply.github.com",
    )
    # A rename and a binary file.
    git(path, "mv", "old_name.py", "new_name.py")
    (path / "logo.png").write_bytes(bytes(range(256)) * 4)
    commit(
        path, "refactor: rename and add logo (#12)", "2026-09-08T10:00:00+08:00", name="Bob", email="b@x.org"
    )
    # A direct push: no PR number.
    (path / "README.md").write_text("hello\n")
    commit(path, "docs: readme typo", "2026-09-09T10:00:00+08:00", name="Carol", email="c@x.org")
    # A merge commit from a branch, authored on the branch by Dave.
    git(path, "checkout", "-q", "-b", "feature")
    (path / "big.py").write_text("".join(f"line {i}\n" for i in range(DIFF_LINES_PER_PR + 50)))
    commit(path, "add big module", "2026-09-10T09:00:00+08:00", name="Dave", email="dave@x.org")
    git(path, "checkout", "-q", "main")
    git(
        path,
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #13 from dave/feature\n\nAdd the big module",
        date="2026-09-10T12:00:00+08:00",
        name="Maintainer",
        email="m@x.org",
    )
    # The Monday after the window.
    (path / "core.py").write_text("a = 2\n")
    commit(path, "fix: after (#14)", "2026-09-14T00:00:00+08:00")
    return path


def by_number(prs):
    return {p.number: p for p in prs}


def test_reads_squash_merges_merge_commits_and_direct_pushes(repo: Path) -> None:
    prs = GitSource(repo).fetch(WEEK)
    assert [p.number for p in prs] == [11, 12, None, 13]
    push = prs[2]
    assert push.is_direct_push and push.title == "docs: readme typo" and push.author == "Carol"
    merge = by_number(prs)[13]
    assert merge.title == "Add the big module"
    assert merge.author == "Dave"  # the branch's author, not the merger
    assert merge.merged_by == "Maintainer"
    assert merge.files is not None and [f.path for f in merge.files] == ["big.py"]


def test_window_is_whole_days_in_the_timezone(repo: Path) -> None:
    prs = by_number(GitSource(repo).fetch(WEEK))
    assert 10 not in prs and 14 not in prs
    assert 11 in prs  # merged Monday 07:30 +08:00, which is Sunday in UTC
    utc_week = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
    assert 11 not in by_number(GitSource(repo).fetch(utc_week))


def test_title_author_co_authors_and_references(repo: Path) -> None:
    pr = by_number(GitSource(repo).fetch(WEEK))[11]
    assert pr.title == "feat(core): add c"
    assert pr.author == "alice-gh"  # login from the noreply address
    assert pr.co_authors == ["Pair Person <pair@example.com>"]
    assert pr.related == [10]
    assert (pr.additions, pr.deletions) == (2, 1)


def test_unknown_signals_are_none_not_empty(repo: Path) -> None:
    pr = by_number(GitSource(repo).fetch(WEEK))[11]
    for signal in ("labels", "reviews", "review_threads", "comments", "checks", "is_fork", "created_at"):
        assert getattr(pr, signal) is None, signal
    assert pr.merged_by is None  # a squash merge does not say who merged it


def test_renames_and_binary_files(repo: Path) -> None:
    pr = by_number(GitSource(repo).fetch(WEEK))[12]
    files = {f.path: f for f in pr.files or []}
    assert files["new_name.py"].status == "renamed"
    assert files["new_name.py"].previous_path == "old_name.py"
    assert files["logo.png"].binary and files["logo.png"].additions is None
    assert files["logo.png"].status == "added"


def test_diff_excerpt_is_capped(repo: Path) -> None:
    prs = by_number(GitSource(repo).fetch(WEEK))
    big = prs[13].diff_excerpt or ""
    assert big.startswith("diff --git a/big.py b/big.py")
    assert sum(1 for line in big.splitlines() if line.startswith("+")) == DIFF_LINES_PER_PR
    assert big.endswith("(50 more changed lines)")
    small = prs[11].diff_excerpt or ""
    assert "-b = 3" in small and "+b = 4" in small and "+c = 5" in small


def test_repository_name_from_origin(repo: Path) -> None:
    assert GitSource(repo).repo == "local/clone"
    git(repo, "remote", "add", "origin", "git@github.com:acme-ml/trainer.git")
    source = GitSource(repo)
    assert source.repo == "acme-ml/trainer"
    assert by_number(source.fetch(WEEK))[11].url == "https://github.com/acme-ml/trainer/pull/11"
    assert GitSource(repo, repo="other/name").repo == "other/name"


def test_not_a_git_repository(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="is not a git repository"):
        GitSource(tmp_path)
    with pytest.raises(SourceError, match="is not a directory"):
        GitSource(tmp_path / "missing")


def test_empty_repository(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    with pytest.raises(SourceError, match="has no commits"):
        GitSource(tmp_path)


@pytest.mark.parametrize(
    ("name", "email", "expected"),
    [
        ("Shi Dong", "Shi-Dong@users.noreply.github.com", "Shi-Dong"),
        ("Tao Lin", "12345+nblintao@users.noreply.github.com", "nblintao"),
        ("Tao Lin", "tao.lin@radixark.ai", "Tao Lin"),
    ],
)
def test_identity(name: str, email: str, expected: str) -> None:
    assert identity(name, email) == expected


def test_a_mailmap_merges_one_persons_identities(tmp_path: Path) -> None:
    path = new_repo(tmp_path / "clone")
    noreply = "12345+nblintao@users.noreply.github.com"
    (path / ".mailmap").write_text(f"Tao Lin <{noreply}> <tao.lin@radixark.ai>\n")
    commit(path, "initial", "2026-09-01T10:00:00+08:00")
    for number, email in ((21, noreply), (22, "tao.lin@radixark.ai")):
        (path / f"f{number}.py").write_text("x = 1\n")
        commit(path, f"fix: one (#{number})", "2026-09-08T10:00:00+08:00", name="Tao Lin", email=email)
    prs = GitSource(path).fetch(WEEK)
    assert {p.number: p.author for p in prs} == {21: "nblintao", 22: "nblintao"}


def test_fetch_one_pr_by_number(repo: Path) -> None:
    source = GitSource(repo)
    squash = source.fetch_pr(10)  # outside any window: found in the whole history
    assert squash is not None and squash.title == "fix: before the window"
    merge = source.fetch_pr(13)
    assert merge is not None and merge.author == "Dave" and merge.diff_excerpt
    assert source.fetch_pr(1) is None  # "(#1)" is named by no commit


def test_a_record_separator_inside_a_file_is_content(tmp_path: Path) -> None:
    """git's records start with \\x1e: the same byte inside a changed line must not split a commit."""
    path = new_repo(tmp_path / "clone")
    (path / "weird.txt").write_text("plain\n")
    commit(path, "initial", "2026-09-01T10:00:00+08:00")
    (path / "weird.txt").write_text("plain\nhalf\x1ehalf\n\x1eat the start\n")
    commit(path, "feat: odd bytes (#21)", "2026-09-08T10:00:00+08:00")
    (path / "other.py").write_text("x = 1\n")
    commit(path, "feat: after (#22)", "2026-09-09T10:00:00+08:00")
    prs = by_number(GitSource(path).fetch(WEEK))
    assert sorted(prs) == [21, 22]
    assert (prs[21].additions, prs[21].deletions) == (2, 0)
    assert "+half" in (prs[21].diff_excerpt or "")
    assert [f.path for f in prs[22].files or []] == ["other.py"]


def test_small_batches_read_the_same_prs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window is read in batches (bounded memory): their size changes nothing in what is read."""
    whole = GitSource(repo).fetch(WEEK)
    monkeypatch.setattr(gitlog, "BATCH", 1)
    assert GitSource(repo).fetch(WEEK) == whole
    assert by_number(whole)[13].author == "Dave"  # a merge's branch author, resolved within its batch


def test_a_read_for_counts_gives_the_prs_of_a_full_read_without_excerpts_or_options(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One walk of the files and their counts: the same PRs, numbers, authors (a merge's branch author
    too), files (a rename, a binary) and line counts as `stream`, in its order; no excerpt, no options."""
    source = GitSource(repo)
    full = list(source.stream(WEEK))
    assert any(p.diff_excerpt for p in full) and all(p.options is not None for p in full)
    light = [p.model_copy(update={"diff_excerpt": None, "options": None}) for p in full]
    assert list(source.read_for_counts(WEEK)) == light
    monkeypatch.setattr(gitlog, "BATCH", 1)
    assert list(source.read_for_counts(WEEK)) == light
    assert [p.number for p in light] == [13, None, 12, 11]


@pytest.mark.timeout(20)
def test_a_reader_that_stops_early_ends_git_and_its_pump(repo: Path) -> None:
    before = set(threading.enumerate())  # other tests' threads may end meanwhile: count only new ones
    for _ in range(3):
        stream = GitSource(repo).stream(WEEK)
        assert next(stream).number is not None
        stream.close()  # mid-way: git is killed, its pump ends
    assert GitSource(repo).fetch_pr(14) is not None  # the history's last record: the pump already ended
    assert set(threading.enumerate()) - before == set()


def test_configured_people_are_named_by_their_login(tmp_path: Path) -> None:
    path = new_repo(tmp_path / "clone")
    commit(path, "initial", "2026-09-01T10:00:00+08:00")
    for number, email in ((21, "Jane.Doe@acme.example"), (22, "jane@home.example"), (23, "sam@acme.example")):
        (path / f"f{number}.py").write_text("x = 1\n")
        commit(path, f"fix: one (#{number})", "2026-09-08T10:00:00+08:00", name="Someone", email=email)
    config = tmp_path / "prdigest.toml"
    config.write_text('[[people]]\ngithub = "jdoe"\nemail = ["jane.doe@acme.example", "jane@home.example"]\n')
    source = open_source(load_settings(config, env={}), path, None, None)
    assert isinstance(source, GitSource)
    assert {p.number: p.author for p in source.fetch(WEEK)} == {21: "jdoe", 22: "jdoe", 23: "Someone"}


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            'github = "not a login"\nemail = "a@b.example"',
            "people.0 (github 'not a login'): skipped: github: 'not a login' is not a GitHub login",
        ),
        (
            'github = "jdoe"\nemail = "nobody"',
            "people.0 (github 'jdoe'): skipped: email: 'nobody' is not an email address",
        ),
        ('github = "jdoe"', "people.0 (github 'jdoe'): skipped: names no email, slack or lark id"),
    ],
)
def test_a_malformed_person_is_one_line_naming_it_and_the_rest_loads(
    tmp_path: Path, entry: str, said: str
) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(f"[[people]]\n{entry}\n")
    settings = load_settings(config, env={})
    assert settings.people == [] and check_settings(settings) == [said]
