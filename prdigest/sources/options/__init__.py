"""What a repository exposes to its users, read from its files as a PR changes them: command-line
flags, config-class fields, environment variables, public parameters (python.py) and config-file keys
(files.py), each with its default. A PR's `OptionChanges` (removed, added, changed defaults) is what the
`config_breaking` rule reads; sources compute it from each touched file's text before and after."""

from __future__ import annotations

from collections.abc import Iterable

from prdigest.models import OptionChanges
from prdigest.path_kinds import is_ci, is_doc, is_test, matches
from prdigest.sources.options.files import file_keys, is_config_file
from prdigest.sources.options.python import python_options

MAX_FILES = 40  # definition files read for one PR; a larger PR is judged by its first ones
MAX_BLOB = 400_000  # bytes of one file's text
# Examples are copies users make; an experimental package ships and is imported like the rest.
_EXAMPLES = ("examples/**", "**/examples/**", "example/**")
# Folders whose code users run rather than import: their functions' parameters are not an interface.
_RUN_NOT_IMPORTED = ("scripts", "tools", "benchmarks", "bench", "examples", "docs", "tests", "test", "ci")


def is_definition(path: str) -> bool:
    """A file whose options users set: the project's Python code (its launch scripts too) and config files,
    not its tests, docs, CI or examples."""
    if is_test(path) or is_doc(path) or is_ci(path) or matches(path, _EXAMPLES):
        return False
    return path.endswith(".py") or is_config_file(path)


def options_of(path: str, text: str | None) -> dict[str, str]:
    """The options ``path`` exposes with this text (None: the file is absent)."""
    if text is None:
        return {}
    if path.endswith(".py"):
        parts = path.split("/")
        public = (
            len(parts) > 1
            and parts[0] not in _RUN_NOT_IMPORTED
            and not any(p.startswith("_") and p != "__init__.py" for p in parts)
        )
        return python_options(text, public=public)
    return file_keys(path, text)


Sides = tuple[str, str, dict[str, str] | None, dict[str, str] | None]


def option_changes(files: Iterable[Sides]) -> OptionChanges:
    """What a PR changed of the options its definition files expose: (path before, path after, options
    before, options after; None: the file is absent) for each. An option that moved between two of them
    is neither removed nor added."""
    before: dict[str, str] = {}
    after: dict[str, str] = {}
    where: dict[str, str] = {}
    for old_path, new_path, old, new in files:
        for key, default in (old or {}).items():
            before.setdefault(key, default)
            where.setdefault(key, old_path)
        for key, default in (new or {}).items():
            after.setdefault(key, default)
            where.setdefault(key, new_path)
    moved = {_moved_key(k): k for k in after if k.startswith("key:")}
    removed = {k: v for k, v in before.items() if k not in after and moved.get(_moved_key(k)) is None}
    added = {k: v for k, v in after.items() if k not in before}
    changed = {k: (before[k], after[k]) for k in before if k in after and before[k] != after[k]}
    keys = {*removed, *added, *changed}
    return OptionChanges(
        removed=removed, added=added, changed=changed, paths={k: p for k, p in where.items() if k in keys},
        kept=sorted({OptionChanges.owner(k) for k in removed} & {OptionChanges.owner(k) for k in after}),
    )  # fmt: skip


def _moved_key(key: str) -> str:
    """A config file's key without its file: a renamed file keeps its keys."""
    kind, _, rest = key.partition(":")
    return f"{kind}:{rest.partition(':')[2]}"
