"""The operator's commands: `config check`, `subscriptions`, `deliver`, `prepare`, `preview`, `serve` and
`worker`."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from prdigest import LANGS
from prdigest.cli.support import common, open_store, progress_shown, settings_from, stderr, stdout_console
from prdigest.clock import utc_now

if TYPE_CHECKING:
    from prdigest.config import Settings

# `deliver`'s exit status when another worker holds the week (sysexits.h): try again later.
EX_TEMPFAIL = 75


@click.group()
def config() -> None:
    """The settings: prdigest.toml and the PRDIGEST_* environment."""


@config.command("check")
@common
def config_check(config: str | None, db: str | None) -> None:
    """Validate every table of the config file and the environment; name the line and key of each error."""
    from prdigest.config import check_settings

    settings = settings_from(config, db)  # raises with file:line: key for every invalid value
    problems = check_settings(settings)
    if settings.github.app_id is not None:
        problems += _github_app_problems(settings)
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)
    if settings.attention.mention_reviewers:  # nudges find people by email: is the app allowed to?
        from prdigest.bot.nudges import lookup_warnings
        from prdigest.bot.platforms import chat_adapters

        adapters = [(name, adapter) for name, adapter, _ in chat_adapters(settings, None, None)]
        for warning in lookup_warnings(settings, adapters):
            click.echo(f"warning: {warning}", err=True)
    where = (
        f"read {settings.config_path}" if settings.config_path else "no config file; defaults and environment"
    )
    on = {True: "on", False: "off"}
    click.echo(
        f"{where}: {len(settings.repos)} repositories, {len(settings.subscriptions)} subscriptions; "
        f"lark {on[settings.lark.enabled]}, slack {on[settings.slack.enabled]}, "
        f"llm {settings.llm.model if settings.llm else 'off'}, "
        f"github {_github_sign_in(settings)}"
    )
    click.echo(f"cache: {settings.storage.store.describe()}")
    if problems:
        sys.exit(1)


def _github_app_problems(settings: Settings) -> list[str]:
    """The GitHub App's key, and its installation on the owner of every repository the settings name."""
    from prdigest.sources.github.app_auth import github_app
    from prdigest.sources.github.client import ClientOptions, github_retry
    from prdigest.sources.github.errors import GitHubError

    options = ClientOptions()
    try:
        app = github_app(settings.github, timeout=options.timeout, retry=github_retry(options))
    except GitHubError as exc:
        return [f"github: {exc}"]
    repos = [r.name for r in settings.repos if r.git is None] + [
        repo for sub in settings.subscriptions if sub.source == "github" for repo in sub.repos or [sub.repo]
    ]
    named = [repo.split("/", 1)[0] for repo in repos if "/" in repo]
    owners = [*named, *(sub.owner for sub in settings.subscriptions if sub.owner is not None)]
    owners = list(dict.fromkeys(owner.lower() for owner in owners))
    return [f"github: {problem}" for problem in app.problems(owners)]


def _github_sign_in(settings: Settings) -> str:
    github = settings.github
    if github.app_id is None:
        return "token on" if github.token is not None else "off"
    return f"app {github.app_id}" + (" (the App wins: the token set too is not used)" if github.token else "")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per subscription, one per line.")
@common
def subscriptions(as_json: bool, config: str | None, db: str | None) -> None:
    """List the weekly reports: the config file's and those chat added, with the ids `deliver` takes."""
    from rich.table import Table

    from prdigest.bot.delivery import subscription_source_words
    from prdigest.bot.service import sync_config_subscriptions
    from prdigest.storage.subscriptions import list_subscriptions

    settings = settings_from(config, db)
    store = open_store(settings)
    sync_config_subscriptions(settings, store)  # the ids `deliver --subscription` and the bot use
    subs = list_subscriptions(store)
    store.close()
    if as_json:
        for sub in subs:  # "reads": the source a delivery reads, which `source` alone may not say
            reads = subscription_source_words(settings, sub)
            click.echo(json.dumps({**sub.model_dump(mode="json"), "reads": reads}))
        return
    if not subs:
        click.echo("no subscriptions: add [[subscriptions]] to the config file, or `subscribe` in chat")
        return
    from prdigest.analysis.noise import filters_text

    table = Table("id", "repository", "chat", "when", "lang", "source", "by", "muted", "filters")
    for sub in subs:
        table.add_row(
            str(sub.id), sub.repo, f"{sub.platform}:{sub.chat_id}", f"{sub.day} {sub.time} {sub.tz}",
            sub.lang, subscription_source_words(settings, sub), sub.created_by or "-",
            ", ".join(sub.muted) or "-", filters_text(sub.filters) or "-",
        )  # fmt: skip
    stdout_console().print(table)


