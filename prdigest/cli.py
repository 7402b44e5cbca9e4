"""The `prdigest` command. Thin: each command parses options and calls the pipeline.

Heavy modules are imported inside the commands, so `prdigest --version` starts fast
and `prdigest report` never loads the chat SDKs. Progress and logs go to stderr;
stdout carries only the report, so `--format json | jq` works.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


class _Group(click.Group):
    """Turns prdigest's own errors into one clear line (and exit status 1), never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from prdigest.errors import PrdigestError

        try:
            return super().invoke(ctx)
        except PrdigestError as exc:
            raise click.ClickException(str(exc)) from None


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--config and --db, accepted by every command."""

    @click.option("--config", "config", type=click.Path(dir_okay=False), help="Config file (prdigest.toml).")
    @click.option("--db", "db", type=click.Path(dir_okay=False), help="SQLite cache file.")
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


def _settings(config: str | None, db: str | None) -> Any:
    from prdigest.config import load_settings

    return load_settings(config, overrides={("storage", "db"): db})


def _stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@click.group(cls=_Group)
@click.version_option(package_name="prdigest", prog_name="prdigest")
def cli() -> None:
    """prdigest: what really changed in your repositories this week."""


@cli.command()
@click.option("--git", "git", type=click.Path(), help="Read merged PRs from a local clone.")
@click.option("--fixture", type=click.Path(), help="Read PRs from a JSON fixture file.")
@click.option("--repo", help="Repository OWNER/NAME (alone: from the cache; with --git: overrides the name).")
@click.option("--since", help="First day, YYYY-MM-DD.")
@click.option("--until", help="Last day, YYYY-MM-DD (inclusive).")
@click.option("--week", help="An ISO week, e.g. 2026-W37.")
@click.option("--last-week", is_flag=True, help="The last complete Monday-to-Sunday week.")
@click.option("--tz", help="Timezone of the window's days (default from the config: Asia/Shanghai).")
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Report language.")
@click.option("--format", "fmt", type=click.Choice(["json", "md"]), default="md", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report to a file instead of stdout.")
@_common
def report(
    git: str | None,
    fixture: str | None,
    repo: str | None,
    since: str | None,
    until: str | None,
    week: str | None,
    last_week: bool,
    tz: str | None,
    lang: str | None,
    fmt: str,
    out: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Build the report of a period from a git clone, a fixture or the cache."""
    from datetime import UTC, datetime

    from prdigest.models import zone
    from prdigest.periods import window_from_options
    from prdigest.pipeline import make_report, open_source
    from prdigest.storage import Store

    settings = _settings(config, db)
    zone_name = zone(tz).key if tz else settings.report.timezone
    window = window_from_options(since, until, week, last_week, zone_name, datetime.now(UTC))
    source = open_source(git, fixture, repo)
    store = Store(settings.storage.db)
    console = _stderr()
    with console.status("working…") as status:
        result = make_report(settings, store, source, window, repo=repo, lang=lang, progress=status.update)
    store.close()
    _emit(result, fmt, out)


def _emit(report: Any, fmt: str, out: str | None) -> None:
    if fmt == "json":
        text = report.model_dump_json(indent=2) + "\n"
    else:
        from prdigest.render.markdown import render_markdown

        text = render_markdown(report)
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
        click.echo(f"wrote {out}", err=True)
    else:
        sys.stdout.write(text)


@cli.command()
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Report language.")
@_common
def demo(lang: str | None, config: str | None, db: str | None) -> None:
    """Run the demo week through the whole pipeline, offline (rules engine, SQLite, no network)."""
    import tempfile

    from rich.console import Console

    from prdigest.pipeline import make_report
    from prdigest.render.terminal import render_terminal
    from prdigest.sources.fixture import FixtureSource, demo_fixture_path
    from prdigest.storage import Store

    settings = _settings(config, db)
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None, "the demo fixture names its week"
    with tempfile.TemporaryDirectory(prefix="prdigest-demo-") as tmp:
        # The demo keeps to a throwaway cache unless --db names one.
        store = Store(Path(db) if db else Path(tmp) / "demo.db")
        result = make_report(settings, store, source, source.window, lang=lang)
        store.close()
    render_terminal(result, Console())


def main() -> None:
    cli(prog_name="prdigest")


if __name__ == "__main__":
    main()
