"""Settings from everywhere an operator expects: a discovered prdigest.toml, PRDIGEST_<TABLE>__<KEY>
for every setting (the old names as aliases), <VAR>_FILE for every secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel, SecretStr, TypeAdapter
from pydantic.fields import FieldInfo

from prdigest.config import RepoSettings, Settings, load_settings
from prdigest.config.env import ENV_ALIASES, ENV_FALLBACKS, EnvSetting, env_settings, kinds
from prdigest.config.models import PersonSettings
from prdigest.errors import ConfigError
from prdigest.redact import scrub, use_secrets
from prdigest.subscription import Subscription

SETTINGS = env_settings()
SECRETS = [s for s in SETTINGS if s.secret]
# A list of sections has no type-derived sample: one valid entry per section type.
ENTRIES: dict[type[BaseModel], dict[str, Any]] = {
    RepoSettings: {"name": "octo/widgets", "git": "/srv/clones/widgets"},
    Subscription: {"platform": "console", "chat_id": "local", "repo": "octo/widgets", "day": "fri"},
    PersonSettings: {"github": "octocat", "email": ["octocat@widgets.example"]},
}
APP_KEYS = {("github", "private_key"), ("github", "private_key_file")}
# Strings with a format: a zone and a URL, one of which suits every string setting.
STRINGS = ["Europe/Berlin", "https://prdigest.example/api", "sqlite:///srv/prdigest/other.db", "06:45"]


def field_of(path: tuple[str, ...]) -> FieldInfo:
    model: Any = Settings
    for part in path[:-1]:
        model = kinds(model.model_fields[part].annotation)[0]
    return model.model_fields[path[-1]]  # type: ignore[no-any-return]


def samples(kind: Any) -> list[Any]:
    """Values of a type, as Python values; the test keeps the first the setting accepts."""
    if get_origin(kind) is Literal:
        return list(get_args(kind))
    if get_origin(kind) is list:
        (item,) = get_args(kind)
        return [[ENTRIES[item]]] if item in ENTRIES else [["u_1", "u_2"]]
    by_type: dict[Any, list[Any]] = {
        str: STRINGS,
        int: [1, 7, 3000, 65535],
        float: [7.5, 0.5],
        bool: [True, False],
        Path: ["/srv/prdigest/other.db"],
    }
    return by_type[kind]


def value_at(settings: BaseModel | None, path: tuple[str, ...]) -> Any:
    value: Any = settings
    for part in path:
        value = getattr(value, part)
    return value


def with_companions(setting: EnvSetting, env: dict[str, str]) -> dict[str, str]:
    """The LLM settings count only once a model is named; a GitHub App's id and key go together."""
    companions: dict[str, str] = {}
    if setting.path[0] == "llm":
        companions = {"PRDIGEST_LLM__MODEL": "qwen3"}
    elif setting.path in (("github", "app_id"), ("github", "installation_id")):
        companions = {"PRDIGEST_GITHUB__APP_ID": "7", "PRDIGEST_GITHUB__PRIVATE_KEY": "the App's key"}
    elif setting.path in APP_KEYS:
        companions = {"PRDIGEST_GITHUB__APP_ID": "7"}
    return {**companions, **env}


def test_the_walk_finds_every_table_and_the_settings_added_lately() -> None:
    names = {s.name for s in SETTINGS}
    assert {"PRDIGEST_REPORT__TIMEZONE", "PRDIGEST_WEB__PORT", "PRDIGEST_PUBLIC_URL"} <= names
    assert {"PRDIGEST_WEB__PAGE_TTL_DAYS", "PRDIGEST_LLM__MONTHLY_TOKEN_BUDGET", "PRDIGEST_REPOS"} <= names
    assert {s.path[0] for s in SETTINGS} == set(Settings.model_fields) - {"config_path"}
    assert {s.name for s in SECRETS} >= {"PRDIGEST_GITHUB__TOKEN", "PRDIGEST_WEB__SIGNING_KEY"}


def test_aliases_name_real_settings() -> None:
    paths = {s.path for s in SETTINGS}
    assert set(ENV_ALIASES) <= paths and set(ENV_FALLBACKS) <= paths


