"""A clone's file texts for the options a PR changed: read by the blob ids the walk gives, each blob once
however many commits share it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import commit, git, new_repo

from prdigest.models import Window
from prdigest.sources.git.blobs import Blobs
from prdigest.sources.git.source import GitSource

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
# Long enough that git reads a renamed copy with one line changed as a rename.
FLAGS = "import argparse\np = argparse.ArgumentParser()\n" + 'p.add_argument("--lr", default={lr})\n{more}'
FLAGS += "".join(f"p.add_argument('--opt{n}', default={n})\n" for n in range(20))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What `git cat-file` answered: the blob id of each text asked for by id, the name of each asked for
    by name."""
    answered: list[str] = []
    asked_by_name = Blobs._read
    keep = Blobs._keep

    def by_name(self: Blobs, spec: str) -> tuple[str, str] | None:
        answered.append(spec)
        return asked_by_name(self, spec)

    def kept(self: Blobs, oid: str, content: str | None) -> None:
        answered.append(oid)
        keep(self, oid, content)

    monkeypatch.setattr(Blobs, "_read", by_name)
    monkeypatch.setattr(Blobs, "_keep", kept)
    return answered


def test_a_blob_two_commits_share_is_read_once(tmp_path: Path, reads: list[str]) -> None:
    repo = new_repo(tmp_path / "clone")
    (repo / "train.py").write_text(FLAGS.format(lr="1e-3", more=""))
    commit(repo, "init", "2026-09-01T10:00:00+00:00")
    for n, lr in enumerate(("2e-3", "3e-3", "4e-3"), start=1):
        (repo / "train.py").write_text(FLAGS.format(lr=lr, more=""))
        commit(repo, f"tune lr (#{n})", f"2026-09-0{7 + n}T10:00:00+00:00")
    git(repo, "mv", "train.py", "cli.py")
    (repo / "cli.py").write_text(FLAGS.format(lr="5e-3", more="# the entry point\n"))
    commit(repo, "rename the entry point (#4)", "2026-09-12T10:00:00+00:00")

    options = {pr.number: pr.options for pr in GitSource(repo, repo="acme/x").fetch(WEEK)}

    assert [o.changed if o else None for o in (options[1], options[2], options[3])] == [
        {"flag:--lr": ("0.001", "0.002")},
        {"flag:--lr": ("0.002", "0.003")},
        {"flag:--lr": ("0.003", "0.004")},
    ]
    # The renamed file's text before is its old name's blob, the one #3 wrote.
    assert options[4] is not None and options[4].changed == {"flag:--lr": ("0.004", "0.005")}
    # Five texts (the four versions of train.py, cli.py): each asked for once, by its blob id.
    assert len(reads) == len(set(reads)) == 5
    assert all(re.fullmatch(r"[0-9a-f]{40}", spec) for spec in reads)


def test_a_text_asked_for_by_name_is_read_by_name(tmp_path: Path, reads: list[str]) -> None:
    repo = new_repo(tmp_path / "clone")
    (repo / "train.py").write_text(FLAGS.format(lr="1", more=""))
    commit(repo, "init", "2026-09-01T10:00:00+00:00")
    head = git(repo, "rev-parse", "HEAD").strip()
    blobs = Blobs(repo)
    try:
        found = blobs.text(f"{head}:train.py")
        assert found is not None and "--lr" in found[1]
        assert blobs.text(f"{head}:missing.py") is None
    finally:
        blobs.close()
    assert reads == [f"{head}:train.py", f"{head}:missing.py"]
