"""config_breaking from what a project exposes, in each style projects keep their options: a clone the test
builds, one PR that changes an option, read by each source (the files' texts before and after the PR: a
clone's commits, GitHub's `object(expression:)` answers) and judged by the rules."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import commit, new_repo
from fakes.github_api import TOKEN, FakeFile, FakeGitHub, FakeRepo

from prdigest.analysis.rules import analyse
from prdigest.config import load_settings
from prdigest.models import PullRequest, Window
from prdigest.sources.git.source import GitSource
from prdigest.sources.github.source import ClientOptions, GitHubClient, GitHubSource
from prdigest.sources.options import option_changes, options_of
from prdigest.sources.options.files import MAX_CHARS as MAX_CONFIG_CHARS
from prdigest.sources.options.python import MAX_CHARS, python_options

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="UTC")
NOW = datetime(2026, 9, 14, tzinfo=UTC)


PRRead = Callable[[dict[str, str], dict[str, str | None], str], PullRequest]


@pytest.fixture(params=["git", "github"])
def the_pr(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PRRead]:
    """PR #7 (in WEEK) of a repository whose files are ``before`` and which writes ``after`` (None: the
    file is deleted), as each source reads it: a clone's commits, or GitHub's answers (the fake)."""
    if request.param == "git":
        yield functools.partial(_from_clone, tmp_path)
        return
    with FakeGitHub() as fake:
        yield functools.partial(_from_github, fake)


def _from_clone(
    tmp_path: Path, before: dict[str, str], after: dict[str, str | None], title: str
) -> PullRequest:
    repo = new_repo(tmp_path / "repo")
    for name, text in before.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    commit(repo, "init", "2026-09-01T10:00:00+00:00")
    for name, text in after.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
    commit(repo, f"{title} (#7)", "2026-09-08T10:00:00+00:00")
    (pr,) = [p for p in GitSource(repo, repo="acme/trainer").fetch(WEEK) if p.number == 7]
    return pr


def _from_github(
    fake: FakeGitHub, before: dict[str, str], after: dict[str, str | None], title: str
) -> PullRequest:
    files = []
    for path, new in after.items():
        old = before.get(path)
        lines = list(difflib.ndiff((old or "").splitlines(), (new or "").splitlines()))
        change = "ADDED" if old is None else "DELETED" if new is None else "MODIFIED"
        plus, minus = sum(x[0] == "+" for x in lines), sum(x[0] == "-" for x in lines)
        files.append(FakeFile(path, plus, minus, change, before=old, after=new))
    repo = fake.add_repo(FakeRepo("acme/trainer"))
    repo.add(7, title=title, merged_at=datetime(2026, 9, 8, 10, tzinfo=UTC), files=files)
    client = GitHubClient(TOKEN, fake.url, ClientOptions(timeout=3, retries=0, backoff=0))
    (pr,) = GitHubSource(client, "acme/trainer").fetch(WEEK)
    assert pr.options is not None  # every text it needed was read
    return pr


def breaking(pr: PullRequest) -> str | None:
    """The config_breaking evidence the rules give the PR, or None."""
    taxonomy = load_settings(env={}).repo(pr.repo).taxonomy
    found = [r for r in analyse(pr, taxonomy, "en").risks if r.label == "config_breaking"]
    return found[0].evidence if found else None


DATACLASS = """from dataclasses import dataclass, field


@dataclass
class TrainConfig:
    lr: float = 1e-3
    warmup_steps: int = 10
    tags: list[str] = field(default_factory=list)
