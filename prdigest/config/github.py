"""[github]: the API's URL, and how prdigest signs in: a token, or a GitHub App.

A GitHub App (``app_id`` and its private key) wins over a token: when both are set (a GITHUB_TOKEN left in a
shell), the App's installation tokens are used and the token is not. The key is a secret: from
PRDIGEST_GITHUB__PRIVATE_KEY, or a PEM file named by ``private_key_file`` (PRDIGEST_GITHUB__PRIVATE_KEY_FILE).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, model_validator

from prdigest.redact import no_credentials

KEY_HINT = "private_key_file = PATH of the App's .pem, or PRDIGEST_GITHUB__PRIVATE_KEY"
# GitHub asks clients to avoid concurrent requests (its secondary limits stop about 100 at once): a few
# in flight keep a team's syncs moving without tripping them.
MAX_IN_FLIGHT = 8


class GithubSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: Annotated[str, AfterValidator(no_credentials)] = "https://api.github.com"
    token: SecretStr | None = None
    # A GitHub App: its id, its private key (one of the two), and the installation to use (None: the one
    # on each repository's owner).
    app_id: int | None = Field(default=None, ge=1)
    private_key_file: Path | None = None
    private_key: SecretStr | None = None
    installation_id: int | None = Field(default=None, ge=1)
    # Requests in flight at once per token or App installation, over every client and thread of the process.
    max_in_flight: int = Field(default=MAX_IN_FLIGHT, ge=1, le=100)

    @model_validator(mode="after")
    def _app_complete(self) -> GithubSettings:
        keys = [name for name in ("private_key_file", "private_key") if getattr(self, name) is not None]
        if self.app_id is None:
            orphans = [*keys, *(["installation_id"] if self.installation_id is not None else [])]
            if orphans:
                raise ValueError(f"{' and '.join(orphans)} belong to a GitHub App: set app_id too")
        elif not keys:
            raise ValueError(f"app_id {self.app_id} needs the App's private key: {KEY_HINT}")
        elif len(keys) == 2:
            raise ValueError("private_key_file and private_key are both set: keep one")
        return self

    @property
    def authenticated(self) -> bool:
        """Whether prdigest can sign in: a GitHub App, or a token."""
        return self.app_id is not None or self.token is not None

    @property
    def web_url(self) -> str:
        """Where the API's repositories are shown: github.com for api.github.com, a GitHub Enterprise
        server's root for its ``https://host/api/v3``."""
        parts = urlsplit(self.url)
        if parts.hostname == "api.github.com":
            return "https://github.com"
        return f"{parts.scheme}://{parts.netloc}{parts.path.split('/api/', 1)[0].rstrip('/')}"
