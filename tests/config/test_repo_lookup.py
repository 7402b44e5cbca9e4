"""A repository's settings are found by its name in any capitals (GitHub's names ignore case)."""

from __future__ import annotations

import pytest

from prdigest.config import Settings, load_settings
from prdigest.config.repo_file import with_repo_file

ENTRY = {"name": "Acme/Rocket", "extra_instructions": "Call the rollout workers.", "base_branch": "main"}


@pytest.fixture
def settings() -> Settings:
    return load_settings(env={}, overrides={("repos",): [ENTRY]})


@pytest.mark.parametrize("name", ["Acme/Rocket", "acme/rocket", "ACME/ROCKET", "aCmE/rOcKeT"])
def test_the_entry_answers_to_any_capitals(settings: Settings, name: str) -> None:
    found = settings.repo(name)
    assert found.name == "Acme/Rocket" and found.base_branch == "main"


def test_a_name_the_file_does_not_list_has_the_defaults(settings: Settings) -> None:
    assert settings.repo("acme/rockets").base_branch is None


def test_the_repository_file_is_layered_under_the_entry_named_in_other_capitals(settings: Settings) -> None:
    layered, warnings = with_repo_file(settings, "acme/rocket", '[taxonomy]\ncore_paths = ["flight/**"]\n')
    assert warnings == []
    for name in ("acme/rocket", "Acme/Rocket"):
        repo = layered.repo(name)
        assert repo.taxonomy.core_paths == ["flight/**"]  # the file's
        assert repo.extra_instructions == "Call the rollout workers."  # the entry's
