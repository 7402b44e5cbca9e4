"""The `prdigest` command. Thin: each command parses options and calls the pipeline.

Heavy modules are imported inside the commands, so `prdigest --version` starts fast
and `prdigest report` never loads the chat SDKs. Progress and logs go to stderr;
stdout carries only the report, so `--format json | jq` works.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from prdigest.models import Report

# `deliver`'s exit status when another worker holds the week (sysexits.h): try again later.
EX_TEMPFAIL = 75


class _Group(click.Group):
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


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--config and --db, accepted by every command."""

    @click.option("--config", "config", type=click.Path(dir_okay=False), help="Config file (prdigest.toml).")
    @click.option("--db", "db", type=click.Path(dir_okay=False), help="SQLite cache file.")
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


@dataclass(frozen=True)
class _Period:
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
        from datetime import UTC, datetime

        from prdigest.models import zone
        from prdigest.periods import window_from_options

        zone_name = zone(self.tz).key if self.tz else settings.report.timezone
        return window_from_options(
            self.since, self.until, self.week, self.last_week, zone_name, datetime.now(UTC)
        )


def _period_options(fn: Callable[..., Any]) -> Callable[..., Any]:
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
        return fn(*args, period=_Period(since, until, week, last_week, tz), **kwargs)

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
@_period_options
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Report language.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html", "lark", "slack"]),
    default="md",
    show_default=True,
    help="Markdown, the JSON contract, the full HTML page, or the Lark card / Slack message as sent.",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report to a file instead of stdout.")