@pytest.mark.parametrize("setting", [s for s in SETTINGS if not s.secret], ids=lambda s: s.name)
def test_every_setting_is_set_by_its_variable(setting: EnvSetting, tmp_path: Path) -> None:
    field = field_of(setting.path)
    default = field.get_default(call_default_factory=True)
    refused = []
    for sample in [v for kind in kinds(field.annotation) for v in samples(kind)]:
        expected: Any = TypeAdapter(field.annotation).validate_python(sample)
        if expected == default:
            continue
        text = json.dumps(sample) if setting.structured else str(sample)
        try:
            settings = load_settings(env=with_companions(setting, {setting.name: text}), cwd=tmp_path)
        except ConfigError as exc:
            refused.append(str(exc))
            continue
        assert value_at(settings, setting.path) == expected
        return
    pytest.fail(f"no sample value of {setting.name} was accepted: {refused}")


@pytest.mark.parametrize(
    ("setting", "name"),
    [(s, name) for s in SECRETS for name in (*s.names, *ENV_FALLBACKS.get(s.path, ()))],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_secret_is_set_by_each_of_its_variables_and_their_files(
    setting: EnvSetting, name: str, tmp_path: Path
) -> None:
    settings = load_settings(env=with_companions(setting, {name: "s3cret-from-env"}), cwd=tmp_path)
    assert value_at(settings, setting.path) == SecretStr("s3cret-from-env")
    secret_file = tmp_path / "secret"
    secret_file.write_text("s3cret-from-file\n")
    settings = load_settings(env=with_companions(setting, {f"{name}_FILE": str(secret_file)}), cwd=tmp_path)
    own = next((s for s in SETTINGS if s.name == f"{name}_FILE"), None)
    if own is not None:  # its file is a setting of its own ([github] private_key_file), read where it is used
        assert value_at(settings, own.path) == secret_file and value_at(settings, setting.path) is None
    else:
        assert value_at(settings, setting.path) == SecretStr("s3cret-from-file")


def test_a_secret_from_a_file_is_masked_in_output(tmp_path: Path) -> None:
    secret_file = tmp_path / "token"
    secret_file.write_text("xoxb-from-a-mounted-file\r\n")
    settings = load_settings(env={"PRDIGEST_SLACK__BOT_TOKEN_FILE": str(secret_file)}, cwd=tmp_path)
    assert settings.slack.bot_token == SecretStr("xoxb-from-a-mounted-file")
    assert "xoxb-from-a-mounted-file" not in repr(settings)
    assert "from-a-mounted" not in scrub("posting with xoxb-from-a-mounted-file failed")
    use_secrets([])


# --- the config file: named, else found -------------------------------------------------------


def config(folder: Path, language: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prdigest.toml"
    path.write_text(f'[report]\nlanguage = "{language}"\n')
    return path


def test_prdigest_toml_in_the_working_directory_is_read(tmp_path: Path) -> None:
    here = config(tmp_path / "project", "en")
    config(tmp_path / "xdg" / "prdigest", "zh")
    settings = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, cwd=tmp_path / "project")
    assert (settings.report.language, settings.config_path) == ("en", here)


def test_then_the_xdg_config_home(tmp_path: Path) -> None:
    xdg = config(tmp_path / "xdg" / "prdigest", "en")
    settings = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, cwd=tmp_path)
    assert (settings.report.language, settings.config_path) == ("en", xdg)


def test_xdg_config_home_defaults_to_dot_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    found = config(tmp_path / "home" / ".config" / "prdigest", "en")
    assert load_settings(env={}, cwd=tmp_path).config_path == found


def test_a_named_file_wins_over_the_found_ones(tmp_path: Path) -> None:
    config(tmp_path, "zh")
    named = config(tmp_path / "named", "en")
    assert load_settings(named, env={}, cwd=tmp_path).config_path == named
    settings = load_settings(env={"PRDIGEST_CONFIG": str(named)}, cwd=tmp_path)
    assert (settings.report.language, settings.config_path) == ("en", named)


