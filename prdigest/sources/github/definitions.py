"""The options a PR changed, for the GitHub source: the texts of its definition files at its merge commit
and at that commit's first parent (``<oid>^``), read with ``object(expression:)`` in the requests that
complete a batch (models.Reader), then judged as a clone's are (sources/options/reader.py).

A PR whose definition files lost no line cannot have removed an option or changed a default: it costs
no read. A text GitHub did not give (an error, the sync's budget of texts spent) leaves the PR's
options unknown (None), never read as a file that is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prdigest.models import FileChange, OptionChanges, PullRequest
from prdigest.sources.options import MAX_BLOB, MAX_FILES, is_definition
from prdigest.sources.options.reader import OptionReader

MAX_TEXTS = 1_000  # file texts one sync reads; the PRs past it are judged without their options

Texts = dict[str, tuple[str, str] | None]  # spec -> (blob id, text); None: absent, binary or too large


def _losing(files: Sequence[FileChange]) -> list[str]:
    """The definition files that lost a line: where an option can have gone or changed its default."""
    return [f.path for f in files if is_definition(f.path) and (f.deletions or f.status == "removed")]


def wanted(sha: str | None, files: Sequence[FileChange]) -> list[str]:
    """The ``<commit>:<path>`` texts the options a PR merged as ``sha`` changed are read from: before,
    its definition files that lost a line; after, all of them (where a removed option may have gone)."""
    losing = set(_losing(files))
    if not sha or not losing:
        return []
    definitions = [f for f in files if is_definition(f.path)][:MAX_FILES]
    before = [f"{sha}^:{f.path}" for f in definitions if f.path in losing and f.status != "added"]
    return before + [f"{sha}:{f.path}" for f in definitions if f.status != "removed"]


def blob(node: dict[str, Any] | None) -> tuple[str, str] | None:
    """(blob id, text) of an ``object(expression:)`` answer; None when it is no readable text."""
    if not node or node.get("__typename") != "Blob" or node.get("isBinary") or node.get("isTruncated"):
        return None
    if node.get("text") is None or not node.get("oid") or (node.get("byteSize") or 0) > MAX_BLOB:
        return None
    return node["oid"], node["text"]


class FetchedTexts(OptionReader):
    """The texts a sync read; asking for one it did not read marks the answer unknown."""

    def __init__(self, texts: Texts):
        super().__init__()
        self.texts = texts
        self.unknown = False

    def text(self, spec: str) -> tuple[str, str] | None:
        if spec not in self.texts:
            self.unknown = True
            return None
        return self.texts[spec]

    def changes_of(self, pr: PullRequest) -> OptionChanges | None:
        """What ``pr`` changed of its options; None when a text it needs was not read."""
        if not pr.sha or pr.files is None:
            return None
        losing = _losing(pr.files)
        if not losing:
            return OptionChanges()
        self.unknown = False
        found = self.changes(pr.sha, f"{pr.sha}^", pr.files, dict.fromkeys(losing))
        return None if self.unknown else found