@_common
def report(
    git: str | None,
    fixture: str | None,
    repo: str | None,
    period: _Period,
    lang: str | None,
    fmt: str,
    out: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Build the report of a period from a git clone, a fixture or the cache."""
    from prdigest.pipeline import make_report, open_source
    from prdigest.storage import Store

    settings = _settings(config, db)
    window = period.window(settings)
    source = open_source(settings, git, fixture, repo)
    store = Store(settings.storage.db)
    console = _stderr()
    with console.status("working…") as status:
        result = make_report(settings, store, source, window, repo=repo, lang=lang, progress=status.update)
    store.close()
    usage = result.llm_usage
    if usage is not None and usage.fallback:  # the report says so too, but a script reads only stdout
        click.echo(
            f"warning: {usage.model} did not analyse {usage.fallback} of {result.stats.merged_prs} PRs; "
            "the rules engine did (see the log for why)",
            err=True,
        )
    _emit(result, fmt, out)


@cli.command()
@click.option("--repo", required=True, help="Repository OWNER/NAME on GitHub.")
@_period_options
@_common
def sync(repo: str, period: _Period, config: str | None, db: str | None) -> None:
    """Fill the cache with a period's merged PRs from GitHub, asking only for what changed."""
    from prdigest.sources.github import make_client
    from prdigest.sources.sync import sync as sync_window
    from prdigest.storage import Store

    settings = _settings(config, db)
    window = period.window(settings)
    source = make_client(settings).source(repo)
    store = Store(settings.storage.db)
    with _stderr().status(f"syncing {repo}…"):
        result = sync_window(store, source, window)
    store.close()
    click.echo(result.describe())
    if result.partial:
        sys.exit(3)  # the cache keeps what was read; a rerun asks only for the rest


def _emit(report: Any, fmt: str, out: str | None) -> None:
    text = _render(report, fmt)
    if out:
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
        click.echo(f"wrote {out}", err=True)
    else:
        sys.stdout.write(text)


@cli.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--repo", required=True, help="Repository OWNER/NAME in the cache.")
@_period_options
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Answer in this language.")
@_common
def ask(
    question: tuple[str, ...],
    repo: str,
    period: _Period,
    lang: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Answer a question from the cached PRs, citing them (with the LLM when one is configured)."""
    from prdigest.analysis.ask import ask as answer_question
    from prdigest.i18n import detect_lang
    from prdigest.storage import Store

    settings = _settings(config, db)
    window = period.window(settings) if period.given else None
    text = " ".join(question)
    store = Store(settings.storage.db)
    # A question is answered in its own language unless --lang says otherwise.
    answer = answer_question(store, text, repo, window, settings.llm, lang or detect_lang(text))
    store.close()
    click.echo(answer.text)


@cli.group()
def config() -> None:
    """The settings: prdigest.toml and the PRDIGEST_* environment."""


@config.command("check")
@_common
def config_check(config: str | None, db: str | None) -> None:
    """Validate every table of the config file and the environment; name the line and key of each error."""
    from prdigest.config import check_settings

    settings = _settings(config, db)  # raises with file:line: key for every invalid value
    problems = check_settings(settings)
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)
    where = settings.config_path or "defaults and environment"
    on = {True: "on", False: "off"}
    click.echo(
        f"{where}: {len(settings.repos)} repositories, {len(settings.subscriptions)} subscriptions; "
        f"lark {on[settings.lark.enabled]}, slack {on[settings.slack.enabled]}, "
        f"llm {settings.llm.model if settings.llm else 'off'}, "
        f"github token {on[settings.github.token is not None]}"
    )
    if problems:
        sys.exit(1)


@cli.command()
@click.option(
    "--subscription", "sub_id", type=int, required=True, help="The subscription's id (see `subscriptions`)."
)
@click.option("--week", help="An ISO week, e.g. 2026-W37 (default: the last complete week).")
@click.option(
    "--force", is_flag=True, help="Update the card already posted for that week instead of skipping."
)
@_common
def deliver(sub_id: int, week: str | None, force: bool, config: str | None, db: str | None) -> None:
    """Run one subscription's weekly job now: sync, analyse, report, post — once per week."""
    from prdigest.bot.adapters import chat_adapters
    from prdigest.bot.delivery import ConsoleDeliverer, deliver_subscription
    from prdigest.bot.service import sync_config_subscriptions
    from prdigest.errors import UsageError
    from prdigest.periods import parse_week
    from prdigest.storage import Store
    from prdigest.storage.subscriptions import get_subscription

    settings = _settings(config, db)
    store = Store(settings.storage.db)
    sync_config_subscriptions(settings, store)
    sub = get_subscription(store, sub_id)
    if sub is None:
        raise UsageError(f"no subscription {sub_id}; `subscriptions` in chat lists them")
    deliverers: dict[str, Any] = {"console": ConsoleDeliverer(_stderr())}
    deliverers.update((platform, d) for platform, _, d in chat_adapters(settings, None, None))
    window = parse_week(week, sub.tz) if week else None
    with _stderr().status(f"delivering {sub.repo} to {sub.platform}:{sub.chat_id}…"):
        outcome = deliver_subscription(settings, store, sub, deliverers, window=window, force=force)
    store.close()
    from prdigest.redact import scrub

    click.echo(scrub(outcome.describe()))
    if outcome.status == "busy":  # EX_TEMPFAIL: another worker holds the week; a later run may take it
        retry = f" until {outcome.retry_at:%Y-%m-%d %H:%M} UTC" if outcome.retry_at else ""
        click.echo(f"another worker is delivering this week{retry}; run again later", err=True)
        sys.exit(EX_TEMPFAIL)


@cli.command()
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    help="Log lines (default: PRDIGEST_LOG_FORMAT, else text).",
)
@_common
def serve(log_format: str | None, config: str | None, db: str | None) -> None:
    """Run the bot: Lark and Slack adapters, the weekly scheduler and the web app, until SIGTERM."""
    from prdigest.bot.service import Service
    from prdigest.logs import setup_logging
    from prdigest.storage import Store

    settings = _settings(config, db)
    setup_logging(settings, "json" if log_format == "json" else "text" if log_format else None)
    store = Store(settings.storage.db)
    Service(settings, store).run_forever()
    store.close()


def _render(report: Report, fmt: str) -> str:
    import json

    if fmt == "json":
        return report.model_dump_json(indent=2) + "\n"
    if fmt == "html":
        from prdigest.render.html import render_html

        return render_html(report)
    if fmt == "lark":
        from prdigest.render.lark import render_lark_card

        return json.dumps(render_lark_card(report), ensure_ascii=False, indent=2) + "\n"
    if fmt == "slack":
        from prdigest.render.slack import render_slack_message

        return json.dumps(render_slack_message(report), ensure_ascii=False, indent=2) + "\n"
    from prdigest.render.markdown import render_markdown

    return render_markdown(report)


@cli.command()
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Report language.")
@click.option("--no-chat", is_flag=True, help="Print the report and stop, without the console chat.")
@_common
def demo(lang: str | None, no_chat: bool, config: str | None, db: str | None) -> None:
    """Run the demo week through the whole pipeline, offline (rules engine, SQLite, no network), then chat."""
    import tempfile

    from rich.console import Console

    from prdigest.pipeline import make_report
    from prdigest.render.terminal import render_terminal
    from prdigest.sources.fixture import FixtureSource, demo_fixture_path
    from prdigest.storage import Store

    settings = _settings(config, db)
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None, "the demo fixture names its week"
    console = Console()
    with tempfile.TemporaryDirectory(prefix="prdigest-demo-") as tmp:
        # The demo keeps to a throwaway cache unless --db names one.
        store = Store(Path(db) if db else Path(tmp) / "demo.db")
        result = make_report(settings, store, source, source.window, lang=lang, use_llm=False)
        render_terminal(result, console)
        if not no_chat:
            _chat(settings, store, source, console, lang)
        store.close()


@cli.command()
@click.argument("text")
@click.option("--today", help="The day the message is read on, YYYY-MM-DD (default: today in --tz).")
@click.option("--tz", default="UTC", show_default=True, help="The chat's timezone.")
def parse(text: str, today: str | None, tz: str) -> None:
    """How the chat reads a message: one JSON object (command, since, until, n, pr, repo, lang, question)."""
    import json
    from datetime import UTC, datetime

    from prdigest.handlers.understand import describe, understand
    from prdigest.models import zone
    from prdigest.periods import parse_date, today_in

    zone_name = zone(tz).key
    day = parse_date(today, "--today date") if today else today_in(datetime.now(UTC), zone_name)
    click.echo(json.dumps(describe(understand(text), day, zone_name), ensure_ascii=False))


@cli.command()
@click.option("--git", "git", type=click.Path(), help="Chat about a local clone.")
@click.option("--fixture", type=click.Path(), help="Chat about the PRs of a JSON fixture file.")
@click.option("--repo", help="Repository OWNER/NAME (alone: from the cache).")
@click.option("--lang", type=click.Choice(["zh", "en"]), help="Answer in this language.")
@_common
def chat(
    git: str | None,
    fixture: str | None,
    repo: str | None,
    lang: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Chat with prdigest in the terminal, with the commands of Lark and Slack, as an admin."""
    from rich.console import Console

    from prdigest.pipeline import open_source
    from prdigest.storage import Store

    settings = _settings(config, db)
    source = open_source(settings, git, fixture, repo) if (git or fixture) else None
    store = Store(settings.storage.db)
    _chat(settings, store, source, Console(), lang, default_repo=repo)
    store.close()


def _chat(settings: Any, store: Any, source: Any, console: Any, lang: str | None, **services: Any) -> None:
    from datetime import datetime, time, timedelta

    from prdigest.bot.console import run_console
    from prdigest.handlers import Services
    from prdigest.pipeline import source_factory
    from prdigest.sources.fixture import FixtureSource

    services["default_repo"] = services.get("default_repo") or (source.repo if source else None)
    if isinstance(source, FixtureSource) and source.window is not None:
        # "Last week" in a chat about a fixture is the fixture's week: the clock stands on the Monday after.
        window = source.window
        monday = datetime.combine(window.until + timedelta(days=1), time(10), window.zone)
        services["clock"] = lambda: monday
    svc = Services(settings=settings, store=store, source_for=source_factory(settings, source), **services)
    run_console(svc, console, lang)


def main() -> None:
    import logging

    # PyGithub logs every retry at INFO on stderr; prdigest reports the outcome itself.
    logging.getLogger("github").setLevel(logging.WARNING)
    cli(prog_name="prdigest")


if __name__ == "__main__":
    main()