def test_no_file_anywhere_means_defaults(tmp_path: Path) -> None:
    settings = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, cwd=tmp_path)
    assert (settings.report.language, settings.config_path) == ("zh", None)


def test_tests_run_in_an_empty_directory_of_their_own() -> None:
    """A prdigest.toml in the checkout or the developer's ~/.config never reaches the other tests."""
    assert list(Path.cwd().iterdir()) == []
    assert Path(__file__).resolve().parents[2] not in (Path.cwd(), *Path.cwd().parents)
    assert load_settings().config_path is None


def test_a_named_file_that_is_missing_is_an_error(tmp_path: Path) -> None:
    config(tmp_path, "en")  # found, but not the one asked for
    with pytest.raises(ConfigError, match=r"missing\.toml does not exist"):
        load_settings(env={"PRDIGEST_CONFIG": str(tmp_path / "missing.toml")}, cwd=tmp_path)


def test_a_found_file_holding_a_secret_is_refused_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "prdigest.toml").write_text('[slack]\nmode = "http"\nbot_token = "xoxb-123"\n')
    message = r"prdigest.toml:3: slack.bot_token is a secret; set it with PRDIGEST_SLACK_BOT_TOKEN or "
    with pytest.raises(ConfigError, match=message + "PRDIGEST_SLACK__BOT_TOKEN"):
        load_settings(env={}, cwd=tmp_path)


# --- precedence -------------------------------------------------------------------------------


def test_the_environment_beats_the_file_and_the_new_name_beats_the_old(tmp_path: Path) -> None:
    (tmp_path / "prdigest.toml").write_text("[web]\nport = 8081\npage_ttl_days = 30\n")
    assert load_settings(env={}, cwd=tmp_path).web.port == 8081
    assert load_settings(env={"PRDIGEST_WEB_PORT": "9000"}, cwd=tmp_path).web.port == 9000
    both = {"PRDIGEST_WEB_PORT": "9000", "PRDIGEST_WEB__PORT": "9001"}
    settings = load_settings(env=both, cwd=tmp_path)
    assert (settings.web.port, settings.web.page_ttl_days) == (9001, 30)
    tokens = {"GITHUB_TOKEN": "a-token", "PRDIGEST_GITHUB_TOKEN": "b-token"}
    assert load_settings(env=tokens, cwd=tmp_path).github.token == SecretStr("b-token")
    tokens["PRDIGEST_GITHUB__TOKEN"] = "c-token"
    assert load_settings(env=tokens, cwd=tmp_path).github.token == SecretStr("c-token")


def test_openai_names_count_only_when_nothing_else_set_the_value(tmp_path: Path) -> None:
    (tmp_path / "prdigest.toml").write_text('[llm]\nbase_url = "http://vllm:8000/v1"\n')
    env = {"PRDIGEST_LLM__MODEL": "qwen3", "OPENAI_BASE_URL": "http://shell/v1", "OPENAI_API_KEY": "sk-shell"}
    llm = load_settings(env=env, cwd=tmp_path).llm
    assert llm is not None and (llm.base_url, llm.api_key) == ("http://vllm:8000/v1", SecretStr("sk-shell"))
    env |= {"PRDIGEST_LLM_BASE_URL": "http://old/v1", "PRDIGEST_LLM__BASE_URL": "http://new/v1"}
    env |= {"PRDIGEST_LLM_API_KEY": "sk-old"}
    llm = load_settings(env=env, cwd=tmp_path).llm
    assert llm is not None and (llm.base_url, llm.api_key) == ("http://new/v1", SecretStr("sk-old"))


def test_no_model_keeps_the_llm_off(tmp_path: Path) -> None:
    assert load_settings(env={"PRDIGEST_LLM__TIMEOUT": "5"}, cwd=tmp_path).llm is None


def test_new_names_match_in_any_case(tmp_path: Path) -> None:
    assert load_settings(env={"prdigest_web__Port": "9003"}, cwd=tmp_path).web.port == 9003
    with pytest.raises(ConfigError, match="set twice, in different cases"):
        load_settings(env={"prdigest_web__port": "1", "PRDIGEST_WEB__PORT": "2"}, cwd=tmp_path)


