"""GitHub App authentication through the real PyGithub against the fake GitHub's App endpoints: the
installation found per owner, its token shared by every client and thread and renewed before it expires,
and one clear message for each way it fails."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo, iter_prs
from fakes.github_app import FakeApp

from prdigest.config import GithubSettings, load_settings
from prdigest.errors import ConfigError
from prdigest.models import Window
from prdigest.redact import secrets_of
from prdigest.sources.github.source import (
    ClientOptions,
    GitHubAuthError,
    GitHubClient,
    GitHubSource,
    make_client,
)
from prdigest.sources.github.sync import sync
from prdigest.storage import Store

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")
REPO = "acme/rocket"
APP_ID = 4242
TOKENS = "POST /app/installations/100/access_tokens"  # the first installation's token requests
FAST = ClientOptions(timeout=3, retries=0, backoff=0, max_wait=0, secondary_wait=0)


def pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    """The key as GitHub hands an App's key out: PEM, unencrypted."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def key_file(key: rsa.RSAPrivateKey, tmp_path: Path) -> Path:
    path = tmp_path / "app.pem"
    path.write_text(pem(key), encoding="ascii")
    return path


@pytest.fixture
def fake(key: rsa.RSAPrivateKey) -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo(FakeRepo(REPO)).generate(12, WEEK.start, WEEK.end, seed=4)
        server.add_repo(FakeRepo("solo/tool"))
        server.add_app(FakeApp(APP_ID, key.public_key())).install("acme")
        yield server


@pytest.fixture
def app(fake: FakeGitHub) -> FakeApp:
    assert fake.app is not None
    return fake.app


@pytest.fixture
def settings(fake: FakeGitHub, key_file: Path) -> GithubSettings:
    return GithubSettings(url=fake.url, app_id=APP_ID, private_key_file=key_file)


def renewing_client(settings: GithubSettings) -> GitHubClient:
    """A client that renews a token 2 s before it expires (the fake's live a few seconds)."""
    return make_client(
        settings, ClientOptions(timeout=3, retries=0, backoff=0, token_renewal=2), owner="acme"
    )


def read(client: GitHubClient, number: int = 1) -> None:
    assert client.fetch_pr(REPO, number) is not None


def test_a_sync_signs_in_as_the_owners_installation(
    fake: FakeGitHub, app: FakeApp, settings: GithubSettings, store: Store
) -> None:
    result = sync(store, GitHubSource(make_client(settings, FAST, owner="acme"), REPO), WEEK)

    assert result.fetched == [pr.number for pr in iter_prs(fake.repos[REPO], WEEK.start, WEEK.end)]
    assert len(result.fetched) == 12
    # One lookup and one token for every request of the sync, which the API took as the App's.
    assert fake.counts["GET /orgs/acme/installation"] == 1 and fake.counts[TOKENS] == 1
    assert len(app.tokens) == 1 and fake.counts["POST /graphql"] >= 2


