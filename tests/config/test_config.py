"""Settings: defaults < prdigest.toml < env vars < command line; invalid files name the key and the line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from prdigest.config import DEFAULT_DB, Settings, check_settings, load_settings, locate_key
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
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", r"prdigest.toml: its arrays or tables nest too deeply"),
        (
            '[github]\ntoken = "ghp_secret"\n',
            r"prdigest.toml:2: github.token is a secret; "
            r"set it with PRDIGEST_GITHUB_TOKEN or PRDIGEST_GITHUB__TOKEN",
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


def test_bad_override_is_blamed_on_the_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[report]\nlanguage = 'en'\n")
    with pytest.raises(ConfigError, match=r"^command line: github.url"):
        load_settings(path, env={}, overrides={("github", "url"): 5})


def test_locate_key_walks_tables_and_arrays() -> None:
    assert locate_key(GOOD, ("report", "key_pr_limit")) == 7
    assert locate_key(GOOD, ("repos", "0", "taxonomy", "tags", "megatron", "keywords")) == 15
    assert locate_key(GOOD, ("repos", "1", "name")) == 18


def test_the_example_config_is_valid_and_complete(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "prdigest.example.toml"
    settings = load_settings(example, env={})
    assert settings.repos[0].taxonomy.tags["megatron"].keywords == ["megatron"]
    assert settings.subscriptions[0].platform == "console" and settings.subscriptions[0].day == "mon"
    assert settings.llm is None  # no model named: the rules engine only
    assert settings.logins() == {"jane.doe@acme.example": "jdoe", "jane@home.example": "jdoe"}
    assert (settings.people[0].slack, settings.people[0].lark) == (
        "U024BE7LH",
        "ou_7d8a6e6df7621556ce0d21922b676706",
    )
    assert settings.skipped_people == ()
    tables = {line.strip("[] \n") for line in example.read_text().splitlines() if line.startswith("[")}
    documented = {
        "storage",
        "report",
        "github",
        "attention",
        "chat",
        "llm",
        "lark",
        "slack",
        "web",
        "workers",
        "schedule",
        "log",
        "admins",
        "access",
    }
    documented |= {"repos", "people"}
    documented |= {
        "subscriptions",
        "repos.taxonomy",
        "repos.taxonomy.tags.megatron",
        "repos.taxonomy.tags.rollout",
    }
    assert tables == documented
    assert set(Settings.model_fields) - {"config_path", "public_url"} <= tables


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[subscriptions]]\nplatform = "lark"\nchat_id = "oc"\nrepo = "a/b"\nday = "monday"\n',
            r"prdigest.toml:5: subscriptions.0.day: Input should be 'mon'",
        ),
        (
            '[[subscriptions]]\nplatform = "teams"\nchat_id = "oc"\nrepo = "a/b"\n',
            r"prdigest.toml:2: subscriptions.0.platform",
        ),
        (
            '[[subscriptions]]\nplatform = "slack"\nchat_id = "C"\nrepo = "a/b"\ntz = "Mars/Base"\n',
            r"prdigest.toml:5: subscriptions.0.tz: unknown timezone",
        ),
        (
            '[[subscriptions]]\nplatform = "slack"\nchat_id = "C"\nrepo = "a/b"\ntime = "25:00"\n',
            r"prdigest.toml:5: subscriptions.0.time",
        ),
        ('[llm]\nmodel = "m"\ntimeout = -1\n', r"prdigest.toml:3: .*timeout"),
        (
            '[lark]\napp_secret = "s"\n',
            r"prdigest.toml:2: lark.app_secret is a secret; .*PRDIGEST_LARK__APP_SECRET_FILE, instead of",
        ),
        ('[slack]\nmode = "rtm"\n', r"prdigest.toml:2: slack.mode"),
    ],
)
def test_invalid_service_tables_name_key_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, text), env={})


def test_config_check_names_what_cannot_work(tmp_path: Path, run_cli) -> None:
    path = write(tmp_path, '[[subscriptions]]\nplatform = "lark"\nchat_id = "oc"\nrepo = "a/b"\n')
    result = run_cli("config", "check", "--config", str(path))
    assert result.returncode == 1
    assert "subscriptions.0: posts to lark, which has no app configured" in result.stderr
    assert "no GitHub token is set" in result.stderr
    example = str(Path(__file__).resolve().parents[2] / "prdigest.example.toml")
    ok = run_cli("config", "check", "--config", example, env={"GITHUB_TOKEN": "ghp_test"})
    assert ok.returncode == 0, ok.stderr
    assert "1 repositories, 1 subscriptions" in ok.stdout
    bad = run_cli("config", "check", "--config", str(write(tmp_path, "[report]\nlanguage = 'fr'\n")))
    assert bad.returncode == 1 and "prdigest.toml:2: report.language" in bad.stderr


def test_config_check_says_which_file_it_read(tmp_path: Path, run_cli) -> None:
    here = tmp_path / "project"
    here.mkdir()
    (here / "prdigest.toml").write_text('[report]\nlanguage = "en"\n[web]\npage_access = "signed"\n')
    found = run_cli("config", "check", cwd=here)
    assert found.stdout.startswith(f"read {here / 'prdigest.toml'}:")
    assert found.returncode == 1 and 'page_access = "signed" needs PRDIGEST_WEB_SIGNING_KEY' in found.stderr
    signed = run_cli(
        "config", "check", cwd=here, env={"PRDIGEST_WEB_SIGNING_KEY_FILE": str(write(tmp_path, "k\n"))}
    )
    assert signed.returncode == 0, signed.stderr
    nowhere = tmp_path / "elsewhere"
    nowhere.mkdir()
    alone = run_cli("config", "check", cwd=nowhere)
    assert alone.returncode == 0 and alone.stdout.startswith("no config file; defaults and environment:")


PEOPLE = """\
[[people]]
github = "jdoe"
email = ["jane.doe@acme.example", "jane@home.example"]
slack = "U024BE7LH"
lark = "ou_7d8a6e6df7621556ce0d21922b676706"