def test_lists_come_as_json(tmp_path: Path) -> None:
    settings = load_settings(env={"PRDIGEST_ADMINS__LARK": '["ou_a", "ou_b"]'}, cwd=tmp_path)
    assert settings.admins.lark == ["ou_a", "ou_b"]
    with pytest.raises(
        ConfigError, match=r"^environment PRDIGEST_ADMINS__LARK: lists and tables are given as JSON"
    ):
        load_settings(env={"PRDIGEST_ADMINS__LARK": "ou_a"}, cwd=tmp_path)


# --- bad values name their variable -------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"PRDIGEST_WEB__PORT": "70000"},
            "environment PRDIGEST_WEB__PORT: web.port: Input should be less than or equal to 65535",
        ),
        (
            {"PRDIGEST_WEB_PORT": "eighty"},
            "environment PRDIGEST_WEB_PORT: web.port: Input should be a valid integer",
        ),
        (
            {"PRDIGEST_REPOS": '[{"name": "widgets"}]'},
            "environment PRDIGEST_REPOS: repos.0.name: 'widgets' is not OWNER/NAME",
        ),
        (
            {"PRDIGEST_LLM__MODEL": "m", "PRDIGEST_LLM__CONCURRENCY": "0"},
            "environment PRDIGEST_LLM__CONCURRENCY: llm.concurrency: Input should be greater than or equal",
        ),
        (
            {"PRDIGEST_WEB__PROT": "80"},
            "environment PRDIGEST_WEB__PROT: [web] has no setting 'prot' (it has host, port,",
        ),
        (
            {"PRDIGEST_WEB__PORT_FILE": "/run/port"},
            "environment PRDIGEST_WEB__PORT_FILE: [web] has no setting 'port_file'",
        ),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str, tmp_path: Path) -> None:
    (tmp_path / "prdigest.toml").write_text("[web]\nport = 8081\n")
    with pytest.raises(ConfigError) as info:
        load_settings(env=env, cwd=tmp_path)
    assert str(info.value).startswith(message)


def test_other_prdigest_variables_are_not_settings_and_pass(tmp_path: Path) -> None:
    env = {
        "PRDIGEST_ARTIFACTS": "/tmp/a",
        "PRDIGEST_NOTATABLE__KEY": "x",
        "PRDIGEST_DB": str(tmp_path / "a.db"),
    }
    assert load_settings(env=env, cwd=tmp_path).storage.db == tmp_path / "a.db"


# --- secrets files ----------------------------------------------------------------------------


def test_secret_file_errors_name_the_variable_and_the_path(tmp_path: Path) -> None:
    name = "PRDIGEST_LARK__APP_SECRET_FILE"
    missing = tmp_path / "missing"
    with pytest.raises(ConfigError, match=rf"^environment {name}: cannot read {missing}: No such file"):
        load_settings(env={name: str(missing)}, cwd=tmp_path)
    with pytest.raises(ConfigError, match=rf"^environment {name}: cannot read {tmp_path}: Is a directory"):
        load_settings(env={name: str(tmp_path)}, cwd=tmp_path)
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match=rf"^environment {name}: {tmp_path / 'empty'} is empty"):
        load_settings(env={name: str(tmp_path / "empty")}, cwd=tmp_path)
    (tmp_path / "binary").write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=rf"^environment {name}: {tmp_path / 'binary'} is not UTF-8 text"):
        load_settings(env={name: str(tmp_path / "binary")}, cwd=tmp_path)


@pytest.mark.parametrize("name", ["PRDIGEST_LARK__APP_SECRET", "PRDIGEST_LARK_APP_SECRET"])
def test_a_secret_and_its_file_together_are_refused(name: str, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("from-file")
    with pytest.raises(
        ConfigError, match=rf"^environment {name}_FILE: {name} is set too; set one of the two"
    ):
        load_settings(env={name: "from-env", f"{name}_FILE": str(tmp_path / "secret")}, cwd=tmp_path)
