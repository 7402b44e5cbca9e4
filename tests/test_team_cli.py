"""`prdigest report --repo a --repo b` and `--owner OWNER`: one team digest, in every format the command
writes, each repository read from its configured clone; bad options get one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_team_digest import REPOS, build_clone, team_settings


@pytest.fixture(scope="module")
def clones(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("team-cli")
    return {
        name: build_clone(root / name.split("/")[1], size)
        for name, size in zip(REPOS, (4, 7, 2), strict=True)
    }


def test_repeated_repo_prints_one_team_digest(run_cli, tmp_path: Path, clones: dict[str, Path]) -> None:
    team_settings(tmp_path, clones)  # writes tmp_path/prdigest.toml
    config = str(tmp_path / "prdigest.toml")
    args = ["report", "--config", config, "--week", "2026-W37", "--lang", "en"]
    team = [a for repo in REPOS for a in ("--repo", repo)]
    result = run_cli(*args, *team, "--format", "json")
    assert result.returncode == 0, result.stderr
    digest = json.loads(result.stdout)
    assert digest["repo"] == ",".join(REPOS) and [p["repo"] for p in digest["parts"]] == list(REPOS)
    assert digest["stats"]["merged_prs"] == 25

    owner = run_cli(*args, "--owner", "acme", "--format", "json")
    assert owner.returncode == 0, owner.stderr
    assert json.loads(owner.stdout)["repo"] == "org:acme" and len(json.loads(owner.stdout)["parts"]) == 3

    for fmt in ("md", "html", "lark", "slack"):
        shown = run_cli(*args, *team, "--format", fmt)
        assert shown.returncode == 0 and shown.stdout.strip(), (fmt, shown.stderr)

    one = run_cli(*args, "--repo", "acme/web", "--format", "json")  # one --repo: as before
    assert one.returncode == 0 and json.loads(one.stdout)["repo"] == "acme/web"
    assert json.loads(one.stdout)["parts"] == [] and json.loads(one.stdout)["stats"]["merged_prs"] == 11


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--repo", "acme/api", "--repo", "ACME/api"], "--repo ACME/api is named twice"),
        (["--repo", "acme/api", "--repo", "acme"], "--repo 'acme' is not OWNER/NAME"),
        (["--owner", "acme", "--repo", "acme/api"], "name --owner or --repo, not both"),
        (["--owner", "acme", "--git", "."], "--git and --fixture read one repository"),
        (["--owner", "nobody"], "no repository of nobody is known"),
    ],
)
def test_bad_team_options_get_one_clear_line(
    run_cli, tmp_path: Path, options: list[str], message: str
) -> None:
    result = run_cli("report", "--week", "2026-W37", *options)
    assert result.returncode != 0 and message in result.stderr and "Traceback" not in result.stderr
