"""Secret redaction, in one place: what the LLM is sent, what is logged, what a user is shown.

Two ways a secret is found: by its shape (``redact``: tokens, keys, passwords, private keys,
JWTs, URL credentials, whoever's they are) and by its value (``mask``: the secrets prdigest
itself was configured with). ``scrub`` does both with the process's configured secrets
(``use_secrets``): every text that leaves the process (chat replies and cards, CLI output and
errors, log lines, tracebacks) passes it. Nothing here imports the rest of prdigest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, SecretStr

T = TypeVar("T")

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
# Authorization: token|Bearer|Basic <credentials>, in a header, a dump of one or a repr
_AUTHORIZATION = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:token|bearer|basic)\s+)(?!\*\*\*|\[REDACTED\])[^\s\"',;]+"
)
# ?access_token=..., &key=..., ?sig=... in a URL or a query string
CREDENTIAL_PARAMS = (
    "access_token|token|key|api_key|apikey|secret|client_secret|password|sig|signature|auth|code"
)
_QUERY_CREDENTIAL = re.compile(rf"(?i)([?&;](?:{CREDENTIAL_PARAMS})=)(?!\*\*\*|\[REDACTED\])[^&#\s\"'<>]+")
_CREDENTIAL_IN_URL = re.compile(rf"(?i)^[a-z][a-z0-9+.-]*://[^/?#\s]*@|[?&;#](?:{CREDENTIAL_PARAMS})=")
# scheme://user:password@ or scheme://token@
_URL_CREDENTIALS = re.compile(r"(?<![\w+.-])([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@", re.I)
# password=..., "api_key": "...", DB_PASSWORD: ..., token = '...'
_ASSIGNED_SECRET = re.compile(
    r"(?i)(?<![\w.-])([\w.-]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|token)\b[\"']?\s*[:=]\s*)"
    r"([\"']?)([^\s\"',;&]{4,})\2"
)


# A superset of what the patterns above need (lowercase; URL credentials need an "@"): text with
# none of these is returned as it is, after a few substring scans instead of every pattern's (a
# report holds thousands of texts).
_HINTS = (
    "private key", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox", "xapp-", "akia",
    "asia", "eyj", "bearer", "authoriz", "@", "password", "passwd", "pwd", "secret", "key", "token",
    "sig=", "signature=", "auth=", "code=",
)  # fmt: skip


def redact(text: str) -> str:
    """``text`` with tokens, keys, passwords, private keys, JWTs and URL credentials replaced."""
    lower = text.lower()
    if not any(hint in lower for hint in _HINTS):
        return text
    for pattern in _SECRETS:
        text = pattern.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(rf"\1{REDACTED}", text)
    text = _URL_CREDENTIALS.sub(rf"\1{REDACTED}@", text)
    text = _QUERY_CREDENTIAL.sub(rf"\1{REDACTED}", text)
    return _ASSIGNED_SECRET.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}{m[2]}", text)


def no_credentials(url: str) -> str:
    """``url``, unless it holds credentials (``user:password@``, ``?access_token=``...): settings name
    an endpoint, and its secret comes from its own environment variable, never shown."""
    if _CREDENTIAL_IN_URL.search(url):
        raise ValueError(
            "the URL holds credentials (user:password@ or a token/key query parameter); "
            "give the URL without them and the secret in its environment variable"
        )
    return url


def known_secrets(secrets: Iterable[str]) -> list[str]:
    """The secrets worth masking (four characters or more), longest first so none is masked in part."""
    return sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` (see ``known_secrets``) replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


def secrets_of(settings: BaseModel) -> list[str]:
    """Every secret value in a settings tree (its SecretStr fields, nested sections included)."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr) and value.get_secret_value():
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            found += secrets_of(value)
    return found


_configured: list[str] = []


def use_secrets(secrets: Iterable[str]) -> None:
    """The process's configured secrets, masked by ``scrub`` from now on (the last call wins)."""
    _configured[:] = known_secrets(secrets)


def scrub(text: str) -> str:
    """``text`` with the configured secrets masked and every secret-shaped text redacted."""
    return redact(mask(text, _configured))


def summary(text: object, limit: int = 160) -> str:
    """An upstream answer as a short reason: scrubbed, on one line, at most ``limit`` characters."""
    line = " ".join(scrub(str(text)).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def scrub_value(value: T) -> T:
    """``value`` with every string in it scrubbed: models (copied), lists, dicts; the same object when
    nothing in it changed."""
    out: Any = value
    if isinstance(value, str):
        cleaned_text = scrub(value)
        out = value if cleaned_text == value else cleaned_text
    elif isinstance(value, BaseModel):
        update = {}
        for name in type(value).model_fields:
            field = getattr(value, name)
            cleaned = scrub_value(field)
            if cleaned is not field:
                update[name] = cleaned
        out = value.model_copy(update=update) if update else value
    elif isinstance(value, list | tuple):
        items = [scrub_value(v) for v in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            out = type(value)(items)
    elif isinstance(value, dict):
        pairs = {k: scrub_value(v) for k, v in value.items()}
        if any(pairs[k] is not v for k, v in value.items()):
            out = pairs
    return out  # type: ignore[no-any-return]
