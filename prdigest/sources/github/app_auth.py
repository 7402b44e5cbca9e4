"""GitHub App authentication: the installation on a repository's owner, and its installation token, one per
installation in the process, shared by every client and thread and renewed shortly before it expires.

The App signs a JWT with its private key (PyGithub's Auth.AppAuth) to find an owner's installation and to
ask for the installation's tokens (github.GithubIntegration); API requests then carry the token. PyGithub's
own Auth.AppInstallationAuth renews as well, but per client and without a lock: two threads would each ask
for a token, and every client of a sync would ask again. Like client.py, this module imports PyGithub only
when a request needs it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from prdigest.clock import machine_utc_now
from prdigest.config import GithubSettings
from prdigest.sources.github.errors import GitHubAuthError, GitHubError, GitHubUnavailable

if TYPE_CHECKING:
    from github import Auth, GithubException, GithubIntegration
    from urllib3 import Retry

# The key PRDIGEST_GITHUB__PRIVATE_KEY holds is often pasted with its line breaks written as "\n".
ESCAPED_NEWLINE = "\\n"


def private_key(github: GithubSettings) -> str:
    """The App's private key as PEM text; GitHubAuthError when it cannot be read or is not a PEM RSA key."""
    if github.private_key is not None:
        where = "PRDIGEST_GITHUB__PRIVATE_KEY"
        text = github.private_key.get_secret_value().replace(ESCAPED_NEWLINE, "\n")
    else:
        assert github.private_key_file is not None  # GithubSettings requires one of the two with app_id
        path = github.private_key_file.expanduser()
        where = f"the GitHub App's private key file {path}"
        try:
            text = path.read_text(encoding="ascii")
        except FileNotFoundError:
            raise GitHubAuthError(
                f"{where} does not exist: generate a private key on the App's settings page "
                "(a .pem file) and set [github] private_key_file to its path"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not text"
            raise GitHubAuthError(f"cannot read {where}: {reason}") from None
    if not _is_rsa_pem(text):
        raise GitHubAuthError(
            f"{where} is not a PEM RSA private key (the App's key, downloaded from its settings page, "
            "starts with -----BEGIN RSA PRIVATE KEY-----)"
        )
    return text


def _is_rsa_pem(text: str) -> bool:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):  # not PEM, encrypted, or of no known kind
        return False
    return isinstance(key, RSAPrivateKey)


@dataclass
class _Installation:
    id: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    granted: tuple[str, datetime] | None = None  # the current token, and when it expires


