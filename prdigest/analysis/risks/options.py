"""config_breaking from what the PR's files expose (sources/options): an option, config field, environment
variable, config key or public parameter removed, renamed, or given another default.

These findings say what to look at, not that users break this week (they do not raise the week to high):
a field or parameter removed is often migrated in the same release, an experimental package promises
nothing. The removed command-line flags the diff shows are the ones that break launch commands
(rules.config_breaking)."""

from __future__ import annotations

import re

from prdigest.analysis.facts import Facts
from prdigest.analysis.risks.common import LITERAL, Evidence
from prdigest.models import OptionChanges
from prdigest.path_kinds import is_test

SHOWN = 4
# Kinds whose removal breaks those who set them; a parameter only when its function stays.
_SET_BY_USERS = ("flag", "field", "env", "key")


def shown(key: str) -> str:
    """An option as its users write it: ``--lr``, ``TrainConfig.lr``, ``$NAME``, ``a.b``, ``fn(lr=)``."""
    kind, _, name = key.partition(":")
    if kind == "env":
        return f"${name}"
    if kind == "key":
        return name.partition(":")[2]
    if kind == "param":
        owner, _, arg = name.rpartition(".")
        return f"{owner}({arg}=)"
    return name


def _bare(key: str) -> str:
    """An option's own name: ``--lr``, ``lr``, ``NAME``, ``b`` of ``a.b``."""
    kind, _, name = key.partition(":")
    if kind == "key":
        name = name.partition(":")[2]
    return name if kind == "flag" else name.rpartition(".")[2]


def _global(key: str) -> bool:
    """A flag or a variable is the project's wherever it is read: named in the added lines, it moved."""
    return key.startswith(("flag:", "env:"))


def option_breaking(options: OptionChanges | None, f: Facts, t: dict[str, str]) -> Evidence:
    if options is None or options.empty:
        return None
    # Still named by the project's code or docs: moved where this PR's files do not show, not removed.
    mentioned = " ".join(line for d in f.diffs_where(lambda p: not is_test(p)) for line in d.added)
    owners = {OptionChanges.owner(k) for k in options.added}
    removed = [
        k
        for k in sorted(options.removed)
        if (k.partition(":")[0] in _SET_BY_USERS or OptionChanges.owner(k) in options.kept)
        and not (_global(k) and re.search(rf"(?<![\w-]){re.escape(_bare(k))}(?![\w-])", mentioned))
    ]
    if removed:
        path = options.paths.get(removed[0], "")
        renamed = next(
            (a for a in sorted(options.added) if OptionChanges.owner(a) == OptionChanges.owner(removed[0])),
            None,
        )
        # A flag or a variable has no owner but the project: another one added is no rename of it.
        if renamed is not None and OptionChanges.owner(removed[0]) in owners and not _global(removed[0]):
            text = t["ev_option_renamed"].format(path=path, old=shown(removed[0]), new=shown(renamed))
            return text, "diff"
        more = f" (+{len(removed) - SHOWN})" if len(removed) > SHOWN else ""
        names = ", ".join(shown(k) for k in removed[:SHOWN]) + more
        return t["ev_option_removed"].format(path=path, names=names), "diff"
    for key, (old, new) in sorted(options.changed.items()):
        if old and new and LITERAL.match(old) and LITERAL.match(new):
            return t["ev_config_default"].format(
                name=shown(key), old=old, new=new, path=options.paths.get(key, "")
            ), "diff"
    return None
