"""A repository's own .prdigest.toml as its source gives it (kept in the cache), layered into the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prdigest.config.repo_file import with_repo_file
from prdigest.errors import SourceError
from prdigest.i18n import texts
from prdigest.storage.repo_files import load_repo_file, save_repo_file

if TYPE_CHECKING:
    from prdigest.config.models import Settings
    from prdigest.sources.base import Source
    from prdigest.storage import Store


def repo_file_text(store: Store, source: Source | None, repo: str) -> str | None:
    """The text of ``repo``'s file ("" when it has none): the source's when it can read one (kept in the
    cache), else the one the cache kept (a report from the cache alone still uses it), else None.

    A source that fails to read it (GitHub down, a broken clone) leaves the kept one in use."""
    text = None
    if source is not None and source.repo == repo:
        try:
            text = source.repo_file()
        except SourceError:
            text = None
    if text is None:
        return load_repo_file(store, repo)
    save_repo_file(store, repo, text)
    return text


def repo_settings(
    settings: Settings, store: Store, source: Source | None, repo: str, lang: str
) -> tuple[Settings, list[str]]:
    """``settings`` with ``repo``'s own file layered under its config entry (see `prdigest.config.repo_file`),
    and the report's warning, in ``lang``, when the file cannot be used (the settings then stay as given)."""
    layered, problems = with_repo_file(settings, repo, repo_file_text(store, source, repo))
    if not problems:
        return layered, []
    return layered, [texts(lang)["repo_file_unused"].format(repo=repo, reason="; ".join(problems))]
