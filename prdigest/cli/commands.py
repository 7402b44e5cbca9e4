"""The `prdigest` command. Thin: each command parses options and calls the pipeline.

Heavy modules are imported inside the commands, so `prdigest --version` starts fast
and `prdigest report` never loads the chat SDKs. Progress and logs go to stderr;
stdout carries only the report, so `--format json | jq` works.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prdigest import LANGS
from prdigest.cli.llm import llm
from prdigest.cli.ops import config, deliver, prepare, preview, serve, subscriptions, worker
from prdigest.cli.support import (
    Group,
    PeriodOptions,
    common,
    open_store,
    period_options,
    progress_shown,
    settings_from,
    stderr,
)
from prdigest.clock import utc_now

if TYPE_CHECKING:
    from prdigest.models import Report
    from prdigest.subscription import Subscription


@click.group(cls=Group)
@click.version_option(package_name="prdigest", prog_name="prdigest")
def cli() -> None:
    """prdigest: what really changed in your repositories this week."""


@cli.command()
@click.option("--git", "git", type=click.Path(), help="Read merged PRs from a local clone.")
@click.option("--fixture", type=click.Path(), help="Read PRs from a JSON fixture file.")
@click.option(
    "--repo",
    "repos",
    multiple=True,
    help="Repository OWNER/NAME (alone: its configured source or the cache; with --git: overrides the name). "
    "Repeated: one team digest of them all.",
)
@click.option("--owner", help="One team digest of every repository of OWNER (its [[repos]] entries).")
@period_options
@click.option("--lang", type=click.Choice(LANGS), help="Report language.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html", "lark", "slack"]),
    default="md",
    show_default=True,
    help="Markdown, the JSON contract, the full HTML page, or what Lark / Slack is sent: "
    "a JSON array [card, thread reply, ...].",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report to a file instead of stdout.")
@common
def report(
    git: str | None,
    fixture: str | None,
    repos: tuple[str, ...],
    owner: str | None,
    period: PeriodOptions,
    lang: str | None,
    fmt: str,
    out: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Build the report of a period from a git clone, a fixture or the cache; of several repositories
    (--repo repeated, or --owner), one team digest."""
    from prdigest.pipeline.single import make_report
    from prdigest.pipeline.team import make_team_report
    from prdigest.sources.registry import open_source

    settings = settings_from(config, db)
    window = period.window(settings)
    team = team_subscription(repos, owner, git or fixture, lang or settings.report.language)
    repo = repos[0] if repos else None
    source = None if team else open_source(settings, git, fixture, repo)
    store = open_store(settings)
    with progress_shown(stderr(), "working…"):
        if team is not None:
            result = make_team_report(settings, store, team, window, lang=lang)
        else:
            result = make_report(settings, store, source, window, repo=repo, lang=lang)
    store.close()
    usage = result.llm_usage
    if usage is not None and usage.fallback:  # the report says so too, but a script reads only stdout
        why = ", ".join(f"{reason} {n}" for reason, n in usage.not_analysed.items()) or "see the log"
        click.echo(
            f"warning: {usage.model} did not analyse {usage.fallback} of {result.stats.merged_prs} PRs; "
            f"the rules engine did ({why})",
            err=True,
        )
    _emit(result, fmt, out)


def team_subscription(
    repos: tuple[str, ...], owner: str | None, single_source: str | None, lang: str
) -> Subscription | None:
    """The team report's subscription when the options name several repositories or an owner, else None;
    a clear error for a name that is not OWNER/NAME, one named twice, or a team with --git or --fixture."""
    from prdigest.config import REPO_NAME
    from prdigest.models import as_lang
    from prdigest.subscription import Subscription

    if len(repos) < 2 and owner is None:
        return None
    if owner is not None and repos:
        raise click.UsageError("name --owner or --repo, not both")
    if single_source:
        raise click.UsageError(
            "--git and --fixture read one repository; a team digest reads each repository's configured "
            "source ([[repos]] git, GitHub with a token) or the cache"
        )
    for i, repo in enumerate(repos):
        if not REPO_NAME.fullmatch(repo):
            raise click.UsageError(f"--repo {repo!r} is not OWNER/NAME")
        if repo.lower() in (r.lower() for r in repos[:i]):
            raise click.UsageError(f"--repo {repo} is named twice")
    if owner is not None and not REPO_NAME.fullmatch(f"{owner}/x"):
        raise click.UsageError(f"--owner {owner!r} is not an owner's name")
    return Subscription(platform="console", chat_id="cli", repos=list(repos), owner=owner, lang=as_lang(lang))