"""


def test_a_yaml_key_renamed(the_pr: PRRead) -> None:
    pr = the_pr(
        {"configs/train.yaml": "optimizer:\n  lr: 0.001\n  betas: [0.9, 0.99]\nsteps: 100\n"},
        {"configs/train.yaml": "optimizer:\n  learning_rate: 0.001\n  betas: [0.9, 0.99]\nsteps: 100\n"},
        "rename the optimizer's lr",
    )
    evidence = breaking(pr)
    assert evidence is not None and "optimizer.lr" in evidence and "optimizer.learning_rate" in evidence
    assert "configs/train.yaml" in evidence


def test_a_dataclass_field_removed(the_pr: PRRead) -> None:
    after = DATACLASS.replace("    warmup_steps: int = 10\n", "")
    pr = the_pr({"trainer/schedule.py": DATACLASS}, {"trainer/schedule.py": after}, "drop warmup")
    evidence = breaking(pr)
    assert evidence is not None and "TrainConfig.warmup_steps" in evidence


def test_a_default_changed(the_pr: PRRead) -> None:
    after = DATACLASS.replace("lr: float = 1e-3", "lr: float = 1e-4")
    pr = the_pr({"trainer/schedule.py": DATACLASS}, {"trainer/schedule.py": after}, "lower the lr")
    evidence = breaking(pr)
    assert (
        evidence is not None and "TrainConfig.lr" in evidence and "0.001" in evidence and "0.0001" in evidence
    )


def test_a_pydantic_field_renamed(the_pr: PRRead) -> None:
    model = "from pydantic import BaseModel\n\n\nclass Serving(BaseModel):\n"
    model += "    batch_size: int = 8\n    port: int = 80\n"
    pr = the_pr(
        {"trainer/serving.py": model},
        {"trainer/serving.py": model.replace("batch_size", "micro_batch_size")},
        "clearer batch size",
    )
    evidence = breaking(pr)
    assert (
        evidence is not None and "Serving.batch_size" in evidence and "Serving.micro_batch_size" in evidence
    )


def test_an_environment_variable_dropped(the_pr: PRRead) -> None:
    code = (
        'import os\n\nCACHE = os.environ.get("TRAINER_CACHE_DIR", "/tmp/cache")\n'
        'DEBUG = os.getenv("TRAINER_DEBUG")\n'
    )
    pr = the_pr(
        {"trainer/paths.py": code},
        {"trainer/paths.py": 'CACHE = "/var/cache/trainer"\nDEBUG = None\n'},
        "fixed cache dir",
    )
    evidence = breaking(pr)
    assert evidence is not None and "$TRAINER_CACHE_DIR" in evidence


def test_a_click_option_removed(the_pr: PRRead) -> None:
    cli = (
        "import click\n\n\n@click.command()\n@click.option('--steps', default=100)\n"
        "@click.option('--dry-run', is_flag=True)\ndef main(steps, dry_run):\n    pass\n"
    )
    after = cli.replace("@click.option('--dry-run', is_flag=True)\n", "").replace(", dry_run", "")
    pr = the_pr({"trainer/cli.py": cli}, {"trainer/cli.py": after}, "simplify the cli")
    evidence = breaking(pr)
    assert evidence is not None and "--dry-run" in evidence


def test_a_public_function_parameter_removed(the_pr: PRRead) -> None:
    api = "def train(model, steps=100, seed=0):\n    return model\n\n\ndef _helper(x, y=1):\n    return x\n"
    after = api.replace(", seed=0", "").replace("x, y=1", "x")
    pr = the_pr({"trainer/api.py": api}, {"trainer/api.py": after}, "drop the seed")
    evidence = breaking(pr)
    assert evidence is not None and "train(seed=)" in evidence and "_helper" not in evidence


def test_a_deleted_config_class_is_named(the_pr: PRRead) -> None:
    pr = the_pr({"trainer/schedule.py": DATACLASS}, {"trainer/schedule.py": None}, "remove the schedule")
    evidence = breaking(pr)
    assert evidence is not None and "TrainConfig.lr" in evidence


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # An option added: nothing removed, nothing changed.
        ({"trainer/schedule.py": DATACLASS}, {"trainer/schedule.py": DATACLASS + "    seed: int = 0\n"}),
        # A field moved to another file the PR touches: still there.
        (
            {"trainer/schedule.py": DATACLASS, "trainer/other.py": "X = 1\n"},
            {"trainer/schedule.py": "X = 2\n", "trainer/other.py": DATACLASS},
        ),
        # Tests, docs and examples expose nothing to users.
        ({"tests/test_x.py": DATACLASS}, {"tests/test_x.py": "X = 1\n"}),
        ({"examples/run.py": DATACLASS}, {"examples/run.py": "X = 1\n"}),
        # A function that went with its parameters: its callers are gone too.
        ({"trainer/api.py": "def train(model, seed=0):\n    pass\n"}, {"trainer/api.py": "X = 1\n"}),
    ],
    ids=["added", "moved", "test", "example", "function-gone"],
)
def test_what_does_not_break_anyone(the_pr: PRRead, before: dict, after: dict) -> None:
    assert breaking(the_pr(before, after, "tidy up")) is None


def test_untrusted_files_are_bounded_and_a_broken_one_exposes_nothing() -> None:
    assert options_of("configs/a.yaml", "a: [unclosed\n  - b: {") == {}
    assert options_of("configs/a.yaml", "!!python/object/apply:os.system ['echo hi']") == {}  # safe_load
    assert options_of("configs/a.json", "{" * 100_000) == {}
    assert options_of("configs/a.toml", "x = ") == {}
    assert python_options("def f(:\n") == {}
    assert python_options("x = 1\n" * (MAX_CHARS // 6 + 1)) == {}
    assert options_of("configs/big.yaml", "a: 1\n" * (MAX_CONFIG_CHARS // 5 + 1)) == {}
    deep = "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 40)) + "  " * 40 + "v: 1\n"
    keys = options_of("configs/deep.yaml", deep)
    assert keys and max(k.count(".") for k in keys) <= 6  # read to a bounded depth
    assert python_options("(" * 300 + ")" * 300) == {}  # nesting past the parser's limit


def test_a_renamed_config_file_keeps_its_keys() -> None:
    keys = options_of("configs/a.yaml", "lr: 0.1\n")
    changes = option_changes(
        [("configs/a.yaml", "configs/b.yaml", keys, options_of("configs/b.yaml", "lr: 0.1\n"))]
    )
    assert changes.removed == {}


PATCH = """diff --git a/trainer/args.py b/trainer/args.py
--- a/trainer/args.py
+++ b/trainer/args.py
@@ -10,1 +10,1 @@ def add_args(parser):
-    parser.add_argument("--lr", type=float, default=1e-3, help="the rate")
+    parser.add_argument("--lr", type=float, default=1e-3, help="the learning rate")
@@ -20,1 +20,1 @@ def add_args(parser):
-    total = compute(x)
+    total = compute(x, y)
diff --git a/trainer/config.py b/trainer/config.py
--- a/trainer/config.py
+++ b/trainer/config.py
@@ -5,1 +5,1 @@ class TrainConfig:
-    warmup: int = 10
+    warmup: int = 100
diff --git a/tests/test_args.py b/tests/test_args.py
--- a/tests/test_args.py
+++ b/tests/test_args.py
@@ -1,1 +0,0 @@
-    parser.add_argument("--gone", default=1)
"""


def test_only_the_hunks_that_may_change_an_option_are_read() -> None:
    from prdigest.sources.options.patch import defining_files

    found = defining_files(PATCH)
    # A help text reworded and code changed around the options: args.py is not read; the default moved.
    assert set(found) == {"trainer/config.py"}
    assert found["trainer/config.py"].before == [(5, 1)] and found["trainer/config.py"].after == [(5, 1)]


def test_a_long_block_is_read_by_its_changed_statements() -> None:
    from prdigest.sources.options.python import BIG_BLOCK, touched_blocks

    filler = "".join(f"    x{i} = compute({i})\n" for i in range(BIG_BLOCK // 20))
    text = "import os\n\n\ndef add_args(parser):\n" + filler + '    parser.add_argument("--lr", default=1)\n'
    line = text.count("\n")  # the flag's line, 1-based
    (piece,) = touched_blocks(text, [(line, 1)])
    assert len(piece) < 400 and python_options(piece) == {"flag:--lr": "1"}


def test_the_statements_each_hunk_touches_are_read_once_in_file_order() -> None:
    from prdigest.sources.options.python import touched_blocks

    # Lines: 1 import, 2 blank, 3-5 a decorated def, 6-7 a class, 8 an assignment, then the end.
    text = "import os\n\n@cache\ndef f(x=1):\n    return x\nclass C:\n    y: int = 2\nZ = 3\n"
    assert touched_blocks(text, [(8, 1), (4, 1)]) == ["@cache\ndef f(x=1):\n    return x\n", "Z = 3\n\n"]
    # Lines 5-7 span two statements; a pure insertion after line 1 touches the statement before it.
    assert touched_blocks(text, [(5, 3), (1, 0), (6, 1)]) == [
        "import os\n\n",
        "@cache\ndef f(x=1):\n    return x\n",
        "class C:\n    y: int = 2\n",
    ]
    assert touched_blocks(text, [(40, 2)]) == []  # past the end: none


def test_a_lost_option_is_still_named_where_the_commits_texts_name_it() -> None:
    from prdigest.sources.options.reader import Named, still_named

    named = Named('class TrainConfigBase:\n    lr: float = 1.0\n\nwarmup: int = 3\nparser.add("--seed")\n')
    assert not still_named("field:TrainConfig.lr", named, set())  # another class whose name starts so
    assert still_named("field:TrainConfigBase.lr", named, set())
    assert not still_named("field:TrainConfigBase.warmup", named, set())  # a module's, not a field
    assert not still_named("field:TrainConfigBase.lr", named, {"field:TrainConfigBase"})  # its class was read
    assert still_named("flag:--seed", named, set()) and not still_named("flag:--lr", named, set())
    assert not still_named("param:train.lr", named, set())
