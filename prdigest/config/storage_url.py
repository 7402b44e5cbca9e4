"""[storage]: where the cache is. ``db``, a SQLite file (the default), or ``url``: ``sqlite:///PATH`` (the
same as ``db``) or ``postgresql://USER@HOST:PORT/DATABASE``, the shared store of several machines.

A password never goes in the URL: it comes from PRDIGEST_STORAGE__PASSWORD (or its _FILE), else libpq
reads PGPASSWORD (or ~/.pgpass) itself. ``url`` wins over ``db`` (and --db, PRDIGEST_DB) when both are set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from prdigest.redact import CREDENTIAL_PARAMS

DEFAULT_DB = Path("~/.local/share/prdigest/prdigest.db")
SCHEMES: dict[str, Literal["sqlite", "postgresql"]] = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
}
SQLITE_EXAMPLE = "sqlite:///var/lib/prdigest/prdigest.db"
# Not USER@HOST after the scheme: error messages are redacted, and that is the shape of credentials.
SHAPES = "sqlite:///PATH or postgresql://HOST:PORT/DATABASE (with USER@ before HOST)"
PASSWORD_FROM = "PRDIGEST_STORAGE__PASSWORD (or PRDIGEST_STORAGE__PASSWORD_FILE) or libpq's PGPASSWORD"


@dataclass(frozen=True)
class StoreUrl:
    """A parsed [storage] url (or ``db``): which store, and where."""

    kind: Literal["sqlite", "postgresql"]
    path: Path | None = None  # SQLite's file
    user: str | None = None
    host: str | None = None
    port: int | None = None
    database: str | None = None
    params: tuple[tuple[str, str], ...] = ()  # libpq's own (sslmode=…)

    def describe(self) -> str:
        """What `config check` says: "sqlite /path" or "postgresql user@host:port/db" (no password)."""
        if self.kind == "sqlite":
            return f"sqlite {self.path}"
        where = (f"{self.user}@" if self.user else "") + (self.host or "(local socket)")
        return f"postgresql {where}{f':{self.port}' if self.port else ''}/{self.database or ''}".rstrip("/")

    def connect_kwargs(self, password: SecretStr | None) -> dict[str, Any]:
        """psycopg.connect()'s keywords; without a password libpq falls back to PGPASSWORD, ~/.pgpass."""
        found = {"user": self.user, "host": self.host, "port": self.port, "dbname": self.database}
        kwargs: dict[str, Any] = {k: v for k, v in found.items() if v is not None}
        kwargs.update(self.params)
        if password is not None:
            kwargs["password"] = password.get_secret_value()
        return kwargs


def parse_store_url(url: str) -> StoreUrl:
    """The store a [storage] url names; ValueError says what is wrong (never quoting a password)."""
    split = urlsplit(url.strip())
    kind = SCHEMES.get(split.scheme.lower())
    if kind is None:
        said = f"unknown scheme {split.scheme!r}" if split.scheme else "no scheme"
        raise ValueError(f"{said}; give {SHAPES}")
    if kind == "sqlite":
        if split.netloc or not split.path.startswith("/") or split.query or split.fragment:
            raise ValueError(
                f"a SQLite URL is sqlite:/// and the file's absolute path (e.g. {SQLITE_EXAMPLE})"
            )
        path = unquote(split.path)
        return StoreUrl("sqlite", path=Path(path[1:] if path.startswith("/~") else path).expanduser())
    params = parse_qsl(split.query, keep_blank_values=True)
    # The user is no secret here (libpq's URL names it); a password, or a token as a parameter, is.
    if split.password is not None or any(re.fullmatch(CREDENTIAL_PARAMS, k, re.I) for k, _ in params):
        raise ValueError(f"the URL holds a password; give it without, and the password in {PASSWORD_FROM}")
    try:
        port = split.port
    except ValueError:
        raise ValueError("the port is not a number from 0 to 65535") from None
    database = unquote(split.path.removeprefix("/"))
    if "/" in database or split.fragment:
        raise ValueError(f"a PostgreSQL URL is {SHAPES.split(' or ')[1]}")
    user = unquote(split.username) if split.username else None
    return StoreUrl("postgresql", None, user, split.hostname, port, database or None, tuple(params))


class StorageSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    db: Path = Field(default=DEFAULT_DB, validate_default=True)
    url: str | None = None
    password: SecretStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _url_names_the_file(cls, data: Any) -> Any:
        """A sqlite:/// url is the SQLite file, over ``db``: every reader of ``db`` opens the same store."""
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            try:
                store = parse_store_url(data["url"])
            except ValueError:
                return data  # said by the url's own validator, with its key
            if store.path is not None:
                return {**data, "db": store.path}
        return data

    @field_validator("db")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None:
            parse_store_url(value)
        return value.strip() if value else None

    @property
    def store(self) -> StoreUrl:
        """The store these settings name: ``url``'s, else the SQLite file ``db``."""
        return parse_store_url(self.url) if self.url else StoreUrl("sqlite", path=self.db)
