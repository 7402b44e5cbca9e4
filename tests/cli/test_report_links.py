"""A clone's PRs link to GitHub wherever the repository is known, in every output of `prdigest report`:
from a GitHub origin, or from the name `--repo` gives it (on `[github] url`'s host for GitHub Enterprise).
A clone of a bundle, named by nothing, is `local/<folder>` and links nowhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import commit, git, new_repo

WEEK = ("--since", "2026-09-07", "--until", "2026-09-13", "--tz", "UTC")
FORMATS = ("md", "lark", "slack", "html")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    path = new_repo(tmp_path / "work")
    (path / "a.py").write_text("x = 1\n")
    commit(path, "initial", "2026-09-01T10:00:00+00:00")
    for number in (11, 12, 13):
        (path / f"f{number}.py").write_text(f"def f{number}():\n    return {number}\n")
        commit(path, f"feat: add f{number} (#{number})", f"2026-09-0{number - 3}T10:00:00+00:00")
    return path


def _outputs(run_cli, clone: Path, *args: str, env: dict | None = None) -> dict[str, str]:
    out = {}
    for fmt in FORMATS:
        done = run_cli("report", "--git", str(clone), *args, *WEEK, "--format", fmt, env=env)
        assert done.returncode == 0, done.stderr
        out[fmt] = done.stdout
    return out


def _linked(outputs: dict[str, str], base: str) -> None:
    for fmt, text in outputs.items():
        for number in (11, 12, 13):
            assert f"{base}/pull/{number}" in text, (fmt, number)
    assert f"[#11]({base}/pull/11)" in outputs["md"]
    assert f'href="{base}/pull/11"' in outputs["html"]
    assert f"<{base}/pull/11|#11>" in json.dumps(json.loads(outputs["slack"]), ensure_ascii=False)


def test_a_clone_with_a_github_origin_links_its_prs(run_cli, clone: Path, clean_env: Path) -> None:
    git(clone, "remote", "add", "origin", "git@github.com:acme-ml/app.git")
    _linked(_outputs(run_cli, clone), "https://github.com/acme-ml/app")


def test_a_clone_named_with_repo_links_its_prs(run_cli, clone: Path, clean_env: Path) -> None:
    _linked(_outputs(run_cli, clone, "--repo", "acme-ml/app"), "https://github.com/acme-ml/app")


def test_a_named_clone_links_to_the_github_enterprise_host(run_cli, clone: Path, clean_env: Path) -> None:
    env = {"PRDIGEST_GITHUB_URL": "https://ghe.example.com/api/v3"}
    _linked(_outputs(run_cli, clone, "--repo", "acme-ml/app", env=env), "https://ghe.example.com/acme-ml/app")


def test_a_bundles_clone_is_local_and_links_nowhere(
    run_cli, clone: Path, clean_env: Path, tmp_path: Path
) -> None:
    bundle = tmp_path / "data" / "acme-ml__app.bundle"
    bundle.parent.mkdir()
    git(clone, "bundle", "create", str(bundle), "--all")
    git(tmp_path, "clone", "-q", str(bundle), "app")
    report = json.loads(_json(run_cli, tmp_path / "app"))
    assert report["repo"] == "local/app"
    assert {p["number"] for p in report["prs"]} == {11, 12, 13} and not any(p["url"] for p in report["prs"])
    assert "/pull/" not in run_cli("report", "--git", str(tmp_path / "app"), *WEEK).stdout


def _json(run_cli, clone: Path) -> str:
    done = run_cli("report", "--git", str(clone), *WEEK, "--format", "json")
    assert done.returncode == 0, done.stderr
    return done.stdout
