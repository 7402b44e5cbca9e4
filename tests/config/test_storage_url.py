"""[storage] url: sqlite:///PATH (the same as db) or postgresql://USER@HOST:PORT/DB; its password never in
the URL nor the file; an unknown scheme is one error with its line; url wins over db, --db, PRDIGEST_DB;
`config check` says which store; a PostgreSQL store is refused at startup, clearly, in this version."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from prdigest.config import DEFAULT_DB, load_settings
from prdigest.config.storage_url import StoreUrl, parse_store_url
from prdigest.errors import ConfigError

PG = "postgresql://prdigest@db.example.com:5433/digest"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prdigest.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_without_url_the_store_is_the_sqlite_file_db(tmp_path: Path) -> None:
    settings = load_settings(env={}, cwd=tmp_path)
    assert settings.storage.url is None
    assert settings.storage.store == StoreUrl("sqlite", path=DEFAULT_DB.expanduser())
    other = load_settings(env={"PRDIGEST_DB": str(tmp_path / "a.db")}, cwd=tmp_path)
    assert other.storage.store.describe() == f"sqlite {tmp_path / 'a.db'}"


def test_a_sqlite_url_is_the_file_and_wins_over_db_env_and_command_line(tmp_path: Path) -> None:
    path = write(tmp_path, f'[storage]\ndb = "/srv/old.db"\nurl = "sqlite://{tmp_path}/new.db"\n')
    env = {"PRDIGEST_DB": str(tmp_path / "env.db")}
    settings = load_settings(path, env=env, overrides={("storage", "db"): str(tmp_path / "cli.db")})
    assert settings.storage.db == tmp_path / "new.db"
    assert settings.storage.store == StoreUrl("sqlite", path=tmp_path / "new.db")
    from_env = load_settings(env={**env, "PRDIGEST_STORAGE__URL": "sqlite:///~/x%20y.db"}, cwd=tmp_path)
    assert from_env.storage.db == Path("~/x y.db").expanduser()


def test_a_postgresql_url_names_user_host_port_and_database(tmp_path: Path) -> None:
    settings = load_settings(env={"PRDIGEST_STORAGE__URL": PG}, cwd=tmp_path)
    store = settings.storage.store
    assert store == StoreUrl("postgresql", None, "prdigest", "db.example.com", 5433, "digest")
    assert store.describe() == "postgresql prdigest@db.example.com:5433/digest"
    assert store.connect_kwargs(None) == {
        "user": "prdigest", "host": "db.example.com", "port": 5433, "dbname": "digest",
    }  # fmt: skip  # no password: libpq reads PGPASSWORD or ~/.pgpass itself
    assert parse_store_url("postgres://h/d?sslmode=require").connect_kwargs(None) == {
        "host": "h", "dbname": "d", "sslmode": "require",
    }  # fmt: skip
    assert parse_store_url("postgresql:///d").describe() == "postgresql (local socket)/d"


def test_the_password_comes_from_its_variable_or_file(tmp_path: Path) -> None:
    env = {"PRDIGEST_STORAGE__URL": PG, "PRDIGEST_STORAGE__PASSWORD": "pg-s3cret"}
    storage = load_settings(env=env, cwd=tmp_path).storage
    assert storage.password == SecretStr("pg-s3cret")
    assert storage.store.connect_kwargs(storage.password)["password"] == "pg-s3cret"
    secret = tmp_path / "pg-password"
    secret.write_text("from-file\n")
    env = {"PRDIGEST_STORAGE__URL": PG, "PRDIGEST_STORAGE__PASSWORD_FILE": str(secret)}
    assert load_settings(env=env, cwd=tmp_path).storage.password == SecretStr("from-file")


@pytest.mark.parametrize(
    "url", ["postgresql://prdigest:hunter2pw@db:5432/digest", "postgresql://db/digest?password=hunter2pw"]
)
def test_a_password_in_the_url_is_refused_and_not_repeated(tmp_path: Path, url: str) -> None:
    path = write(tmp_path, f'[report]\nlanguage = "en"\n\n[storage]\nurl = "{url}"\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(path, env={}, cwd=tmp_path)
    message = str(refused.value)
    assert message.startswith(f"{path}:5: storage.url: the URL holds a password")
    assert "PRDIGEST_STORAGE__PASSWORD" in message and "PGPASSWORD" in message
    assert "hunter2pw" not in message
    with pytest.raises(ConfigError, match=r"^environment PRDIGEST_STORAGE__URL: storage.url: the URL holds"):
        load_settings(env={"PRDIGEST_STORAGE__URL": url}, cwd=tmp_path)


def test_a_password_in_the_config_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, f'[storage]\nurl = "{PG}"\npassword = "pw"\n')
    with pytest.raises(ConfigError, match=r"prdigest.toml:3: storage.password is a secret; .*_FILE"):
        load_settings(path, env={}, cwd=tmp_path)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://db/digest", "unknown scheme 'mysql'; give sqlite:///PATH or postgresql://HOST:PORT/"),
        ("/srv/prdigest.db", "no scheme; give sqlite:///PATH"),
        ("sqlite://srv/prdigest.db", "a SQLite URL is sqlite:/// and the file's absolute path"),
        ("sqlite:///srv/prdigest.db?mode=ro", "a SQLite URL is sqlite:///"),
        ("postgresql://db:port/digest", "the port is not a number"),
        ("postgresql://db/digest/more", "a PostgreSQL URL is postgresql://HOST:PORT/DATABASE (with USER@"),
    ],
)
def test_a_wrong_url_is_one_error_naming_its_line_and_key(tmp_path: Path, url: str, said: str) -> None:
    path = write(tmp_path, f'[storage]\n# where the cache is\nurl = "{url}"\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(path, env={}, cwd=tmp_path)
    assert str(refused.value).startswith(f"{path}:3: storage.url: {said}")
    assert "\n" not in str(refused.value) and "REDACTED" not in str(refused.value)


def test_config_check_says_which_store_and_an_unreachable_postgresql_is_one_clear_error(
    tmp_path: Path, run_cli
) -> None:
    sqlite = run_cli("config", "check", env={"PRDIGEST_STORAGE__URL": f"sqlite://{tmp_path}/url.db"})
    assert sqlite.returncode == 0, sqlite.stderr
    assert f"cache: sqlite {tmp_path / 'url.db'}\n" in sqlite.stdout
    opened = run_cli("subscriptions", env={"PRDIGEST_STORAGE__URL": f"sqlite://{tmp_path}/url.db"})
    assert opened.returncode == 0, opened.stderr
    assert (tmp_path / "url.db").exists()  # the url's file, not PRDIGEST_DB's

    env = {"PRDIGEST_STORAGE__URL": PG}
    checked = run_cli("config", "check", env=env)
    assert checked.returncode == 0, checked.stderr
    assert "cache: postgresql prdigest@db.example.com:5433/digest\n" in checked.stdout
    refused = run_cli("subscriptions", env=env)  # no such host here: the name does not resolve
    assert refused.returncode == 1
    said = refused.stderr.strip()
    assert said.startswith(
        "Error: cannot open the database postgresql prdigest@db.example.com:5433/digest: "
    ), said
    assert "\n" not in said and "Traceback" not in said


def test_the_connection_keywords_reach_a_real_server(postgres_url: str) -> None:
    psycopg = pytest.importorskip("psycopg")
    store = parse_store_url(postgres_url)
    with psycopg.connect(**store.connect_kwargs(None), connect_timeout=10) as conn:
        assert conn.execute("SELECT current_user, current_database()").fetchone() == ("postgres", "postgres")