class GitHubApp:
    """One App on one GitHub host: its installations by owner and their tokens, for the whole process."""

    def __init__(self, url: str, app_id: int, key: str, *, timeout: int, retry: Retry | None):
        self.url = url
        self.app_id = app_id
        self._key = key
        self._timeout = timeout
        self._retry = retry
        self._lock = threading.Lock()  # guards the maps below and the lookups that fill them
        self._owners: dict[str, int] = {}  # lowercase owner -> installation id
        self._installations: dict[int, _Installation] = {}
        self._integration: GithubIntegration | None = None

    def token(self, owner: str | None, installation_id: int | None, renew_before: float) -> str:
        """The token of ``installation_id``, else of the installation on ``owner``; a new one when the
        current one expires within ``renew_before`` seconds. One request for a token however many
        threads ask at once."""
        installation = self._installation(owner, installation_id)
        with installation.lock:
            due = machine_utc_now() + timedelta(seconds=renew_before)
            if installation.granted is None or installation.granted[1] <= due:
                installation.granted = self._new_token(installation.id, owner)
            return installation.granted[0]

    def installation_id(self, owner: str | None, installation_id: int | None) -> int:
        """``installation_id``, else the id of the installation on ``owner`` (found once)."""
        return self._installation(owner, installation_id).id

    def forget(self, owner: str | None, installation_id: int | None) -> None:
        """GitHub rejected the current token (revoked): the next request asks for a new one."""
        installation = self._installation(owner, installation_id)
        with installation.lock:
            installation.granted = None

    def problems(self, owners: list[str]) -> list[str]:
        """What keeps the App from reading the owners' repositories: GitHub rejecting it (said once), an
        owner without its installation."""
        found: list[str] = []
        for owner in owners:
            try:
                self._installation(owner, None)
            except GitHubError as exc:
                found.append(str(exc))
        return list(dict.fromkeys(found))

    def _installation(self, owner: str | None, installation_id: int | None) -> _Installation:
        with self._lock:
            if installation_id is None:
                if owner is None:
                    raise GitHubAuthError(
                        f"GitHub App {self.app_id}: no repository owner to find an installation on; "
                        "set [github] installation_id"
                    )
                # An owner without the App is asked again next time: it may have been installed since.
                installation_id = self._owners.get(owner.lower()) or self._find(owner)
                self._owners[owner.lower()] = installation_id
            return self._installations.setdefault(installation_id, _Installation(installation_id))

    def _find(self, owner: str) -> int:
        """The id of the App's installation on ``owner``, an organization or a user."""
        from github import GithubException

        integration = self._client()
        for lookup in (integration.get_org_installation, integration.get_user_installation):
            try:
                return int(lookup(owner).id)
            except GithubException as exc:
                if exc.status != 404:
                    raise self._error(exc, f"finding its installation on {owner}") from None
            except OSError as exc:  # requests' errors: the connection failed
                raise self._unreachable(exc) from None
        raise GitHubAuthError(
            f"GitHub App {self.app_id} is not installed on {owner}: install it on {owner} at "
            f"{self._install_page()} or in {owner}'s settings (GitHub Apps), giving it the repositories"
        )

    def _new_token(self, installation_id: int, owner: str | None) -> tuple[str, datetime]:
        from github import GithubException

        on = f" on {owner}" if owner else ""
        try:
            granted = self._client().get_access_token(installation_id)
        except GithubException as exc:
            raise self._error(exc, f"renewing the token of its installation {installation_id}{on}") from None
        except OSError as exc:
            raise self._unreachable(exc) from None
        if granted.expires_at <= machine_utc_now():
            raise GitHubAuthError(
                f"GitHub gave GitHub App {self.app_id} a token for its installation {installation_id}{on} "
                f"that expired at {granted.expires_at:%Y-%m-%d %H:%M:%S} UTC: check this machine's clock"
            )
        return granted.token, granted.expires_at

    def _install_page(self) -> str:
        """Where the App is installed: its public page (GET /app), else the App's settings on the web."""
        try:
            return f"{self._client().get_app().html_url.rstrip('/')}/installations/new"
        except Exception:  # only a hint in another error's message: that error is the one to report
            return "the App's public page (https://github.com/apps/NAME)"

    def _client(self) -> GithubIntegration:
        from github import Auth, GithubIntegration

        if self._integration is None:
            self._integration = GithubIntegration(
                base_url=self.url,
                auth=Auth.AppAuth(self.app_id, self._key),
                timeout=self._timeout,
                retry=self._retry,
                seconds_between_requests=None,
                seconds_between_writes=None,
            )
        return self._integration

    def _error(self, exc: GithubException, doing: str) -> GitHubError:
        message = exc.message or (exc.data.get("message") if isinstance(exc.data, dict) else None) or ""
        if exc.status == 401:
            return GitHubAuthError(
                f"GitHub at {self.url} rejected GitHub App {self.app_id} "
                f"(401 {message or 'Bad credentials'}): check [github] app_id, that the private key is "
                "one of the App's current keys, and this machine's clock"
            )
        if exc.status >= 500:
            return GitHubUnavailable(
                f"GitHub at {self.url} answered {exc.status} to GitHub App {self.app_id} {doing}; "
                "try again later",
                overloaded=True,
            )
        return GitHubAuthError(f"GitHub refused GitHub App {self.app_id} {doing} ({exc.status} {message})")

    def _unreachable(self, exc: OSError) -> GitHubUnavailable:
        return GitHubUnavailable(
            f"cannot reach GitHub at {self.url} for GitHub App {self.app_id}: {type(exc).__name__}"
        )


_apps: dict[tuple[str, int, str], GitHubApp] = {}
_apps_lock = threading.Lock()


def github_app(github: GithubSettings, *, timeout: int, retry: Retry | None) -> GitHubApp:
    """The process's GitHubApp of the settings (their key read and checked now): one per host, App and key,
    whichever client asks, so that they share the installations' tokens."""
    assert github.app_id is not None
    key = private_key(github)
    url = github.url.rstrip("/")
    with _apps_lock:
        found = _apps.get((url, github.app_id, key))
        if found is None:
            found = _apps[url, github.app_id, key] = GitHubApp(
                url, github.app_id, key, timeout=timeout, retry=retry
            )
        return found


class InstallationAuth:
    """PyGithub's Auth for one client: the Authorization header carries the token of the installation on
    ``owner`` (or ``installation_id``), asked for when a request needs it."""

    token_type = "token"

    def __init__(self, app: GitHubApp, owner: str | None, installation_id: int | None, renew_before: float):
        self.app = app
        self.owner = owner
        self.installation_id = installation_id
        self.renew_before = renew_before

    @property
    def token(self) -> str:
        return self.app.token(self.owner, self.installation_id, self.renew_before)

    def authentication(self, headers: dict[str, str]) -> None:
        headers["Authorization"] = f"{self.token_type} {self.token}"

    def mask_authentication(self, headers: dict[str, str]) -> None:
        headers["Authorization"] = "token (installation token removed)"

    def installation(self) -> int:
        """The installation's id: its rate limit is its own, whichever client spends it."""
        return self.app.installation_id(self.owner, self.installation_id)

    def rejected(self) -> None:
        """GitHub answered 401 to the token (revoked): the next request asks for a new one."""
        self.app.forget(self.owner, self.installation_id)

    def for_pygithub(self) -> Auth.Auth:
        """This object as PyGithub's Github(auth=...) takes it. It asserts isinstance(auth, Auth); a virtual
        subclass keeps PyGithub's import out of this module's top."""
        from github import Auth

        Auth.Auth.register(InstallationAuth)
        assert isinstance(self, Auth.Auth)
        return self
