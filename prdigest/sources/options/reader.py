"""The options a commit changed, from its definition files' texts before and after, however a source
reads them (a clone's `git cat-file`, GitHub's `object(expression:)`): each text's options are kept by its
content, so a file the window's PRs leave alone is parsed once."""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from functools import cached_property

from prdigest.models import FileChange, OptionChanges
from prdigest.sources.options import MAX_FILES, Sides, is_definition, option_changes, options_of
from prdigest.sources.options.patch import Touched
from prdigest.sources.options.python import touched_blocks

KEPT = 20_000  # texts whose options are remembered


class OptionReader(ABC):
    """Reads ``<commit>:<path>`` texts (`text`) and says what a commit changed of the options in them."""

    def __init__(self) -> None:
        self._options: dict[tuple[str, str], dict[str, str]] = {}

    @abstractmethod
    def text(self, spec: str) -> tuple[str, str] | None:
        """(blob id, text) of ``<commit>:<path>``; None when it is absent, not a file or too large."""

    def prefetch(self, specs: list[str]) -> None:  # noqa: B027 - a reader that asks one at a time keeps it
        """Ask for the texts ``specs`` name at once, where a reader can: the reads that follow find them."""

    def options(self, commit: str, path: str, spans: list[tuple[int, int]] | None) -> dict[str, str] | None:
        """The options ``path`` exposes at ``commit``, in the top-level blocks ``spans`` touch (None: the
        whole file); None when it is not there."""
        found = self.text(f"{commit}:{path}")
        if found is None:
            return None
        pieces = touched_blocks(found[1], spans) if spans is not None and path.endswith(".py") else [found[1]]
        out: dict[str, str] = {}
        for piece in pieces:
            key = (hashlib.blake2b(piece.encode(), digest_size=16).hexdigest(), path)
            if key not in self._options:
                if len(self._options) >= KEPT:
                    self._options.clear()
                self._options[key] = options_of(path, piece)
            out.update(self._options[key])
        return out

    def changes(
        self,
        commit: str,
        parent: str | None,
        files: Iterable[FileChange],
        defining: Mapping[str, Touched | None],
    ) -> OptionChanges:
        """What the commit changed of the options its definition files expose; ``defining``: the files
        whose removed lines could define one (`defining_files`; None: anywhere in the file). Only those
        are read, unless they lose an option: then every definition file of the commit, whole, where it
        may have gone."""
        definitions = [f for f in files if is_definition(f.path) or is_definition(f.previous_path or "")]
        first = [f for f in definitions if f.path in defining or f.status == "removed"][:MAX_FILES]
        self.prefetch([f"{at}:{path}" for f in first for at, path in _read_at(commit, parent, f) if at])
        sides = [self._sides(commit, parent, f, defining.get(f.path)) for f in first]
        found = option_changes(sides)
        if all(k.startswith("param:") for k in found.removed):
            return found  # none, or parameters: their functions' new signatures are in the blocks read
        # Where a removed option may have gone: anywhere in the commit's definition files. Its name in
        # their text is enough to say it stayed (nothing is parsed for it).
        texts = [self.text(f"{commit}:{f.path}") for f in definitions if f.status != "removed"][:MAX_FILES]
        after = "\n".join(found[1] for found in texts if found is not None)
        read = {OptionChanges.owner(k) for k in found.added} | set(found.kept)  # owners in the blocks read
        named = Named(after)
        gone = {k: v for k, v in found.removed.items() if not still_named(k, named, read)}
        return found.model_copy(update={"removed": gone})

    def _sides(self, commit: str, parent: str | None, f: FileChange, touched: Touched | None) -> Sides:
        """(path before, path after, options before, options after) of one file, in the blocks the commit
        touched (``touched`` None: the whole file); ``parent`` None: its options after alone."""
        (before_at, before_path), (after_at, after_path) = _read_at(commit, parent, f)
        before = (
            self.options(before_at, before_path, None if touched is None else touched.before)
            if before_at
            else None
        )
        if parent is not None and not before:
            return before_path, after_path, before, None  # it exposed nothing: it changed none
        after = (
            self.options(after_at, after_path, None if touched is None else touched.after)
            if after_at
            else None
        )
        return before_path, after_path, before, after


def _read_at(
    commit: str, parent: str | None, f: FileChange
) -> tuple[tuple[str | None, str], tuple[str | None, str]]:
    """Where a file's two sides are read: (commit, path) before and after; no commit where that side
    is not read (an added file has none before, a removed one none after; ``parent`` None: a root commit)."""
    before = parent if parent and f.status != "added" else None
    after = commit if f.status != "removed" else None
    return (before, f.previous_path or f.path), (after, f.path)


class Named:
    """What a commit's definition files still name (``text``: their texts): the classes they define and
    the names that open an indented line as a field's annotation does, each scanned for once, however many
    options the commit lost (the texts run to megabytes)."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def classes(self) -> set[str]:
        return set(_CLASS.findall(self.text))

    @cached_property
    def annotated(self) -> set[str]:
        return set(_ANNOTATED.findall(self.text))


# Within a line: a pattern whose spaces could run across lines would retry every run of blank lines.
_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.M)
_ANNOTATED = re.compile(r"^[ \t]+(\w+)[ \t]*:", re.M)


def still_named(key: str, named: Named, read: set[str]) -> bool:
    """Whether the texts still name the option ``key``: its quoted flag or variable anywhere; a field, when
    its class was not among the blocks read (``read``: their owners) but is still defined with it."""
    kind, _, name = key.partition(":")
    if kind in ("flag", "env"):
        return f'"{name}"' in named.text or f"'{name}'" in named.text
    if kind == "field" and OptionChanges.owner(key) not in read:
        cls, _, attr = name.rpartition(".")
        text = named.text  # most lost fields are gone from the texts: no scan for them
        return cls in text and attr in text and cls in named.classes and attr in named.annotated
    return False  # a config key, a parameter, a field of a class read: as the blocks read say