@click.command()
@click.option(
    "--subscription", "sub_id", type=int, required=True, help="The subscription's id (see `subscriptions`)."
)
@click.option("--week", help="An ISO week, e.g. 2026-W37 (default: the last complete week).")
@click.option(
    "--force", is_flag=True, help="Update the card already posted for that week instead of skipping."
)
@common
def deliver(sub_id: int, week: str | None, force: bool, config: str | None, db: str | None) -> None:
    """Run one subscription's weekly job now: sync, analyse, report, post — once per week."""
    from prdigest.bot.delivery import ConsoleDeliverer, deliver_subscription
    from prdigest.bot.platforms import chat_adapters
    from prdigest.bot.service import sync_config_subscriptions
    from prdigest.errors import UsageError
    from prdigest.periods import parse_week
    from prdigest.storage.subscriptions import get_subscription

    settings = settings_from(config, db)
    store = open_store(settings)
    sync_config_subscriptions(settings, store)
    sub = get_subscription(store, sub_id)
    if sub is None:
        raise UsageError(f"no subscription {sub_id}; `prdigest subscriptions` lists them")
    deliverers: dict[str, Any] = {"console": ConsoleDeliverer(stderr())}
    deliverers.update((platform, d) for platform, _, d in chat_adapters(settings, None, None, store))
    window = parse_week(week, sub.tz) if week else None
    with progress_shown(stderr(), f"delivering {sub.repo} to {sub.platform}:{sub.chat_id}…"):
        outcome = deliver_subscription(settings, store, sub, deliverers, window=window, force=force)
    store.close()
    from prdigest.redact import scrub

    click.echo(scrub(outcome.describe()))
    if outcome.status == "busy":  # EX_TEMPFAIL: another worker holds the week; a later run may take it
        retry = f" until {outcome.retry_at:%Y-%m-%d %H:%M} UTC" if outcome.retry_at else ""
        click.echo(f"another worker is delivering this week{retry}; run again later", err=True)
        sys.exit(EX_TEMPFAIL)


@click.command()
@click.argument("repo")
@click.option("--git", "git_path", type=click.Path(file_okay=False), help="Read a local clone, not GitHub.")
@click.option("--lang", type=click.Choice(LANGS), help="Default: [report] language.")
@click.option("--today", help="Preview as on this day, YYYY-MM-DD: the four weeks before it.")
@common
def preview(
    repo: str, git_path: str | None, lang: str | None, today: str | None, config: str | None, db: str | None
) -> None:
    """What a subscription of REPO (OWNER/NAME) would have posted over the last four complete weeks, from
    the repository's configured source (or the clone, or the cache): nothing is posted or subscribed."""
    from datetime import UTC, datetime, time

    from prdigest.config.models import REPO_NAME
    from prdigest.errors import UsageError
    from prdigest.handlers.preview import preview_reports, preview_text
    from prdigest.models import zone
    from prdigest.periods import parse_date
    from prdigest.sources.registry import open_source

    if not REPO_NAME.fullmatch(repo):
        raise UsageError(f"{repo!r} is not OWNER/NAME")
    settings = settings_from(config, db)
    now = utc_now()
    if today:  # noon of that day where the reports count their days
        day = parse_date(today, "--today date")
        now = datetime.combine(day, time(12), tzinfo=zone(settings.report.timezone)).astimezone(UTC)
    lang = lang or settings.report.language
    source = open_source(settings, git_path, None, repo)
    store = open_store(settings)
    try:
        with progress_shown(stderr(), f"previewing the last four weeks of {repo}…"):
            reports = preview_reports(settings, store, source, repo, lang, now)
    finally:
        store.close()
    click.echo(preview_text(repo, reports, lang))


@click.command()
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    help="Log lines (default: PRDIGEST_LOG_FORMAT, else text).",
)
@click.option(
    "--no-scheduler",
    is_flag=True,
    help="Chat and report pages only: `prdigest worker` processes deliver the weekly reports (PostgreSQL).",
)
@common
def serve(log_format: str | None, no_scheduler: bool, config: str | None, db: str | None) -> None:
    """Run the bot: Lark and Slack adapters, the weekly scheduler and the web app, until SIGTERM."""
    from prdigest.bot.service import Service
    from prdigest.logs import setup_logging

    settings = settings_from(config, db)
    setup_logging(settings, "json" if log_format == "json" else "text" if log_format else None)
    store = open_store(settings)
    Service(settings, store, scheduler=not no_scheduler).run_forever()
    store.close()


@click.command()
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    help="Log lines (default: PRDIGEST_LOG_FORMAT, else text).",
)
@common
def worker(log_format: str | None, config: str | None, db: str | None) -> None:
    """Run the weekly deliveries as jobs on the PostgreSQL store, beside other workers, until SIGTERM."""
    from prdigest.logs import setup_logging

    settings = settings_from(config, db)
    if settings.storage.store.kind != "postgresql":
        raise click.ClickException(
            f'prdigest worker runs jobs on a PostgreSQL store ([storage] url = "postgresql://..."); the '
            f"cache is {settings.storage.store.describe()}: on SQLite `prdigest serve` delivers the weekly "
            "reports itself"
        )
    from prdigest.bot.workers import run

    setup_logging(settings, "json" if log_format == "json" else "text" if log_format else None)
    run(settings, open_store(settings))


@click.command()
@click.option(
    "--repo",
    "repos",
    multiple=True,
    help="A repository, OWNER/NAME (repeatable; default: every subscribed one).",
)
@common
def prepare(repos: tuple[str, ...], config: str | None, db: str | None) -> None:
    """Sync the last days of the repositories and analyse their PRs now, ahead of their reports (what
    `serve` and the workers run daily at [schedule] prepare_at); one line each."""
    from prdigest.bot.service import sync_config_subscriptions
    from prdigest.config import REPO_NAME
    from prdigest.pipeline.prepare import prepare_all

    for repo in repos:
        if not REPO_NAME.fullmatch(repo):
            raise click.UsageError(f"--repo {repo!r} is not OWNER/NAME")
    settings = settings_from(config, db)
    store = open_store(settings)
    sync_config_subscriptions(settings, store)
    with progress_shown(stderr(), "preparing…"):
        done = prepare_all(settings, store, utc_now(), list(repos) or None)
    store.close()
    if not done:
        click.echo("no repository to prepare: no subscription names one (see `prdigest subscriptions`)")
    for each in done:
        click.echo(each.describe())
    if any(each.error for each in done):
        sys.exit(1)