def test_the_settings_come_from_the_environment(
    fake: FakeGitHub, key: rsa.RSAPrivateKey, key_file: Path
) -> None:
    env = {"PRDIGEST_GITHUB__URL": fake.url, "PRDIGEST_GITHUB__APP_ID": str(APP_ID)}
    from_file = load_settings(env={**env, "PRDIGEST_GITHUB__PRIVATE_KEY_FILE": str(key_file)}).github
    # The _FILE form of the key is the private_key_file setting, not a second copy of the key.
    assert from_file.private_key_file == key_file and from_file.private_key is None
    read(make_client(from_file, FAST, owner="acme"))

    # Pasted into one line, its line breaks written as \n: still the key, and a secret to mask.
    one_line = pem(key).replace("\n", "\\n")
    settings = load_settings(env={**env, "PRDIGEST_GITHUB__PRIVATE_KEY": one_line})
    assert one_line in secrets_of(settings)
    read(make_client(settings, FAST, owner="acme"))
    assert fake.counts[TOKENS] == 1  # the same App and key: the same token


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"app_id": APP_ID}, "app_id 4242 needs the App's private key: private_key_file = PATH"),
        ({"private_key_file": "k.pem"}, "private_key_file belong to a GitHub App: set app_id too"),
        ({"installation_id": 3}, "installation_id belong to a GitHub App: set app_id too"),
        (
            {"app_id": 1, "private_key_file": "k.pem", "private_key": "x"},
            "private_key_file and private_key are both",
        ),
    ],
)
def test_incomplete_app_settings_are_refused(table: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GithubSettings.model_validate(table)


def test_a_key_in_the_config_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text('[github]\napp_id = 7\nprivate_key = "-----BEGIN RSA PRIVATE KEY-----"\n')
    with pytest.raises(ConfigError, match=r"prdigest.toml:3: github.private_key is a secret"):
        load_settings(config, env={})


def test_the_token_is_renewed_once_before_it_expires(
    fake: FakeGitHub, app: FakeApp, settings: GithubSettings
) -> None:
    # 6 s, less the fake's rounding to whole seconds: renewal is due 3-4 s after it was granted, with
    # room for a loaded machine on both sides.
    app.token_ttl = 6
    client = renewing_client(settings)
    read(client)
    read(client, 2)
    assert fake.counts[TOKENS] == 1
    first = next(iter(app.tokens))

    time.sleep(4.5)  # within 2 s of its expiry: renewed before the next request
    read(client, 3)
    read(client, 4)
    assert fake.counts[TOKENS] == 2 and len(app.tokens) == 2
    time.sleep(2)
    assert not app.accepts(first)  # GitHub takes a token until it expires, and the client no longer sends it
    read(client, 5)
    assert fake.counts[TOKENS] == 2


def test_threads_share_one_token(fake: FakeGitHub, app: FakeApp, settings: GithubSettings) -> None:
    fake.latency = 0.3  # a slow GitHub: the second thread asks while the first waits for the token
    clients = [make_client(settings, FAST, owner="acme") for _ in range(2)]
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def work(client: GitHubClient) -> None:
        start.wait()
        try:
            read(client)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert failures == []
    assert fake.counts[TOKENS] == 1 and fake.counts["GET /orgs/acme/installation"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "private key file .* does not exist: generate a private key on the App's settings page"),
        ("not a key\n", "is not a PEM RSA private key"),
        ("ec", "is not a PEM RSA private key"),
    ],
)
def test_an_unusable_key_is_one_clear_error(
    settings: GithubSettings, tmp_path: Path, content, message
) -> None:
    path = tmp_path / "bad.pem"
    if content == "ec":
        content = pem(ec.generate_private_key(ec.SECP256R1()))
    if content is not None:
        path.write_text(content)
    with pytest.raises(GitHubAuthError, match=message):
        make_client(settings.model_copy(update={"private_key_file": path}), FAST, owner="acme")


def test_an_unreadable_key_file_is_one_clear_error(settings: GithubSettings, tmp_path: Path) -> None:
    folder = tmp_path / "keys"  # unreadable as a file, even by root
    folder.mkdir()
    with pytest.raises(
        GitHubAuthError, match=r"^cannot read the GitHub App's private key file .*keys: Is a dir"
    ):
        make_client(settings.model_copy(update={"private_key_file": folder}), FAST, owner="acme")


def test_an_owner_without_the_installation_is_one_clear_error(
    fake: FakeGitHub, settings: GithubSettings
) -> None:
    client = make_client(settings, FAST, owner="solo")
    with pytest.raises(GitHubAuthError) as raised:
        client.fetch_pr("solo/tool", 1)
    assert str(raised.value) == (
        "GitHub App 4242 is not installed on solo: install it on solo at "
        "https://github.com/apps/prdigest-test/installations/new or in solo's settings (GitHub Apps), "
        "giving it the repositories"
    )
    # An organization, then a user: GitHub has one lookup for each.
    assert (
        fake.counts["GET /orgs/solo/installation"] == 1 and fake.counts["GET /users/solo/installation"] == 1
    )
    assert fake.counts["POST /graphql"] == 0


def test_a_users_installation_is_found(fake: FakeGitHub, app: FakeApp, settings: GithubSettings) -> None:
    app.install("solo", kind="User")
    fake.repos["solo/tool"].generate(1, WEEK.start, WEEK.end)
    read_solo = make_client(settings, FAST, owner="solo").fetch_pr("solo/tool", 1)
    assert read_solo is not None and fake.counts["POST /app/installations/101/access_tokens"] == 1


