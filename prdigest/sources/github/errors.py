"""GitHub's errors, and reading the errors and names in its answers (shared by the client and the source)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from prdigest.config import REPO_NAME
from prdigest.errors import SourceError
from prdigest.redact import summary

LONGEST_MESSAGE = 400


class GitHubError(SourceError):
    """GitHub could not be read. A message that quotes a long answer is cut short: a summary of it."""

    def __init__(self, message: str, key: str | None = None, **params: object):
        super().__init__(summary(message, LONGEST_MESSAGE), key, **params)


class GitHubAuthError(GitHubError):
    """No token, a token GitHub rejects, or a token without access."""


class GitHubNotFound(GitHubError):
    """The repository or the pull request does not exist, or the token cannot see it."""


class GitHubRateLimited(GitHubError):
    """The rate-limit budget is spent, or would be by the next request; ``retry_at``: when it is renewed,
    where GitHub said."""

    def __init__(self, message: str, *, retry_at: datetime | None = None):
        super().__init__(message)
        self.retry_at = retry_at


class GitHubUnavailable(GitHubError):
    """5xx answers or timeouts, still failing after the retries; ``overloaded`` when GitHub answered
    (5xx, or too late) rather than could not be reached, so that a lighter request may pass."""

    def __init__(self, message: str, *, overloaded: bool = False):
        super().__init__(message)
        self.overloaded = overloaded


# --- reading GitHub's answers ------------------------------------------------------


def split_repo(repo: str) -> tuple[str, str]:
    if not REPO_NAME.fullmatch(repo or ""):
        raise GitHubError(f"{repo!r} is not a GitHub repository name (OWNER/NAME)")
    owner, name = repo.split("/")
    return owner, name


def errors_at(errors: list[dict[str, Any]], prefix: list[Any]) -> str | None:
    """The messages of the errors whose path starts with ``prefix``."""
    hits = [e for e in errors if list(e.get("path") or [])[: len(prefix)] == prefix]
    return messages(hits) if hits else None


def messages(errors: list[dict[str, Any]]) -> str:
    """The first errors' reasons, each short and scrubbed: a server's text is summarised, never echoed."""
    return (
        "; ".join(summary(e.get("message") or e.get("type") or "unknown error") for e in errors[:3])
        or "no data"
    )


def raise_for_repository(errors: list[dict[str, Any]], repo: str, url: str) -> None:
    if any(e.get("type") == "NOT_FOUND" and e.get("path") == ["repository"] for e in errors):
        raise GitHubNotFound(f"GitHub repository {repo} was not found at {url}, or the token cannot read it")


def json_object(text: str) -> dict[str, Any]:
    """An error answer's body for PyGithub's exceptions: its fields kept, every text in it a short,
    scrubbed reason (a server may quote the request, its Authorization header included)."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"message": summary(text)}
    if not isinstance(value, dict):
        return {"message": summary(value)}
    return {k: _short(v) for k, v in value.items()}


def _short(value: Any, depth: int = 0) -> Any:
    """Every text in a JSON value summarised (lists cut to 3 entries, 3 levels deep)."""
    if isinstance(value, str):
        return summary(value)
    if depth >= 3:
        return None if isinstance(value, dict | list) else value
    if isinstance(value, list):
        return [_short(v, depth + 1) for v in value[:3]]
    if isinstance(value, dict):
        return {k: _short(v, depth + 1) for k, v in value.items()}
    return value


def short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return summary(f"{type(exc).__name__}: {exc}", 200)
