"""A clone's name and its PRs' links from its origin remote: hosted remotes name a repository, local paths
and bundles name none."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest.config import load_settings
from prdigest.config.models import GithubSettings
from prdigest.sources.git.remote import origin, web_url
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory


@pytest.mark.parametrize(
    ("url", "host", "named"),
    [
        ("git@github.com:acme-ml/trainer.git", "github.com", "acme-ml/trainer"),
        ("https://github.com/acme-ml/trainer", "github.com", "acme-ml/trainer"),
        ("ssh://git@github.com/acme-ml/trainer.git/", "github.com", "acme-ml/trainer"),
        ("https://x-token:secret@ghe.corp.example:8443/scm/acme/app.git", "ghe.corp.example", "acme/app"),
        ("/data/shared/acme-ml__trainer.bundle", None, None),
        ("../elsewhere/trainer", None, None),
        ("file:///srv/git/acme/trainer.git", None, None),
        ("", None, None),
    ],
)
def test_a_remote_names_its_host_and_repository(url: str, host: str | None, named: str | None) -> None:
    assert origin(url) == (host, named)


def test_links_go_to_a_github_origin_else_to_the_named_repository_on_the_configured_host() -> None:
    assert web_url("acme/app", "github.com", None) == "https://github.com/acme/app"
    assert web_url("acme/app", "ghe.corp.example", None) is None  # not known to be a GitHub
    ghe = GithubSettings(url="https://ghe.corp.example/api/v3").web_url
    assert ghe == "https://ghe.corp.example"
    assert web_url("acme/app", "ghe.corp.example", ghe) == "https://ghe.corp.example/acme/app"
    assert web_url("acme/app", None, GithubSettings().web_url) == "https://github.com/acme/app"
    assert web_url("local/app", "github.com", "https://github.com") is None


def test_a_subscriptions_configured_clone_links_its_prs(tmp_path: Path) -> None:
    clone = new_repo(tmp_path / "clone")
    commit(clone, "initial", "2026-09-01T10:00:00+00:00")
    config = tmp_path / "prdigest.toml"
    config.write_text(
        f'[[repos]]\nname = "acme-ml/app"\ngit = "{clone}"\n\n[github]\nurl = "https://ghe.example.com/api/v3"\n'
    )
    source = source_factory(load_settings(config, env={}))("acme-ml/app")
    assert isinstance(source, GitSource) and source.web_url == "https://ghe.example.com/acme-ml/app"
