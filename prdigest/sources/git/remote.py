"""What a clone's origin remote says of it: the host it is on and the repository it names, and where that
repository's pages are (its PRs' links)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# A remote on a host: "scheme://[user@]host[:port]/…" or scp-like "[user@]host:…" (a local path or a
# file:// remote, a bundle's clone for one, names no repository); its last two path parts name it.
_HOSTED = re.compile(
    r"\A(?!file:)(?:[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?/|(?:[^@/:]+@)?([^/:]+):)"
)
_PART = re.compile(r"[A-Za-z0-9_.-]+")


def origin(url: str) -> tuple[str | None, str | None]:
    """The host of a remote URL and the repository it names (owner/name), each None where it has none."""
    hosted = _HOSTED.match(url)
    if not hosted:
        return None, None
    parts = url[hosted.end() :].rstrip("/").removesuffix(".git").split("/")[-2:]
    named = len(parts) == 2 and all(_PART.fullmatch(p) for p in parts)
    return hosted[1] or hosted[2], "/".join(parts) if named else None


def web_url(repo: str, host: str | None, web: str | None) -> str | None:
    """The repository's page: on origin's host when that is a GitHub (its name has "github", or it is
    ``web``'s host), else at ``web`` when the repository was named; None for a ``local/`` one."""
    if repo.startswith("local/"):
        return None
    if host and ("github" in host or (web and host == urlsplit(web).hostname)):
        return f"https://{host}/{repo}"
    return f"{web.rstrip('/')}/{repo}" if web else None
