"""Which source a repository reads: the factories tried in order, and the source a command's options name.

Kept apart from the `Source` contract (sources/base.py), which every source implements: the registry
imports the sources, the sources import only the contract.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from prdigest.errors import SourceError

if TYPE_CHECKING:
    from prdigest.config import Settings
    from prdigest.sources.base import Source

SourceFactory = Callable[["Settings", str], "Source | None"]


def _clone(settings: Settings, path: str | Path, repo: str | None) -> Source:
    from prdigest.sources.git.source import GitSource

    return GitSource(
        path, repo=repo, lang=settings.report.language, web=settings.github.web_url, logins=settings.logins()
    )


def _configured_clone(settings: Settings, repo: str) -> Source | None:
    clone = settings.repo(repo).git
    return None if clone is None else _clone(settings, clone, repo)


def _github(settings: Settings, repo: str) -> Source | None:
    if not settings.github.authenticated:
        return None
    from prdigest.sources.github.source import GitHubSource, make_client

    owner = repo.split("/", 1)[0]  # a GitHub App signs in as its installation on the owner
    return GitHubSource(make_client(settings, owner=owner), repo, settings.repo(repo).base_branch)


# Tried in order for a repository the command names no source of; the first that gives one wins.
FACTORIES: list[SourceFactory] = [_configured_clone, _github]


def source_factory(settings: Settings, given: Source | None = None) -> Callable[[str], Source | None]:
    """Where each repository's PRs come from: the source the command was given, else the first of
    `FACTORIES` that has one (a clone named in the settings, GitHub when a token or an App is set), else none
    (the cache only)."""

    def source_for(repo: str) -> Source | None:
        if given is not None and given.repo == repo:
            return given
        for factory in FACTORIES:
            source = factory(settings, repo)
            if source is not None:
                return source
        return None

    return source_for


def open_source(
    settings: Settings, git: str | Path | None, fixture: str | Path | None, repo: str | None
) -> Source | None:
    """The source the options name: a clone, a fixture, or for --repo alone the repository's configured
    source (a clone in the settings, else GitHub when a token or an App is set); None: the cache only."""
    if git and fixture:
        raise SourceError("choose one source: --git PATH or --fixture FILE")
    if git:
        return _clone(settings, git, repo)
    if fixture:
        from prdigest.sources.fixture import FixtureSource

        return FixtureSource(fixture, repo=repo)
    if not repo:
        raise SourceError("name a source: --git PATH, --fixture FILE or --repo OWNER/NAME")
    return source_factory(settings)(repo)
