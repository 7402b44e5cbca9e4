"""Logging for the long-running bot: text or one JSON object per line, never a secret.

Every configured secret (tokens, app secrets, keys) is replaced by `***` in every record,
whichever library logged it, and any other secret-shaped text by `[REDACTED]` (both from
`prdigest.redact`); delivery and command lines carry their timings as fields. Uncaught errors
(the main thread's, other threads') and the lines of libraries that print through their own
handler (lark-oapi's "Lark" logger, on stdout) are taken into the same handler, format and
redaction. The level and the format come from the settings (PRDIGEST_LOG_LEVEL,
PRDIGEST_LOG_FORMAT).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal

from prdigest.config import Settings
from prdigest.redact import known_secrets, mask, redact, scrub, secrets_of

__all__ = [
    "JsonFormatter", "RedactSecrets", "adopt_library_loggers", "cli_logging", "secrets_of", "setup_logging",
]  # fmt: skip

# Attributes every LogRecord has; anything else was passed with `extra=` and becomes a field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
# Libraries that give their logger a handler of their own (printing past ours): theirs is removed.
OWN_HANDLERS = ("Lark",)
uncaught = logging.getLogger("prdigest.uncaught")


class RedactSecrets(logging.Filter):
    """Masks ``secrets`` (None: the process's configured ones, `prdigest.redact.scrub`) and redacts."""

    def __init__(self, secrets: list[str] | None = None):
        super().__init__()
        self.secrets = None if secrets is None else known_secrets(secrets)

    def clean(self, text: str) -> str:
        return scrub(text) if self.secrets is None else redact(mask(text, self.secrets))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_info = None  # formatted above; a formatter would write it again, unredacted
        if record.exc_text:
            record.exc_text = self.clean(record.exc_text)
        if record.stack_info:
            record.stack_info = self.clean(record.stack_info)
        record.msg, record.args = self.clean(message), None
        for name, value in vars(record).items():
            if name not in _STANDARD and isinstance(value, str):
                setattr(record, name, self.clean(value))
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
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False, default=str)


def adopt_library_loggers() -> None:
    """Libraries' own handlers removed, their records passed to the root's handler (call again after a
    library is imported: lark-oapi adds its handler when its module loads)."""
    for name in OWN_HANDLERS:
        lib = logging.getLogger(name)
        lib.handlers[:] = []
        lib.propagate = True


def _log_uncaught(
    kind: type[BaseException], exc: BaseException, tb: TracebackType | None, where: str
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    uncaught.error("uncaught %s in %s", kind.__name__, where, exc_info=(kind, exc, tb))


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    exc = args.exc_value if args.exc_value is not None else args.exc_type()
    _log_uncaught(args.exc_type, exc, args.exc_traceback, f"thread {name}")


class _Stderr:
    """Whatever sys.stderr is when a line is written (a CLI runner swaps it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_cli_handler: logging.Handler | None = None


def cli_logging() -> None:
    """For the CLI's commands: warnings and errors of any library, and uncaught errors, on stderr in
    text, redacted with the configured secrets (`serve` sets up its own with ``setup_logging``)."""
    global _cli_handler
    root = logging.getLogger()
    if _cli_handler is not None and _cli_handler in root.handlers:
        return
    _cli_handler = logging.StreamHandler(_Stderr())
    # PRDIGEST_LOG_LEVEL shows more (the LLM's failed requests are logged at info); warnings by default.
    level = os.environ.get("PRDIGEST_LOG_LEVEL", "").strip().upper()
    _cli_handler.setLevel(level if level in ("DEBUG", "INFO", "ERROR") else logging.WARNING)
    root.setLevel(min(root.level, _cli_handler.level))
    if _cli_handler.level > logging.DEBUG:  # the HTTP libraries' line per request only when debugging
        for name in ("github", "httpx", "httpx2"):
            logging.getLogger(name).setLevel(logging.WARNING)
    _cli_handler.addFilter(RedactSecrets())
    _cli_handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(_cli_handler)
    _install_hooks()


def _install_hooks() -> None:
    logging.captureWarnings(True)
    adopt_library_loggers()
    sys.excepthook = lambda kind, exc, tb: _log_uncaught(kind, exc, tb, "the main thread")
    threading.excepthook = _thread_hook


def setup_logging(
    settings: Settings, fmt: Literal["text", "json"] | None = None, stream: Any = None
) -> logging.Handler:
    """One handler on the root logger, on stderr (``fmt``, else the settings' format); uncaught errors
    and libraries' own handlers go through it. Returns it (tests read what it wrote)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RedactSecrets(secrets_of(settings)))
    handler.setFormatter(
        JsonFormatter()
        if (fmt or settings.log.format) == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log.level.upper())
    # PyGithub logs every retry at INFO; prdigest reports the outcome itself.
    logging.getLogger("github").setLevel(logging.WARNING)
    _install_hooks()
    return handler
