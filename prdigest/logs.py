"""Logging for the long-running bot: text or one JSON object per line, never a secret.

Every configured secret (tokens, app secrets, keys) is replaced by `***` in every record,
whichever library logged it, and any other secret-shaped text by `[REDACTED]` (both from
`prdigest.redact`); delivery and command lines carry their timings as fields.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, SecretStr

from prdigest.config import Settings
from prdigest.redact import known_secrets, mask, redact

# Attributes every LogRecord has; anything else was passed with `extra=` and becomes a field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def secrets_of(settings: BaseModel) -> list[str]:
    """Every secret value in the settings tree."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr) and value.get_secret_value():
            found.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            found += secrets_of(value)
    return found


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = known_secrets(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(mask(record.exc_text, self.secrets))
        record.msg, record.args = redact(mask(message, self.secrets)), None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_text:
            entry["error"] = record.exc_text
        elif record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def setup_logging(
    settings: Settings, fmt: Literal["text", "json"] = "text", stream: Any = None
) -> logging.Handler:
    """One handler on the root logger, on stderr; returns it (tests read what it wrote)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RedactSecrets(secrets_of(settings)))
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    # PyGithub logs every retry at INFO; prdigest reports the outcome itself.
    logging.getLogger("github").setLevel(logging.WARNING)
    return handler
