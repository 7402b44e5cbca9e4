"""What the `prdigest` commands share: clear errors, --config/--db, the period options, settings, stderr
and counted progress."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from prdigest.clock import utc_now


class Group(click.Group):
    """Turns prdigest's own errors into one clear line (and exit status 1), never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from prdigest.errors import PrdigestError
        from prdigest.logs import cli_logging
        from prdigest.redact import scrub

        cli_logging()  # libraries' warnings and uncaught errors: redacted, on stderr
        try:
            return super().invoke(ctx)
        except PrdigestError as exc:
            raise click.ClickException(scrub(str(exc))) from None  # a server's answer may quote a secret
        except click.ClickException as exc:  # usage errors keep their kind and exit status
            exc.message = scrub(exc.message)  # type: ignore[misc]
            raise


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--config and --db, accepted by every command."""

    @click.option("--config", "config", type=click.Path(dir_okay=False), help="Config file (prdigest.toml).")
    @click.option("--db", "db", type=click.Path(dir_okay=False), help="SQLite cache file.")
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@dataclass(frozen=True)
class PeriodOptions:
    """The period options a command was given: --since/--until, --week or --last-week, and --tz."""

    since: str | None
    until: str | None
    week: str | None
    last_week: bool
    tz: str | None

    @property
    def given(self) -> bool:
        return bool(self.since or self.until or self.week or self.last_week)

    def window(self, settings: Any) -> Any:

        from prdigest.models import zone
        from prdigest.periods import window_from_options

        zone_name = zone(self.tz).key if self.tz else settings.report.timezone
        return window_from_options(self.since, self.until, self.week, self.last_week, zone_name, utc_now())


def period_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The period options, handed to the command as one `period` argument."""

    @click.option("--since", help="First day, YYYY-MM-DD.")
    @click.option("--until", help="Last day, YYYY-MM-DD (inclusive).")
    @click.option("--week", help="An ISO week, e.g. 2026-W37.")
    @click.option("--last-week", is_flag=True, help="The last complete Monday-to-Sunday week.")
    @click.option("--tz", help="Timezone of the window's days (default from the config: Asia/Shanghai).")
    @functools.wraps(fn)
    def wrapper(
        *args: Any, since: Any, until: Any, week: Any, last_week: bool, tz: Any, **kwargs: Any
    ) -> Any:
        return fn(*args, period=PeriodOptions(since, until, week, last_week, tz), **kwargs)

    return wrapper


def settings_from(config: str | None, db: str | None) -> Any:
    from prdigest.config import load_settings

    return load_settings(config, overrides={("storage", "db"): db})


def open_store(settings: Any) -> Any:
    """The cache the settings name: [storage] url (a PostgreSQL store, or a SQLite file), else db; with
    a connection to spare for each of a worker's jobs."""
    from prdigest.storage.db import Store

    connections = max(8, settings.workers.concurrency + 4)  # the chat's and scheduler's threads: 8
    return Store(settings.storage.store, settings.storage.password, connections)


def stdout_console() -> Any:
    from rich.console import Console

    return Console()


def stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@contextmanager
def progress_shown(console: Any, text: str) -> Iterator[None]:
    """Long work's counted progress on stderr while the block runs (drawn only on a terminal)."""
    from prdigest.cli.progress import TerminalProgress
    from prdigest.progress import reporting_to

    with TerminalProgress(console) as shown, reporting_to(shown):
        shown.phase(text)
        yield