[[people]]
github = "grid-user"
slack = "W012A3CDE"

[[people]]
github = "mlee"
lark = "ou_ab12"
"""


def test_people_name_their_chat_ids_and_need_only_one_way_to_be_reached(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, PEOPLE), env={})
    jdoe, grid, mlee = settings.people
    assert (jdoe.slack, jdoe.lark) == ("U024BE7LH", "ou_7d8a6e6df7621556ce0d21922b676706")
    assert (grid.email, grid.slack, grid.lark) == ([], "W012A3CDE", None)
    assert (mlee.email, mlee.slack, mlee.lark) == ([], None, "ou_ab12")
    assert settings.logins() == {"jane.doe@acme.example": "jdoe", "jane@home.example": "jdoe"}
    assert settings.skipped_people == () and check_settings(settings) == []


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (
            'github = "bob"\nslack = "U1> <!channel"',
            "people.3 (github 'bob'): skipped: slack: 'U1> <!channel'",
        ),
        (
            'github = "bob"\nslack = "u024be7lh"',
            "people.3 (github 'bob'): skipped: slack: 'u024be7lh' is not",
        ),
        (
            'github = "bob"\nslack = "C024BE7LH"',
            "people.3 (github 'bob'): skipped: slack: 'C024BE7LH' is not",
        ),
        (
            'github = "bob"\nlark = "all"',
            "people.3 (github 'bob'): skipped: lark: 'all' is not a Lark user id",
        ),
        (
            'github = "bob"\nlark = "ou_1\\"></at><at user_id=\\"all"',
            "people.3 (github 'bob'): skipped: lark: ",
        ),
        ('github = "bob"', "people.3 (github 'bob'): skipped: names no email, slack or lark id"),
        ('github = "bob"\nemail = "bob"', "people.3 (github 'bob'): skipped: email: 'bob' is not an email"),
        (
            'github = "bob"\nemail = "b@x.io"\nslak = "U1"',
            "people.3 (github 'bob'): skipped: slak: unknown key",
        ),
        ('email = "b@x.io"', "people.3: skipped: github: Field required"),
        (
            'github = "-bob"\nemail = "b@x.io"',
            "people.3 (github '-bob'): skipped: github: '-bob' is not a GitHub",
        ),
        (
            'github = "JDoe"\nslack = "U0OTHER"',
            "people.3 (github 'JDoe'): skipped: people.0 names the same GitHub",
        ),
    ],
)
def test_a_malformed_person_is_skipped_and_said_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, entry: str, line: str
) -> None:
    path = write(tmp_path, f"{PEOPLE}\n[[people]]\n{entry}\n\n[report]\nlanguage = 'en'\n")
    with caplog.at_level(logging.WARNING, logger="prdigest.config"):
        settings = load_settings(path, env={})
    assert settings.report.language == "en"  # the rest of the file holds
    assert [p.github for p in settings.people] == ["jdoe", "grid-user", "mlee"]  # the first of a login wins
    (problem,) = check_settings(settings)
    assert problem.startswith(line) and "\n" not in problem
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "prdigest.config"]
    assert logged == f"{path}: {problem}"


def test_people_that_are_not_tables_are_skipped_too(tmp_path: Path) -> None:
    settings = load_settings(
        write(tmp_path, 'people = ["jdoe", {github = "ann", slack = "U0ANN"}]\n'), env={}
    )
    assert [p.github for p in settings.people] == ["ann"]
    assert check_settings(settings) == [
        "people.0: skipped: Input should be a valid dictionary or instance of PersonSettings"
    ]
    assert check_settings(load_settings(env={"PRDIGEST_PEOPLE": '[{"github": "x", "slack": "all"}]'})) == [
        "people.0 (github 'x'): skipped: slack: 'all' is not a Slack user id (\"U...\" or \"W...\")"
    ]


def test_config_check_names_a_skipped_person_and_fails(tmp_path: Path, run_cli) -> None:
    path = write(tmp_path, f'{PEOPLE}\n[[people]]\ngithub = "bob"\nlark = "all"\n')
    result = run_cli("config", "check", "--config", str(path), env={"GITHUB_TOKEN": "ghp_test"})
    assert result.returncode == 1
    problems = [line for line in result.stderr.splitlines() if line.startswith("problem:")]
    why = "lark: 'all' is not a Lark user id (an open_id, \"ou_...\")"
    assert problems == [f"problem: people.3 (github 'bob'): skipped: {why}"]
