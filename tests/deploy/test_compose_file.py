"""deploy/compose.yaml without a Docker engine: valid against the Compose Specification's schema (vendored
in tests/data/compose-spec.json, so CI needs no network), and saying what the replicas need: workers that
run `prdigest worker`, a serve without the scheduler, both waiting for a healthy PostgreSQL, and the
database's password only ever in a secret file."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from prdigest.cli.commands import cli
from prdigest.config.env import env_settings
from prdigest.config.storage_url import parse_store_url

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
SCHEMA = ROOT / "tests" / "data" / "compose-spec.json"
PRDIGEST_SERVICES = ("worker", "serve")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))  # merge keys (<<: *prdigest) resolved
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def environment(service: dict[str, Any]) -> dict[str, str | None]:
    """A service's environment as a mapping, from either of compose's two forms."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        return {name: value for name, _, value in (item.partition("=") for item in env)}
    return {name: None if value is None else str(value) for name, value in env.items()}


def secret_path(compose: dict[str, Any], service: dict[str, Any], variable: str) -> str:
    """The /run/secrets/NAME a *_FILE variable names, checked to be a secret the service mounts."""
    path = environment(service)[variable]
    assert path is not None and path.startswith("/run/secrets/"), (variable, path)
    name = path.removeprefix("/run/secrets/")
    mounted = {s if isinstance(s, str) else s.get("target", s["source"]) for s in service["secrets"]}
    assert name in mounted, f"{variable} names {path}, but the service mounts {sorted(mounted)}"
    assert name in compose["secrets"], f"no top-level secret {name!r}"
    return name


# --- the schema -----------------------------------------------------------------------------------


def test_the_vendored_schema_is_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == "compose_spec.json"
    assert "draft-07" in schema["$schema"]
    assert "Apache License 2.0" in schema["$comment"]  # where it came from, and its licence


def test_the_compose_file_is_valid_against_the_schema(
    compose: dict[str, Any], validator: jsonschema.Draft7Validator
) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(compose)]
    assert errors == []


@pytest.mark.parametrize(
    "breakage",
    [
        # A condition compose has no name for: the service would start before the database is up.
        lambda c: c["services"]["worker"]["depends_on"]["postgres"].update(condition="service_ready"),
        # A key misspelt: compose would ignore it and run one worker.
        lambda c: c["services"]["worker"]["deploy"].update(replica=2),
        # `restart: yes` unquoted is YAML's true, not a restart policy.
        lambda c: c["services"]["serve"].update(restart=True),
    ],
    ids=["depends_on-condition", "deploy-replica-typo", "restart-a-boolean"],
)
def test_a_broken_copy_is_rejected_by_the_schema(
    compose: dict[str, Any], validator: jsonschema.Draft7Validator, breakage: Any
) -> None:
    broken = copy.deepcopy(compose)
    breakage(broken)
    assert not validator.is_valid(broken)


# --- what the replicas need -----------------------------------------------------------------------


def test_two_workers_run_the_deliveries_and_serve_runs_without_the_scheduler(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["worker"]["command"] == ["prdigest", "worker"]
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert "container_name" not in services["worker"]  # a fixed name allows one container, not replicas
    assert services["serve"]["command"] == ["prdigest", "serve", "--no-scheduler"]
    # The web port of the image (PRDIGEST_WEB_PORT=8080) is published.
    published = [str(p).rsplit(":", 1)[-1] for p in services["serve"]["ports"]]
    assert "8080" in published
    for name in ("postgres", *PRDIGEST_SERVICES):
        assert services[name]["restart"] in ("always", "unless-stopped", "on-failure"), name


def test_the_commands_the_file_runs_exist_in_the_cli(compose: dict[str, Any]) -> None:
    commands = cli.commands
    assert "worker" in commands, "compose.yaml runs `prdigest worker`, which the CLI does not have"
    serve_options = {opt for param in commands["serve"].params for opt in param.opts}
    assert "--no-scheduler" in serve_options, "compose.yaml runs `prdigest serve --no-scheduler`"


def test_worker_and_serve_wait_for_a_healthy_postgres(compose: dict[str, Any]) -> None:
    services = compose["services"]
    test = services["postgres"]["healthcheck"]["test"]
    assert "pg_isready" in (test if isinstance(test, str) else " ".join(test))
    assert services["postgres"]["image"].startswith("postgres:15")
    assert any(str(v).startswith("pgdata:") for v in services["postgres"]["volumes"])
    assert "pgdata" in compose["volumes"]
    for name in PRDIGEST_SERVICES:
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy", name


def test_the_storage_url_names_the_postgres_service_and_holds_no_password(compose: dict[str, Any]) -> None:
    services = compose["services"]
    database = environment(services["postgres"])
    for name in PRDIGEST_SERVICES:
        env = environment(services[name])
        url = env["PRDIGEST_STORAGE__URL"]
        assert url is not None
        store = parse_store_url(url)  # prdigest's own parser refuses a URL with a password in it
        assert store.kind == "postgresql"
        assert (store.host, store.port) == ("postgres", 5432)
        assert (store.user, store.database) == (database["POSTGRES_USER"], database["POSTGRES_DB"])
        # The password comes from the same secret file the database was created with.
        assert secret_path(compose, services[name], "PRDIGEST_STORAGE__PASSWORD_FILE") == secret_path(
            compose, services["postgres"], "POSTGRES_PASSWORD_FILE"
        )
        assert "PRDIGEST_STORAGE__PASSWORD" not in env


def test_no_secret_is_written_in_the_file(compose: dict[str, Any]) -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    # No password set inline, in any form compose reads (KEY: value, KEY=value).
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        found = re.search(r"([A-Z0-9_]*(PASSWORD|SECRET|TOKEN|KEY)[A-Z0-9_]*)\s*[:=]\s*(\S+)", code)
        if found:
            name, _, value = found.groups()
            assert name.endswith("_FILE") and value.startswith("/run/secrets/"), line
    assert "POSTGRES_PASSWORD" not in environment(compose["services"]["postgres"])
    # Every secret setting of prdigest is passed through from the environment (a name with no value),
    # or read from a mounted file.
    secrets = {name for s in env_settings() if s.secret for name in s.names}
    for service in PRDIGEST_SERVICES:
        for name, value in environment(compose["services"][service]).items():
            if name in secrets:
                assert value is None, f"{service}: {name} has a value written in compose.yaml"
    for secret in compose["secrets"].values():
        assert set(secret) <= {"file", "environment", "external", "name"}, secret  # no inline content


def test_every_prdigest_variable_is_one_prdigest_reads(compose: dict[str, Any]) -> None:
    """A misspelt name would be refused at start (or, for an alias, silently ignored)."""
    known = {"PRDIGEST_CONFIG"}
    for setting in env_settings():
        known |= set(setting.names)
        if setting.secret:
            known |= {name + "_FILE" for name in setting.names}
    for service in PRDIGEST_SERVICES:
        env = environment(compose["services"][service])
        unknown = sorted(
            n for n in env if (n.startswith("PRDIGEST_") or n == "GITHUB_TOKEN") and n not in known
        )
        assert unknown == [], service
        assert env["PRDIGEST_CONFIG"] == "/etc/prdigest/prdigest.toml"
        targets = [c.get("target") for c in compose["services"][service]["configs"]]
        assert env["PRDIGEST_CONFIG"] in targets, service
