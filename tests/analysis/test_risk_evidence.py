"""Risk labels that mean what they say, summaries and points to watch that explain, read from a small git
repository built here (real diffs).

Each PR is a squash-merge commit "(#N)" on top of a base tree; the rules read it through the git
source exactly as they read a real clone. Every false positive and every miss of the old rules has
its case: flags of other tools, tests rewritten under a new name, special tokens taken for secrets,
denials of regressions, docs and scripts without tests; and removed options, renamed config keys,
changed defaults, layout changes named in the body, `eval` fixes and `torch.load` without
`weights_only`.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.analysis import rules
from prdigest.config import Taxonomy
from prdigest.models import PullRequest, RiskLabel, Window
from prdigest.sources.git.source import GitSource

WEEK = Window(since=date(2026, 9, 7), until=date(2026, 9, 13), tz="UTC")

BASE = {
    "pkg/__init__.py": "",
    "pkg/arguments.py": (
        "def add_args(parser):\n"
        '    parser.add_argument("--use-cache", action="store_true", help="cache results")\n'
        '    parser.add_argument("--workers", type=int, default=4, help="worker count")\n'
        "    return parser\n"
    ),
    "pkg/config.py": (
        "from dataclasses import dataclass\n\n\n"
        "@dataclass\nclass TrainConfig:\n"
        "    learning_rate: float = 0.001\n"
        "    batch_size: int = 32\n"
    ),
    "pkg/train.py": "def train(cfg):\n    return cfg.batch_size\n",
    "pkg/tools/parser.py": "def parse(text):\n    return eval(text)\n",
    "pkg/ckpt.py": "import torch\n\n\ndef load(path):\n    return torch.load(path, weights_only=True)\n",
    "tests/test_train.py": "def test_train():\n    assert True\n",
    "tests/test_old_loader.py": "".join(
        f"def test_case_{i}():\n    assert {i} == {i}\n\n\n" for i in range(10)
    ),
    ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - run: git fetch --depth 50\n",
    "docker/Dockerfile": "FROM python:3.11\nRUN pip install --force-reinstall numpy\n",
    "scripts/run.sh": "ray stop --force\ndocker run --shm-size 16g img\n",
    "scripts/models/small.sh": "MODEL_ARGS=(--num-layers 2)\n",
    "scripts/train_small.sh": 'source "$(dirname $0)/models/small.sh"\npython train.py ${MODEL_ARGS[@]}\n',
    "docs/guide.md": "# Guide\n",
    "requirements.txt": "numpy>=1.26\n",
}

# PR number -> (title, body, files written (None deletes), files renamed old -> new)
PRS: dict[int, tuple[str, str, dict[str, str | None], dict[str, str]]] = {
    1: (
        "ci: shallower clones and image flags",
        "",
        {
            ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - run: git fetch\n",
            "docker/Dockerfile": "FROM python:3.11\nRUN pip install numpy\n",
            "scripts/run.sh": "ray stop\ndocker run img\ngit apply patch.diff\n",
            "docs/guide.md": "# Guide\n\nWe no longer pass `--unidiff-zero` to git apply.\n",
        },
        {},
    ),
    2: (
        "refactor(args): drop the cache flag",
        "",
        {
            "pkg/arguments.py": (
                "def add_args(parser):\n"
                '    parser.add_argument("--workers", type=int, default=4, help="worker count")\n'
                "    return parser\n"
            )
        },
        {},
    ),
    3: (
        "refactor(config): clearer names",
        "",
        {
            "pkg/config.py": (
                "from dataclasses import dataclass\n\n\n"
                "@dataclass\nclass TrainConfig:\n"
                "    lr: float = 0.001\n"
                "    batch_size: int = 32\n"
            )
        },
        {},
    ),
    4: (
        "perf: more workers by default",
        "",
        {
            "pkg/arguments.py": (
                "def add_args(parser):\n"
                '    parser.add_argument("--use-cache", action="store_true", help="cache results")\n'
                '    parser.add_argument("--workers", type=int, default=16, help="worker count")\n'
                "    return parser\n"
            )
        },
        {},
    ),
    5: (
        "Sharded checkpoints",
        "Checkpoints are now written one file per rank.\n\nThis changes the checkpoint layout: "
        "convert old runs with the script below.",
        {
            "pkg/ckpt.py": (
                "import torch\n\n\ndef load(path, rank=0):\n"
                "    return torch.load(f'{path}/{rank}', weights_only=True)\n"
            )
        },
        {},
    ),
    6: (
        "test: rewrite the loader tests",
        "",
        {
            "tests/test_old_loader.py": None,
            "tests/test_loader.py": "".join(
                f"def test_loads_{i}():\n    assert str({i}) == '{i}'\n\n\n" for i in range(14)
            ),
        },
        {},
    ),
    7: (
        "test: drop the legacy loader tests",
        "",
        {
            "tests/test_old_loader.py": None,
            "pkg/train.py": "def train(cfg):\n    return cfg.batch_size * 2\n",
        },
        {},
    ),
    8: (
        "docs: security guide",
        "",
        {
            "docs/guide.md": (
                "# Guide\n\nNever call `eval(text)` on input; use `pickle.loads` only on trusted data.\n"
            )
        },
        {},
    ),
    9: (
        "feat: chat template for the new model",
        "",
        {"pkg/template.py": 'EOS_TOKEN = "<|endoftext|>"\npad_token = "<|pad|>"\n'},
        {},
    ),
    10: (
        "fix(tools): parse tool arguments without eval",
        "",
        {"pkg/tools/parser.py": "import ast\n\n\ndef parse(text):\n    return ast.literal_eval(text)\n"},
        {},
    ),
    11: (
        "feat: resume from any checkpoint",
        "",
        {"pkg/ckpt.py": "import torch\n\n\ndef load(path):\n    return torch.load(path)\n"},
        {},
    ),
    12: (
        "perf: fuse the loss kernel",
        "Fuses two kernels. There is no significant overhead on small batches, and no regression elsewhere.",
        {
            "pkg/train.py": "def train(cfg):\n    return cfg.batch_size  # fused\n",
            "tests/test_train.py": "def test_train():\n    assert 1\n",
        },
        {},
    ),
    13: (
        "fix: the run script and its docs",
        "",
        {"scripts/run.sh": "ray stop\n", "docs/guide.md": "# Guide\n\nRun scripts/run.sh.\n"},
        {},
    ),
    14: (
        "perf: batch the all-reduce",
        "Throughput drops 7% on small models, measured on 8 GPUs; large models gain.",
        {
            "pkg/train.py": "def train(cfg):\n    return cfg.batch_size + 0\n",
            "tests/test_train.py": "def test_train():\n    assert 2\n",
        },
        {},
    ),
    15: (
        "build: pin numpy",
        "",
        {"requirements.txt": "numpy==1.26.4\n"},
        {},
    ),
    17: (
        "feat: streaming loader",
        "",
        {
            "pkg/stream.py": "def stream(path):\n    yield from open(path)\n",
            "pkg/arguments.py": BASE["pkg/arguments.py"].replace(
                "    return parser",
                '    parser.add_argument("--stream", action="store_true")\n    return parser',
            ),
        },
        {},
    ),
    18: (
        "feat: optimizer state on disk",
        "",
        {
            "pkg/offload.py": "".join(f"STEP_{i} = {i}\n" for i in range(600))
            + "\n\ndef restore(path):\n    return torch.load(path)\n"
        },
        {},
    ),
    19: (
        "Replace the shell model configs with python",
        "",
        {
            "scripts/models/small.sh": None,
            "scripts/models/small.py": "MODEL_ARGS = ['--num-layers', '2']\n",
            "scripts/train_small.sh": "python train.py $(python scripts/models/small.py)\n",
        },
        {},
    ),
    20: (
        "scripts: source the model config by its absolute path",
        "",
        {"scripts/train_small.sh": 'source "/opt/app/scripts/models/small.sh"\npython train.py\n'},
        {},
    ),
    16: (
        "build: install numpy in the image without reinstalling",
        "",
        {"docker/Dockerfile": "FROM python:3.11\nRUN pip install numpy\n"},
        {},
    ),
}


def _write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)


@pytest.fixture(scope="module")
def prs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, PullRequest]:
    """Each PR applied on the base tree alone (then undone), so each diff holds only its own change."""
    root = new_repo(tmp_path_factory.mktemp("risks") / "repo")
    _write(root, BASE)
    commit(root, "base", "2026-09-01T10:00:00+00:00")
    for number, (title, body, files, _) in PRS.items():
        _write(root, files)
        message = f"{title} (#{number})" + (f"\n\n{body}" if body else "")
        commit(root, message, f"2026-09-08T{number % 24:02d}:00:00+00:00")
        _write(root, {path: BASE.get(path) for path in files})  # back to the base for the next PR
        commit(root, f"chore: restore after {number}", f"2026-09-08T{number % 24:02d}:30:00+00:00")
    return {p.number: p for p in GitSource(root, repo="acme/rocket").fetch(WEEK) if p.number in PRS}


def risks(pr: PullRequest) -> dict[str, RiskLabel]:
    return {r.label: r for r in rules.analyse(pr, Taxonomy(), "en").risks}


def test_flags_of_other_tools_in_ci_images_scripts_and_docs_break_nothing(prs) -> None:
    found = risks(prs[1])
    assert "config_breaking" not in found, found.get("config_breaking")
    assert "no_tests" not in found


def test_a_deleted_argparse_option_is_breaking_with_the_flag_as_evidence(prs) -> None:
    risk = risks(prs[2])["config_breaking"]
    assert "--use-cache" in risk.evidence and risk.evidence_source == "diff" and risk.breaks


def test_a_renamed_config_key_is_breaking(prs) -> None:
    risk = risks(prs[3])["config_breaking"]
    assert "learning_rate" in risk.evidence and "lr" in risk.evidence


def test_a_changed_default_is_breaking_with_old_and_new_values(prs) -> None:
    risk = risks(prs[4])["config_breaking"]
    assert "--workers" in risk.evidence and "4" in risk.evidence and "16" in risk.evidence


def test_a_checkpoint_layout_change_named_in_the_body_is_breaking(prs) -> None:
    risk = risks(prs[5])["config_breaking"]
    assert risk.evidence_source == "body" and "checkpoint layout" in risk.evidence


def test_a_test_file_rewritten_under_a_new_name_with_more_coverage_is_no_removal(prs) -> None:
    assert "tests_removed" not in risks(prs[6])
    removed = risks(prs[7])["tests_removed"]  # deleted with nothing in its place
    assert "tests/test_old_loader.py" in removed.evidence


def test_security_words_in_docs_and_special_tokens_are_no_risk(prs) -> None:
    assert "security_sensitive" not in risks(prs[8])
    assert "security_sensitive" not in risks(prs[9])


def test_an_eval_fix_and_torch_load_without_weights_only_are_security_sensitive(prs) -> None:
    fix = risks(prs[10])["security_sensitive"]
    assert "eval(text)" in fix.evidence and fix.evidence.startswith("removes")
    load = risks(prs[11])["security_sensitive"]
    assert "torch.load(path)" in load.evidence


def test_torch_load_far_down_a_new_module_is_security_sensitive(prs) -> None:
    load = risks(prs[18])["security_sensitive"]  # past the excerpt's cap: kept as evidence
    assert "torch.load(path)" in load.evidence


def test_a_deleted_script_that_launch_scripts_source_is_breaking(prs) -> None:
    risk = risks(prs[19])["config_breaking"]
    assert "small.sh" in risk.evidence and risk.evidence_source == "diff" and risk.breaks
    assert "config_breaking" not in risks(prs[20])  # sourced from elsewhere, deleted nowhere


def test_a_denied_regression_is_none_and_a_measured_one_is_confirmed(prs) -> None:
    assert "perf_regression" not in risks(prs[12])
    risk = risks(prs[14])["perf_regression"]
    assert risk.evidence.startswith("confirmed regression") and "7%" in risk.evidence and risk.breaks


def test_docs_and_a_shell_script_need_no_tests(prs) -> None:
    assert "no_tests" not in risks(prs[13])
    assert "no_tests" in risks(prs[11])  # shipped logic changed, no test: the label holds


def test_a_pin_is_a_dependency_change_and_dropping_an_install_flag_is_not(prs) -> None:
    pin = risks(prs[15])["dependency_change"]
    assert "numpy==1.26.4" in pin.evidence
    assert "dependency_change" not in risks(prs[16])


def test_the_summary_says_what_changed_beyond_the_title(prs) -> None:
    described = rules.analyse(prs[5], Taxonomy(), "en").summary
    assert described == "Sharded checkpoints. Checkpoints are now written one file per rank."
    # An English description stays English in a Chinese report.
    assert rules.analyse(prs[5], Taxonomy(), "zh").summary == described
    from_diff = rules.analyse(prs[17], Taxonomy(), "en").summary
    assert from_diff.startswith("Streaming loader. ")
    assert "--stream" in from_diff and "stream()" in from_diff
    assert rules.analyse(prs[17], Taxonomy(), "zh").summary.startswith("Streaming loader。新增参数 --stream")


def test_each_point_to_watch_names_a_behaviour_not_a_bare_path(prs) -> None:
    watch = rules.analyse(prs[11], Taxonomy(), "en").watch
    assert len(watch) == 2  # the unsafe load and the untested change
    for point in watch:
        words = [w for w in point.split() if "/" not in w and not w.endswith((".py", ".py,"))]
        assert len(words) >= 5, point
    assert any("load()" in point and "no test" in point for point in watch)
