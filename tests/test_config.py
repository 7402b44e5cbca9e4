"""Settings: defaults < prdigest.toml < env vars; invalid files name the key and the line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from prdigest.config import DEFAULT_DB, load_settings, locate_key
from prdigest.errors import ConfigError

GOOD = """\
[storage]
db = "/var/lib/prdigest/cache.db"

[report]
timezone = "Europe/Berlin"
language = "en"
key_pr_limit = 12

[[repos]]
name = "radixark/miles"
[repos.taxonomy]
core_paths = ["miles/backends/**"]
[repos.taxonomy.tags.megatron]
paths = ["**/megatron*/**"]
keywords = ["megatron"]

[[repos]]
name = "volcengine/verl"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prdigest.toml"
    path.write_text(text)
    return path


def test_defaults() -> None:
    settings = load_settings(env={})
    assert settings.report.timezone == "Asia/Shanghai"
    assert settings.report.language == "zh"
    assert settings.report.key_pr_limit == 24
    assert settings.storage.db == DEFAULT_DB.expanduser()
    assert settings.github.token is None


def test_file_then_env(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    settings = load_settings(path, env={})
    assert settings.report.timezone == "Europe/Berlin"
    assert settings.storage.db == Path("/var/lib/prdigest/cache.db")
    assert settings.repo("radixark/miles").taxonomy.tags["megatron"].keywords == ["megatron"]
    assert settings.repo("radixark/miles").taxonomy.core_paths == ["miles/backends/**"]
    assert settings.repo("unknown/repo").taxonomy.tags == {}
    env = {"PRDIGEST_CONFIG": str(path), "PRDIGEST_DB": str(tmp_path / "env.db"), "GITHUB_TOKEN": "ghp_x"}
    settings = load_settings(env=env)
    assert settings.storage.db == tmp_path / "env.db"  # env beats the file
    assert settings.report.language == "en"  # the file still counts
    assert settings.github.token is not None and settings.github.token.get_secret_value() == "ghp_x"
    assert "ghp_x" not in repr(settings)  # secrets never reach a log


def test_prdigest_token_wins_over_github_token() -> None:
    settings = load_settings(env={"GITHUB_TOKEN": "a", "PRDIGEST_GITHUB_TOKEN": "b"})
    assert settings.github.token is not None and settings.github.token.get_secret_value() == "b"


def test_settings_are_frozen() -> None:
    settings = load_settings(env={})
    with pytest.raises(ValidationError):
        settings.report.timezone = "UTC"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[report]\nlanguage = "en"\ntimezone = "Mars/Base"\n',
            r"prdigest.toml:3: report.timezone: unknown timezone",
        ),
        (
            "[report]\n\nkey_pr_limit = 0\n",
            r"prdigest.toml:3: report.key_pr_limit: .*greater than or equal to 1",
        ),
        ('[report]\ncolour = "red"\n', r"prdigest.toml:2: report.colour: unknown key"),
        ('[storage]\ndb = "x"\n[report]\nlanguage = "fr"\n', r"prdigest.toml:4: report.language: "),
        (
            GOOD + '\n[[repos]]\nname = "not a repo"\n',
            r"prdigest.toml:21: repos.2.name: 'not a repo' is not OWNER/NAME",
        ),
        ('[report]\ntimezone = "UTC"\nlanguage = \n', r"invalid TOML: .*line 3"),
        (
            '[github]\ntoken = "ghp_secret"\n',
            r"prdigest.toml:2: 'github.token' is a secret; set it with PRDIGEST_GITHUB_TOKEN",
        ),
    ],
)
def test_invalid_file_names_key_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_settings(write(tmp_path, text), env={})
    assert "ghp_secret" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", env={})


def test_bad_env_value_is_blamed_on_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "[report]\nlanguage = 'en'\n")
    with pytest.raises(ConfigError, match=r"^environment: github.url"):
        load_settings(path, env={}, overrides={("github", "url"): 5})


def test_locate_key_walks_tables_and_arrays() -> None:
    assert locate_key(GOOD, ("report", "key_pr_limit")) == 7
    assert locate_key(GOOD, ("repos", "0", "taxonomy", "tags", "megatron", "keywords")) == 15
    assert locate_key(GOOD, ("repos", "1", "name")) == 18
