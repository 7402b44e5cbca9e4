"""A first-parent commit as the git source reads it: its header fields, files, blob ids and the options it
changed; and how a warning names it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from prdigest.models import FileChange, OptionChanges
from prdigest.sources.git.blobs import Blobs
from prdigest.sources.git.output import BlobIds
from prdigest.sources.options.patch import Touched

# A commit's header fields; \x1e starts a commit, \x1f separates fields, -z ends it with NUL.
FORMAT = "%x1e%H%x1f%P%x1f%aN%x1f%aE%x1f%cI%x1f%B"  # %aN/%aE: the repository's .mailmap applies
SQUASH = re.compile(r"(?<!\s)\s*\(#(\d+)\)\s*$")  # no restart inside a run of spaces
MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")
CO_AUTHOR = re.compile(r"^co-authored-by:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author_name: str
    author_email: str
    committed_at: datetime
    message: str
    files: list[FileChange] = field(default_factory=list)
    # The files whose removed lines could define an option, with the lines the commit changed there.
    defining: dict[str, Touched] = field(default_factory=dict)
    blobs: dict[str, BlobIds] = field(default_factory=dict)  # each file's blob ids, by its path after


def header(text: str) -> Commit:
    """The commit of a `FORMAT` header."""
    sha, parents, name, email, committed, message = text.lstrip("\x1e").split("\x1f", 5)
    return Commit(
        sha=sha,
        parents=parents.split(),
        author_name=name,
        author_email=email,
        committed_at=datetime.fromisoformat(committed),
        message=message,
    )


def options(blobs: Blobs, c: Commit) -> OptionChanges:
    """What the commit changed of the options its files expose, their texts read by the blob ids its walk
    gave (a blob two commits share is read once)."""
    parent = c.parents[0] if c.parents else None
    ids: dict[str, str] = {}
    for f in c.files:
        blob = c.blobs.get(f.path)
        if blob is not None and blob.after is not None:
            ids[f"{c.sha}:{f.path}"] = blob.after
        if blob is not None and blob.before is not None and parent is not None:
            ids[f"{parent}:{f.previous_path or f.path}"] = blob.before
    blobs.expect(ids)
    return blobs.changes(c.sha, parent, c.files, c.defining)


def named(commit: Commit) -> str:
    """How a warning names a commit: its PR number where its subject gives one, else its short sha."""
    subject = commit.message.strip().partition("\n")[0]
    found = SQUASH.search(subject) or MERGE.match(subject)
    return f"#{found.group(1)}" if found else commit.sha[:10]
