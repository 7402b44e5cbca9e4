"""A GitHub App on the local GitHub (fakes.github_api): the App's endpoints, checked as GitHub checks them.

A request of the App carries ``Authorization: Bearer <JWT>``: RS256, signed by the App's private key
(checked with its public key), ``iss`` the App's id, ``exp`` in the future and at most 10 minutes away;
401 otherwise. The App finds its installations (``GET /app/installations``, ``/orgs/{org}/installation``,
``/users/{user}/installation``, ``/repos/{owner}/{repo}/installation``) and asks for an installation's
token (``POST /app/installations/{id}/access_tokens``), which the API then accepts like a token until it
expires, ``token_ttl`` seconds later (a test shortens it).

    app = fake.add_app(FakeApp(APP_ID, private_key.public_key()))
    app.install("acme")
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

MAX_JWT_LIFETIME = 600  # seconds: GitHub refuses a JWT that expires later than this
CLOCK_LEEWAY = 60  # seconds of drift GitHub forgives an ``iat``

_INSTALLATION = re.compile(r"/(orgs|users)/([^/]+)/installation|/repos/([^/]+)/([^/]+)/installation")
_TOKENS = re.compile(r"/app/installations/(\d+)/access_tokens")


@dataclass
class FakeInstallation:
    id: int
    account: str
    kind: str = "Organization"  # or "User"


class FakeApp:
    def __init__(self, app_id: int, public_key: RSAPublicKey, *, slug: str = "prdigest-test", token_ttl=3600):
        self.app_id = app_id
        self.public_key = public_key
        self.slug = slug
        self.token_ttl = token_ttl  # seconds an installation token lasts (GitHub: an hour)
        self.installations: dict[str, FakeInstallation] = {}  # by lowercase account
        self.tokens: dict[str, tuple[int, float]] = {}  # token -> (installation id, when it expires)
        self._lock = threading.Lock()

    def install(self, account: str, kind: str = "Organization") -> FakeInstallation:
        installation = FakeInstallation(100 + len(self.installations), account, kind)
        self.installations[account.lower()] = installation
        return installation

    def accepts(self, token: str) -> bool:
        """Whether ``token`` is an installation token this App was given, not yet expired."""
        return self.installation_of(token) is not None

    def installation_of(self, token: str) -> int | None:
        """The id of the installation ``token`` was given to, while it has not expired: its requests
        spend that installation's budget."""
        with self._lock:
            issued = self.tokens.get(token)
        return issued[0] if issued is not None and time.time() < issued[1] else None

    def handle(
        self, method: str, path: str, authorization: str, repos: set[str], base: str
    ) -> tuple[int, Any] | None:
        """(status, JSON body) for an App endpoint; None for any other path."""
        installation = _INSTALLATION.fullmatch(path)
        tokens = _TOKENS.fullmatch(path)
        if not (path == "/app" or path.startswith("/app/") or installation):
            return None
        refused = self._refuses(authorization)
        if refused:
            return 401, {"message": refused, "documentation_url": "https://docs.github.com/rest"}
        if method == "GET" and path == "/app":
            html = f"https://github.com/apps/{self.slug}"
            return 200, {"id": self.app_id, "slug": self.slug, "name": self.slug, "html_url": html}
        if method == "GET" and path == "/app/installations":
            return 200, [self._json(i, base) for i in self.installations.values()]
        if method == "GET" and installation:
            kind, account, owner, repo = installation.groups()
            found = self.installations.get((account or owner).lower())
            wanted = {"orgs": "Organization", "users": "User"}.get(kind)
            if found and (found.kind == wanted if wanted else f"{owner}/{repo}" in repos):
                return 200, self._json(found, base)
        if method == "POST" and tokens:
            found = next((i for i in self.installations.values() if i.id == int(tokens.group(1))), None)
            if found is not None:
                return 201, self._grant(found)
        return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}

    def _refuses(self, authorization: str) -> str | None:
        """Why GitHub would refuse the App's JWT; None when it accepts it."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "A JSON web token could not be decoded"
        try:
            claims = jwt.decode(
                token, self.public_key, algorithms=["RS256"], options={"require": ["exp", "iat", "iss"]}
            )
        except jwt.ExpiredSignatureError:
            return "'Expiration time' claim ('exp') must be a numeric value representing the future time"
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        now = time.time()
        if str(claims["iss"]) != str(self.app_id):
            return "Integration not found"
        if claims["exp"] > now + MAX_JWT_LIFETIME + CLOCK_LEEWAY or claims["iat"] > now + CLOCK_LEEWAY:
            return "'Expiration time' claim ('exp') is too far in the future"
        return None

    def _grant(self, installation: FakeInstallation) -> dict[str, Any]:
        token = "ghs_" + secrets.token_hex(18)
        expires = int(time.time()) + self.token_ttl
        with self._lock:
            self.tokens[token] = (installation.id, expires)
        when = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "token": token,
            "expires_at": when,
            "permissions": {"contents": "read", "pull_requests": "read"},
        }

    def _json(self, installation: FakeInstallation, base: str) -> dict[str, Any]:
        return {
            "id": installation.id,
            "app_id": self.app_id,
            "app_slug": self.slug,
            "target_type": installation.kind,
            "account": {"login": installation.account, "id": installation.id * 7, "type": installation.kind},
            "repository_selection": "all",
            "access_tokens_url": f"{base}/app/installations/{installation.id}/access_tokens",
            "html_url": f"https://github.com/settings/installations/{installation.id}",
        }