@cli.command()
@click.option("--repo", required=True, help="Repository OWNER/NAME on GitHub.")
@period_options
@common
def sync(repo: str, period: PeriodOptions, config: str | None, db: str | None) -> None:
    """Fill the cache with a period's merged PRs from GitHub, asking only for what changed."""
    from prdigest.sources.github.source import GitHubSource, make_client
    from prdigest.sources.github.sync import sync as sync_window

    settings = settings_from(config, db)
    window = period.window(settings)
    client = make_client(settings, owner=repo.split("/", 1)[0])
    source = GitHubSource(client, repo, settings.repo(repo).base_branch)
    store = open_store(settings)
    with progress_shown(stderr(), f"syncing {repo}…"):
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
@period_options
@click.option("--lang", type=click.Choice(LANGS), help="Answer in this language.")
@common
def ask(
    question: tuple[str, ...],
    repo: str,
    period: PeriodOptions,
    lang: str | None,
    config: str | None,
    db: str | None,
) -> None:
    """Answer a question from the cached PRs, citing them (with the LLM when one is configured)."""
    from prdigest.analysis.ask import ask as answer_question
    from prdigest.i18n import detect_lang

    settings = settings_from(config, db)
    window = period.window(settings) if period.given else None
    text = " ".join(question)
    store = open_store(settings)
    # A question is answered in its own language unless --lang says otherwise.
    answer = answer_question(store, text, repo, window, settings.llm, lang or detect_lang(text))
    store.close()
    click.echo(answer.text)


def _render(report: Report, fmt: str) -> str:
    import json

    if fmt == "json":
        return report.model_dump_json(indent=2) + "\n"
    if fmt == "html":
        from prdigest.render.html import render_html

        return render_html(report)
    if fmt in ("lark", "slack"):  # what a chat is sent: the card or message, then its thread's replies
        from prdigest.render.lark import lark_messages
        from prdigest.render.slack import slack_messages

        messages = lark_messages(report) if fmt == "lark" else slack_messages(report)
        return json.dumps(messages, ensure_ascii=False, indent=2) + "\n"
    from prdigest.render.markdown import render_markdown

    return render_markdown(report)


@cli.command()
@click.option("--lang", type=click.Choice(LANGS), help="Report language.")
@click.option("--no-chat", is_flag=True, help="Print the report and stop, without the console chat.")
@common
def demo(lang: str | None, no_chat: bool, config: str | None, db: str | None) -> None:
    """Run the demo week through the whole pipeline, offline (rules engine, SQLite, no network), then chat."""
    import tempfile

    from rich.console import Console

    from prdigest.pipeline.single import make_report
    from prdigest.render.terminal import render_terminal
    from prdigest.sources.fixture import FixtureSource, demo_fixture_path
    from prdigest.storage import Store

    settings = settings_from(config, db)
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

    from prdigest.handlers.request import describe, read
    from prdigest.models import zone
    from prdigest.periods import parse_date, today_in

    zone_name = zone(tz).key
    day = parse_date(today, "--today date") if today else today_in(utc_now(), zone_name)
    click.echo(json.dumps(describe(read(text), day, zone_name), ensure_ascii=False))


@cli.command()
@click.option("--git", "git", type=click.Path(), help="Chat about a local clone.")
@click.option("--fixture", type=click.Path(), help="Chat about the PRs of a JSON fixture file.")
@click.option("--repo", help="Repository OWNER/NAME (alone: from the cache).")
@click.option("--lang", type=click.Choice(LANGS), help="Answer in this language.")
@common
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

    from prdigest.sources.registry import open_source

    settings = settings_from(config, db)
    source = open_source(settings, git, fixture, repo) if (git or fixture) else None
    store = open_store(settings)
    _chat(settings, store, source, Console(), lang, default_repo=repo)
    store.close()


def _chat(settings: Any, store: Any, source: Any, console: Any, lang: str | None, **services: Any) -> None:
    from datetime import datetime, time, timedelta

    from prdigest.bot.console import run_console
    from prdigest.handlers import Services
    from prdigest.sources.fixture import FixtureSource
    from prdigest.sources.registry import source_factory

    services["default_repo"] = services.get("default_repo") or (source.repo if source else None)
    if isinstance(source, FixtureSource) and source.window is not None:
        # "Last week" in a chat about a fixture is the fixture's week: the clock stands on the Monday after.
        window = source.window
        monday = datetime.combine(window.until + timedelta(days=1), time(10), window.zone)
        services["clock"] = lambda: monday
    svc = Services(settings=settings, store=store, source_for=source_factory(settings, source), **services)
    run_console(svc, console, lang)


for command in (config, subscriptions, deliver, prepare, serve, worker, preview, llm):
    cli.add_command(command)


def main() -> None:
    import logging

    # PyGithub logs every retry at INFO on stderr; prdigest reports the outcome itself.
    logging.getLogger("github").setLevel(logging.WARNING)
    cli(prog_name="prdigest")


if __name__ == "__main__":
    main()
