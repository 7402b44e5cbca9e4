"""Who wrote a clone's commit: the GitHub login where it is known, else the name the commit gives."""

from __future__ import annotations

import re
from collections.abc import Mapping

_NOREPLY = re.compile(r"^(?:\d+\+)?([A-Za-z0-9-]+)@users\.noreply\.github\.com$", re.IGNORECASE)


def identity(name: str, email: str, logins: Mapping[str, str] | None = None) -> str:
    """A GitHub login where the email gives it away (``logins``, the configured people's, or a noreply
    address), else the author's name."""
    login = (logins or {}).get(email.strip().casefold())
    match = _NOREPLY.match(email.strip())
    return login or (match.group(1) if match else (name.strip() or email.strip()))
