"""The same inputs give byte-identical reports whatever the process: Python salts the hash of every
string per process (PYTHONHASHSEED), so anything that takes its order from a set or a dict built from
one changes from run to run unless it is sorted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import commit, new_repo

SEEDS = ("1", "2", "3", "4", "5", "6")
NOW = "2026-09-15T00:00:00+00:00"


def run(seed: str, *args: str, cwd: Path) -> str:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRDIGEST_", "GITHUB", "PYTHONHASH"))
    }
    env.update({"PYTHONHASHSEED": seed, "PRDIGEST_NOW": NOW, "HOME": str(cwd)})
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


VERSION_MOVES = """
from prdigest.analysis.facts import Facts, FileDiff
from prdigest.analysis.risks.deps import version_moves
d = FileDiff("requirements.txt", added=["torch==2.0.1"], removed=["torch==1.9.0", "Torch==2.0.0"])
f = Facts(churn=3, paths=[d.path], code_paths=[], product_paths=[], test_paths=[], core_paths=[], modules=[],
          body="", diffs=[d], diff_added=d.added, diff_removed=d.removed)
print(version_moves(f))
"""


def test_a_release_pinned_twice_moves_from_the_same_one_in_every_process(tmp_path: Path) -> None:
    # Two pins of one package ("torch", "Torch") in the removed lines: which one the move starts from
    # was the set's order, so one PR's importance was 4.5 in one run and 5.5 in the next.
    found = {run(seed, "-c", VERSION_MOVES, cwd=tmp_path) for seed in SEEDS}
    assert len(found) == 1, found


def history(path: Path) -> Path:
    repo = new_repo(path)
    (repo / "requirements.txt").write_text("torch==1.9.0\nTorch==2.0.0\nnumpy==1.26.0\nflash-attn==2.5.0\n")
    (repo / "trainer").mkdir()
    (repo / "trainer" / "loop.py").write_text("def step(batch, lr=1e-3):\n    return batch\n")
    commit(repo, "init", "2026-09-01T10:00:00+00:00")
    changes = [
        (
            "requirements.txt",
            "torch==2.0.1\nnumpy==1.26.0\nflash_attn==2.6.0\n",
            "build: bump torch to 2.0.1 (#12)",
        ),
        (
            "trainer/loop.py",
            "def step(batch, lr=1e-4):\n    return batch\n",
            "fix(trainer): lower the lr (#13)",
        ),
        ("trainer/sync.py", "def sync(weights):\n    return weights\n", "feat(trainer): weight sync (#14)"),
        ("docs/sync.md", "# Weight sync\n", "docs: weight sync (#15)"),
        (
            "trainer/sync.py",
            "def sync(weights, async_=True):\n    return weights\n",
            "feat: async weight sync (#16)",
        ),
    ]
    for day, (name, text, message) in enumerate(changes, start=8):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        commit(repo, message, f"2026-09-{day:02d}T10:00:00+00:00")
    return repo


def test_the_report_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    repo = history(tmp_path / "repo")
    outputs: dict[str, set[str]] = {"md": set(), "json": set()}
    for i, seed in enumerate(SEEDS[:3]):
        for form in outputs:
            out = run(
                seed, "-m", "prdigest", "report", "--git", str(repo), "--repo", "acme/trainer",
                "--since", "2026-09-07", "--until", "2026-09-13", "--tz", "UTC", "--lang", "en",
                "--format", form, "--db", str(tmp_path / f"{form}-{i}.db"), cwd=tmp_path,
            )  # fmt: skip
            if form == "json":  # the instant it was made is the one field that is the clock's
                assert json.loads(out)["stats"]["merged_prs"] == 5
                out = re.sub(r'"generated_at": "[^"]*"', "", out)
            outputs[form].add(out)
    assert len(outputs["md"]) == 1 and len(outputs["json"]) == 1
