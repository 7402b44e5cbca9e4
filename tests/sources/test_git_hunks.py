"""One walk reads a clone: its `-U1` patch gives `--numstat`'s line counts and, read as `-U0`, the same
excerpt and option hunks as git's own `-U0` patch. Checked against git itself on commits made to hit each
case: runs of changes one or two lines apart (one `-U1` hunk, several `-U0` ones), a function line among
the context or the removed lines, a function line cut at git's 80 bytes inside a character, a last line
without a newline, binary files, renames with and without changes, a mode change, a file become a link,
empty files. A clone whose attributes name a diff driver is read with two walks, as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import commit, git, new_repo

from prdigest.models import Window
from prdigest.sources.diffs import excerpt, file_sections
from prdigest.sources.git.hunks import narrowed
from prdigest.sources.git.source import GitSource
from prdigest.sources.options.patch import defining_files

SHOWN = ("+", "-", "@", "\\")  # a -U0 patch's lines past its files' headers
ALL = Window(since="2026-01-01", until="2026-12-31", tz="UTC")
LONG_DEF = "def configure_the_trainer_with_every_option(tokenizer, model, 数据集, 学习率=1e-3, 批量大小=8):\n"


def _module(body: list[str]) -> str:
    return "".join(body)


def _python(n: int) -> list[str]:
    """A module of top-level functions and a class, ``n`` lines each, with flags among them."""
    lines = ["import argparse\n", "\n"]
    for f in range(4):
        lines.append(f"def step_{f}(args):\n")
        lines += [f"    value_{f}_{i} = args.x + {i}\n" for i in range(n)]
        lines.append("\n")
    lines.append("class Config:\n")
    lines += [f"    field_{i}: int = {i}\n" for i in range(n)]
    lines.append(LONG_DEF)
    lines += [f'    parser.add_argument("--opt-{i}", default={i})\n' for i in range(n)]
    return lines


def _history(repo: Path) -> None:
    day = iter(range(1, 28))

    def at() -> str:
        return f"2026-03-{next(day):02d}T10:00:00+00:00"

    base = _python(6)
    (repo / "train.py").write_text(_module(base))
    (repo / "notes.txt").write_text("".join(f"note {i}\n" for i in range(30)) + "last line, no newline")
    (repo / "logo.png").write_bytes(b"\x89PNG\0\0" + bytes(range(256)) * 4)
    (repo / "empty.cfg").write_text("")
    commit(repo, "init", at())

    runs = list(base)
    runs[3] = "    value_0_0 = args.y + 0\n"  # two changes one line apart: one -U1 hunk, two -U0 ones
    runs[5] = "    value_0_2 = args.y + 2\n"
    runs[10] = "def step_1(args, extra=None):\n"  # a function line removed inside a run
    runs[12] = "    value_1_1 = args.z + 1\n"  # two lines after: inside the same -U1 hunk
    first_flag = base.index(LONG_DEF) + 1  # its function line is the context before it, cut by prdigest
    runs[first_flag] = runs[first_flag].replace("default=0", "default=-1")
    runs.insert(len(runs) - 3, '    parser.add_argument("--opt-new", default=7)\n')  # under the long def
    runs[-1] = runs[-1].replace("default=5", "default=50")
    (repo / "train.py").write_text(_module(runs))
    notes = "".join(f"note {i}\n" for i in range(30))
    (repo / "notes.txt").write_text(notes.replace("note 29\n", "note twenty-nine\n") + "last, changed")
    commit(repo, "runs of changes (#1)", at())

    git(repo, "mv", "logo.png", "brand.png")
    git(repo, "mv", "notes.txt", "notes.md")
    commit(repo, "renames, nothing changed (#2)", at())

    (repo / "brand.png").write_bytes(b"\x89PNG\0\1" + bytes(range(256)) * 4)
    notes = (repo / "notes.md").read_text()
    (repo / "notes.md").write_text(
        notes.replace("twenty-nine", "29 again")
    )  # before the last line, unchanged
    (repo / "tool.sh").write_text("echo hi\n")
    (repo / "tool.sh").chmod(0o755)
    commit(repo, "a binary changed, a script added (#3)", at())

    (repo / "tool.sh").chmod(0o644)
    (repo / "empty.cfg").unlink()
    (repo / "new.cfg").write_text("")
    commit(repo, "a mode change, an empty file removed and one added (#4)", at())

    (repo / "notes.md").unlink()
    (repo / "notes.md").symlink_to("train.py")
    moved = (repo / "train.py").read_text().replace("def step_2(args):", "def step_two(args):")
    (repo / "train.py").write_text(moved + "\n\ndef tail():\n    return None\n")
    commit(repo, "a file become a link (#5)", at())


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = new_repo(tmp_path_factory.mktemp("hunks") / "app")
    _history(repo)
    return repo


def _log(repo: Path, *args: str) -> list[str]:
    out = git(repo, "log", "--first-parent", "--diff-merges=first-parent", "--format=%x1e%H", *args)
    return [record for record in out.split("\x1e") if record.strip()]


def test_the_u1_patch_read_as_u0_gives_gits_own_excerpts_and_option_hunks(clone: Path) -> None:
    u0 = {r.partition("\n")[0]: r.partition("\n")[2] for r in _log(clone, "-p", "-U0", "-M", "--no-color")}
    u1 = {r.partition("\n")[0]: r.partition("\n")[2] for r in _log(clone, "-p", "-U1", "-M", "--no-color")}
    assert len(u0) == len(u1) == 6
    runs_of_changes = 0
    for sha, patch in u1.items():
        sections = file_sections(patch)
        narrow = "\n".join(narrowed(section) for section in sections)
        assert excerpt(narrow) == excerpt(u0[sha])
        assert defining_files(narrow) == defining_files(u0[sha])
        assert [line for line in narrow.splitlines() if line[:1] in SHOWN] == [
            line for line in u0[sha].splitlines() if line[:1] in SHOWN
        ]
        runs_of_changes += u0[sha].count("\n@@ ") - patch.count("\n@@ ")
    assert runs_of_changes >= 3  # -U1 hunks that held several -U0 ones
    cut = [line for patch in u0.values() for line in patch.splitlines() if line.startswith("@@ -")]
    assert sum(line.endswith("数据集, 学习") for line in cut) == 4  # git's 80 bytes end inside 率: dropped


def test_one_walk_reads_the_clone_as_two_walks_did(clone: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[list[str]] = []
    popen = subprocess.Popen

    def recording(cmd, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "--diff-merges=first-parent" in cmd:
            walks.append([str(a) for a in cmd])
        return popen(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    one = GitSource(clone, repo="acme/app")
    read = one.fetch(ALL)
    assert len(walks) == 1 and "-U1" in walks[0]
    two = GitSource(clone, repo="acme/app")
    two._walks.__dict__["_drivers"] = True  # as for a clone whose attributes name a diff driver
    assert two.fetch(ALL) == read
    assert len(walks) == 3 and "--numstat" in walks[1] and "-U0" in walks[2]

    files = {
        pr.number: {f.path: (f.status, f.additions, f.deletions, f.previous_path) for f in pr.files}
        for pr in read
    }
    assert files[2] == {
        "brand.png": ("renamed", None, None, "logo.png"),  # a binary: "-" as --numstat says
        "notes.md": ("renamed", 0, 0, "notes.txt"),
    }
    assert files[3]["brand.png"] == ("modified", None, None, None)
    assert files[4] == {"new.cfg": ("renamed", 0, 0, "empty.cfg"), "tool.sh": ("modified", 0, 0, None)}
    assert files[5]["notes.md"] == ("modified", 1, 31, None)  # a link now: its two sections, one count
    options = {pr.number: pr.options for pr in read}
    assert options[1] is not None and "flag:--opt-new" in options[1].added


def test_a_clone_whose_attributes_name_a_diff_driver_is_read_with_two_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = new_repo(tmp_path / "app")
    _history(repo)
    (repo / ".gitattributes").write_text("*.py diff=python\n")
    commit(repo, "name the python driver (#6)", "2026-04-01T10:00:00+00:00")
    source = GitSource(repo, repo="acme/app")
    assert source._walks._drivers
    body = _python(6)
    body[20] = "    value_2_1 = args.q\n"
    (repo / "train.py").write_text(_module(body))
    commit(repo, "change a method's line (#7)", "2026-04-02T10:00:00+00:00")
    (pr,) = [pr for pr in source.fetch(ALL) if pr.number == 7]
    u0 = _log(repo, "-1", "-p", "-U0", "--no-color")[0].partition("\n")[2]
    assert pr.diff_excerpt == excerpt(u0)
    plain = new_repo(tmp_path / "plain")
    (plain / ".gitattributes").write_text("*.png binary\n*.txt diff\n*.bin -diff\n")
    commit(plain, "init", "2026-04-01T10:00:00+00:00")
    assert not GitSource(plain, repo="acme/plain")._walks._drivers
