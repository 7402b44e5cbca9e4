"""A team digest: one report of several repositories (a subscription's ``repos``, or every repository of
its ``owner``), each repository's own report kept as a part. The delivery, chat and CLI call this."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from prdigest.analysis.team import combine
from prdigest.config import Settings
from prdigest.errors import SourceError
from prdigest.i18n import texts
from prdigest.models import Report, Window
from prdigest.pipeline.single import collector_paused, make_report
from prdigest.sources.base import Source
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.subscription import Subscription

# The repositories of an owner on GitHub (sources/github/source.py owner_repositories, bound to settings).
OwnerLister = Callable[[str], list[str]]


def team_repos(settings: Settings, sub: Subscription, list_owner: OwnerLister | None = None) -> list[str]:
    """The repositories a team subscription reports: its ``repos`` as given; for an ``owner``, the
    repositories of that owner in the settings' [[repos]], then (signed in to GitHub) GitHub's others."""
    if sub.owner is None:
        return list(sub.repos) or [sub.repo]
    listed = list_owner(sub.owner) if list_owner is not None and settings.github.authenticated else []
    return list(dict.fromkeys([*settings.repos_of(sub.owner), *listed]))


@collector_paused
def make_team_report(
    settings: Settings,
    store: Store,
    sub: Subscription,
    window: Window,
    *,
    save: bool = True,
    now: datetime | None = None,
    source_for: Callable[[str], Source | None] | None = None,
    list_owner: OwnerLister | None = None,
    lang: str | None = None,
    use_llm: bool = True,
    refresh: bool = True,
) -> Report:
    """Each repository's report of ``window`` (by the subscription's filters and mutes), combined into
    the team's and saved when ``save``. A repository that cannot be read is left out, and a warning names
    it; when none can be, the error is raised."""
    lang = lang or sub.lang
    t = texts(lang)
    source_for = source_for or source_factory(settings)
    warnings: list[str] = []
    try:
        repos = team_repos(settings, sub, list_owner or partial(github_owner, settings))
    except SourceError as exc:  # GitHub could not list the owner's: the configured ones still report
        warnings.append(t["team_part_failed"].format(repo=sub.repo, error=_said(exc, t)))
        repos = team_repos(settings, sub)
    if not repos:
        owner = sub.owner or sub.repo
        raise SourceError(
            f"no repository of {owner} is known: list them as [[repos]] in the config file, or set a GitHub "
            "token",
            "team_no_repos",
            owner=owner,
        )
    parts: list[Report] = []
    failed: list[tuple[str, SourceError]] = []
    for repo in repos:
        try:
            parts.append(make_report(
                settings, store, source_for(repo), window, repo=repo, lang=lang, save=False, use_llm=use_llm,
                refresh=refresh, now=now, subscription=sub,
            ))  # fmt: skip
        except SourceError as exc:
            failed.append((repo, exc))
    if not parts:
        if len(failed) == 1:
            raise failed[0][1]
        raise SourceError("; ".join(f"{repo}: {exc}" for repo, exc in failed)) from failed[0][1]
    report = combine(parts, sub.repo, lang)
    left_out = [t["team_part_failed"].format(repo=repo, error=_said(exc, t)) for repo, exc in failed]
    report.warnings = [*warnings, *left_out, *report.warnings]
    if save:
        report.id = store.save_report(report)
    return report


def github_owner(settings: Settings, owner: str) -> list[str]:
    """The owner's repositories on GitHub (PyGithub is imported only when a team of an owner asks)."""
    from prdigest.sources.github.source import owner_repositories

    return owner_repositories(settings, owner)


def _said(exc: SourceError, t: dict[str, str]) -> str:
    """The error in the report's language when it has a text, else as raised."""
    return t[exc.key].format(**exc.params) if exc.key in t else str(exc).rstrip(".")
