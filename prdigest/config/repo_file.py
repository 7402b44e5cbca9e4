"""A repository's own ``.prdigest.toml``: its taxonomy, filters and notes for the LLM, under the config file.

The file sits at the root of the repository's default branch and holds the keys of one ``[[repos]]``
entry that make sense inside a repository, at its top level::

    extra_instructions = "Megatron is the training backend; call rollout workers 'actors'."

    [taxonomy]
    core_paths = ["src/engine/**"]

    [taxonomy.tags.rollout]
    paths = ["src/rollout/**"]
    keywords = ["rollout"]

    [filters]
    paths = ["!docs/**"]
    labels = ["!skip-digest"]
    authors = ["!dependabot[bot]"]

``name`` and ``git`` are refused: the repository is the one the file is in, and a clone's path means
nothing inside it; so is a base branch (``base_branch``, ``filters.base_branch``): the source lists the
PRs of that branch before it can read the file. All three belong in the config file.

Layering, field by field: the config file's ``[[repos]]`` entry, over the repository's file, over the
defaults. A key the entry sets wins; a key only the file sets applies; ``taxonomy.tags`` merge by tag
name (the entry's tag wins whole); ``filters`` merge key by key. A file that cannot be used (bad TOML,
an unknown key, a bad value, a refused key) changes nothing; the problems say which key, on which line.
"""

from __future__ import annotations

import tomllib
from collections.abc import Container
from typing import Any

from pydantic import BaseModel, ValidationError

from prdigest.config.locate import locate_key
from prdigest.config.models import RepoSettings, Settings

FILE_NAME = ".prdigest.toml"
MAX_BYTES = 64 * 1024  # a settings file, not a data file: a larger one is refused, not parsed

# Keys of a [[repos]] entry that have no meaning inside the repository itself.
_REFUSED = {
    "name": "the repository is the one this file is in",
    "git": "a clone's path means nothing inside the repository; set it in prdigest.toml's [[repos]]",
    "repos": "write the keys of one [[repos]] entry at the top level, without [[repos]]",
    "base_branch": "the source lists that branch's PRs before it reads this file; set it in prdigest.toml",
}
_BRANCH = _REFUSED["base_branch"]


def with_repo_file(settings: Settings, repo: str, text: str | None) -> tuple[Settings, list[str]]:
    """``settings`` with ``repo``'s entry layered over the repository's ``.prdigest.toml`` (``text``; None
    or "": it has none), and the problems that kept the file from being used ("line N: key: what").

    ``settings`` are those the config file gave (not already layered): the keys its entry sets win."""
    if not text or not text.strip():
        return settings, []
    file, problems = parse_repo_file(repo, text)
    if file is None:
        return settings, problems
    entry = settings.repo(repo)
    layered = RepoSettings.model_validate(_over(entry, file))
    repos = [r for r in settings.repos if r.name != repo] + [layered]
    return settings.model_copy(update={"repos": repos}), []


def parse_repo_file(repo: str, text: str) -> tuple[RepoSettings | None, list[str]]:
    """The settings a repository's file sets (only its keys count as set), or None and why not."""
    if len(text.encode()) > MAX_BYTES:
        return None, [f"the file is larger than {MAX_BYTES // 1024} KB"]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line L, column C)".
        return None, [f"invalid TOML: {exc}"]
    except RecursionError:  # tomllib recurses per level of nesting: a small file can nest thousands
        return None, ["the file nests its arrays or tables too deeply"]
    problems = [
        f"line {locate_key(text, (key,))}: {key}: {why}" for key, why in _REFUSED.items() if key in data
    ]
    if isinstance(data.get("filters"), dict) and "base_branch" in data["filters"]:
        where = locate_key(text, ("filters", "base_branch"))
        problems.append(f"line {where}: filters.base_branch: {_BRANCH}")
    try:
        settings = RepoSettings.model_validate({**_without(data, _REFUSED), "name": repo})
    except ValidationError as exc:
        return None, problems + [_problem(text, err) for err in exc.errors()]
    return (None, problems) if problems else (settings, [])


def _without(data: dict[str, Any], keys: Container[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def _problem(text: str, err: Any) -> str:
    loc = tuple(str(p) for p in err["loc"])
    message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
    return f"line {locate_key(text, loc)}: {'.'.join(loc) or '(top level)'}: {message}"


def _over(top: BaseModel, base: BaseModel) -> dict[str, Any]:
    """The fields ``top`` sets over those ``base`` sets: nested settings field by field, a mapping
    (taxonomy.tags) name by name with ``top``'s value winning whole, anything else whole."""
    out: dict[str, Any] = {name: getattr(base, name) for name in base.model_fields_set}
    for name in top.model_fields_set:
        mine, theirs = getattr(top, name), out.get(name)
        if isinstance(mine, BaseModel) and isinstance(theirs, BaseModel):
            out[name] = type(mine).model_validate(_over(mine, theirs))
        elif isinstance(mine, dict) and isinstance(theirs, dict):
            out[name] = {**theirs, **mine}
        else:
            out[name] = mine
    return out
