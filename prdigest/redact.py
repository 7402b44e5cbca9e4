"""Secret redaction, in one place: what the LLM is sent, what is logged, what a user is shown.

Two ways a secret is found: by its shape (``redact``: tokens, keys, passwords, private keys,
JWTs, URL credentials, whoever's they are) and by its value (``mask``: the secrets prdigest
itself was configured with). Nothing here imports the rest of prdigest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
MASK = "***"
_SECRETS = (
    # A private key block; a diff excerpt may cut it before its END line.
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:xox[a-z]|xapp)-[A-Za-z0-9-]{10,}"),  # Slack tokens (bot, user, app, refresh...)
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/-]{16,}=*", re.I),
)
# scheme://user:password@ or scheme://token@
_URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@", re.I)
# password=..., "api_key": "...", DB_PASSWORD: ..., token = '...'
_ASSIGNED_SECRET = re.compile(
    r"(?i)\b([\w.-]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|token)\b[\"']?\s*[:=]\s*)"
    r"([\"']?)([^\s\"',;&]{4,})\2"
)


def redact(text: str) -> str:
    """``text`` with tokens, keys, passwords, private keys, JWTs and URL credentials replaced."""
    for pattern in _SECRETS:
        text = pattern.sub(REDACTED, text)
    text = _URL_CREDENTIALS.sub(rf"\1{REDACTED}@", text)
    return _ASSIGNED_SECRET.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}{m[2]}", text)


def known_secrets(secrets: Iterable[str]) -> list[str]:
    """The secrets worth masking (four characters or more), longest first so none is masked in part."""
    return sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` (see ``known_secrets``) replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