def test_an_app_github_rejects_is_one_clear_error(fake: FakeGitHub, tmp_path: Path) -> None:
    other = tmp_path / "other.pem"
    other.write_text(pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    client = make_client(
        GithubSettings(url=fake.url, app_id=APP_ID, private_key_file=other), FAST, owner="acme"
    )
    with pytest.raises(
        GitHubAuthError, match=r"rejected GitHub App 4242 \(401 A JSON web token could not be"
    ):
        read(client)


def test_a_failed_renewal_is_one_clear_error(
    fake: FakeGitHub, app: FakeApp, settings: GithubSettings
) -> None:
    app.token_ttl = 2
    client = renewing_client(settings)
    read(client)
    app.installations.clear()  # uninstalled since
    time.sleep(1.1)
    with pytest.raises(
        GitHubAuthError, match=r"refused GitHub App 4242 renewing the token of its installation 100"
    ):
        read(client, 2)


def test_a_token_still_works_and_the_app_wins_over_it(fake: FakeGitHub, settings: GithubSettings) -> None:
    read(make_client(GithubSettings(url=fake.url, token=TOKEN), FAST, owner="acme"))
    assert set(fake.counts) == {"POST /graphql"}  # the token alone: no App request

    both = settings.model_copy(update={"token": "ghp_not_used"})
    read(make_client(both, FAST, owner="acme"))
    assert fake.counts[TOKENS] == 1


@pytest.mark.parametrize(
    ("claims", "signer"),
    [
        ({"iss": str(APP_ID), "exp": 3600}, "app"),  # expires too late
        ({"iss": str(APP_ID), "exp": -10}, "app"),  # expired
        ({"iss": "99", "exp": 300}, "app"),  # another App
        ({"iss": str(APP_ID), "exp": 300}, "stranger"),  # signed by another key
    ],
)
def test_the_fake_refuses_the_jwts_github_refuses(
    fake: FakeGitHub, key: rsa.RSAPrivateKey, claims: dict[str, object], signer: str
) -> None:
    now = int(time.time())
    signing = key if signer == "app" else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    payload = {**claims, "iat": now - 60, "exp": now + int(claims["exp"])}
    token = jwt.encode(payload, signing, algorithm="RS256")
    request = urllib.request.Request(
        f"{fake.url}/app/installations", headers={"Authorization": f"Bearer {token}"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 401
    good = jwt.encode({**payload, "iss": str(APP_ID), "exp": now + 300}, key, algorithm="RS256")
    request.add_header("Authorization", f"Bearer {good}")
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 200 and b'"login": "acme"' in answer.read()


def test_the_cli_and_config_check_say_the_apps_problems(
    fake: FakeGitHub, key_file: Path, tmp_path: Path
) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text('[[repos]]\nname = "acme/rocket"\n\n[[repos]]\nname = "solo/tool"\n')
    env = {
        **os.environ,
        "PRDIGEST_GITHUB__URL": fake.url,
        "PRDIGEST_GITHUB__APP_ID": str(APP_ID),
        "PRDIGEST_GITHUB__PRIVATE_KEY_FILE": str(key_file),
        "PRDIGEST_CONFIG": str(config),
    }

    def prdigest(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "prdigest.cli", *args], capture_output=True, text=True, timeout=60,
            env={**env, **extra}, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    synced = prdigest("sync", "--repo", REPO, "--week", "2026-W37")
    assert synced.returncode == 0 and "12 fetched" in synced.stdout, synced.stderr

    lonely = prdigest("sync", "--repo", "solo/tool", "--week", "2026-W37")
    assert lonely.returncode == 1 and "Traceback" not in lonely.stderr
    assert (
        lonely.stderr.strip().count("\n") == 0 and "GitHub App 4242 is not installed on solo" in lonely.stderr
    )

    checked = prdigest("config", "check", GITHUB_TOKEN="ghp_not_used")
    assert checked.returncode == 1
    problems = [line for line in checked.stderr.splitlines() if line.startswith("problem:")]
    assert len(problems) == 1 and "GitHub App 4242 is not installed on solo" in problems[0]
    assert "github app 4242 (the App wins: the token set too is not used)" in checked.stdout

    missing = prdigest("config", "check", PRDIGEST_GITHUB__PRIVATE_KEY_FILE=str(tmp_path / "gone.pem"))
    assert missing.returncode == 1 and "problem: github: the GitHub App's private key file" in missing.stderr
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr
