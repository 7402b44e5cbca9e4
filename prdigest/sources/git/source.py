"""Merged PRs read from a local clone: the first-parent history of its default branch.

A squash merge ("title (#123)") and a merge commit ("Merge pull request #123 from
...") each become one PullRequest; a first-parent commit with no PR number is a
direct push. A clone knows nothing of reviews, labels, forks or checks: those
fields stay None (unknown).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from prdigest.config.repo_file import FILE_NAME
from prdigest.errors import SourceError
from prdigest.i18n import texts
from prdigest.models import PullRequest, Window
from prdigest.sources.base import BatchHook, Source, read_complete
from prdigest.sources.git.blobs import Blobs
from prdigest.sources.git.commits import CO_AUTHOR, FORMAT, MERGE, SQUASH, Commit, header, named, options
from prdigest.sources.git.people import identity
from prdigest.sources.git.remote import origin, web_url
from prdigest.sources.git.walks import CONFIG, Walks
from prdigest.sources.parsing import references

if TYPE_CHECKING:
    from prdigest.storage import Store

# PRs resolved and handed to the cache at a time: bounds the memory a window of any size takes.
BATCH = 500


UNAVAILABLE = ("labels", "reviews", "review_threads", "comments", "checks", "is_fork", "created_at")


class GitSource(Source):
    """Reads merged PRs from a local clone: complete up to its last fetch; its PRs carry their diffs."""

    kind = "git"
    unavailable = UNAVAILABLE

    def __init__(
        self,
        path: str | Path,
        repo: str | None = None,
        ref: str | None = None,
        lang: str = "en",
        web: str = "https://github.com",
        logins: Mapping[str, str] | None = None,
    ):
        """``repo`` names the repository (else the origin remote does, else ``local/<folder>``); a named
        one's PRs link to ``web`` (GitHub's, or a GitHub Enterprise host's), unless origin is on GitHub.
        ``logins`` names the authors of these emails (casefolded) by their GitHub login."""
        self.path = Path(path).expanduser()
        self.lang = lang  # of the read's warnings
        self.logins = dict(logins or {})
        if not self.path.is_dir():
            raise SourceError(f"{self.path} is not a directory")
        inside = self._git("rev-parse", "--is-inside-work-tree", check=False)
        bare = self._git("rev-parse", "--is-bare-repository", check=False)
        if inside.strip() != "true" and bare.strip() != "true":
            raise SourceError(f"{self.path} is not a git repository")
        self.ref = ref or self._default_ref()
        host, named = origin(self._remote_url())
        self.repo = repo or named or f"local/{self.path.resolve().name}"
        self.web_url = web_url(self.repo, host, web if repo else None)
        self._walks = Walks(self.path, self.ref, self._git)

    # --- git ------------------------------------------------------------------

    def _git(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        try:
            proc = subprocess.run(
                ["git", "-C", str(self.path), *args],
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=600,
            )
        except FileNotFoundError:
            raise SourceError("git is not installed (needed to read a local clone)") from None
        if check and proc.returncode != 0:
            raise SourceError(f"git {args[0]} failed in {self.path}: {proc.stderr.strip()}")
        return proc.stdout if proc.returncode == 0 else ""

    def _default_ref(self) -> str:
        origin_head = self._git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False).strip()
        if origin_head:
            return origin_head
        if not self._git("rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
            raise SourceError(f"{self.path} has no commits")
        return "HEAD"

    def _remote_url(self) -> str:
        return self._git("remote", "get-url", "origin", check=False).strip()

    # --- reading --------------------------------------------------------------

    def fetch(self, window: Window) -> list[PullRequest]:
        """PRs and direct pushes merged in the window, oldest first."""
        return sorted(self.stream(window), key=lambda pr: pr.merged_at)

    def read_into(self, store: Store, window: Window, each_batch: BatchHook | None = None) -> list[str]:
        """The window into the cache; a shallow clone's boundary commits in it are named as left out."""
        left_out: list[Commit] = []
        read_complete(store, self, window, self.stream(window, left_out), each_batch)
        if not left_out:
            return []
        commits = ", ".join(named(c) for c in left_out)
        return [texts(self.lang)["shallow_boundary"].format(repo=self.repo, commits=commits)]

    def stream(self, window: Window, left_out: list[Commit] | None = None) -> Iterator[PullRequest]:
        """The window's PRs as git gives them (newest first), with their diff excerpts, in batches: a
        window of any size is read in bounded memory (each commit's patch is dropped once excerpted).
        A shallow clone's boundary commits are not PRs of it: their diff would be the whole tree (their
        parents were not fetched); they go to ``left_out``."""
        batch: list[tuple[Commit, str | None]] = []
        blobs = Blobs(self.path, CONFIG)
        try:
            for commit, excerpted in self._walks.commits(blobs, *_bounds(window)):
                if commit.sha in self._boundary:
                    if left_out is not None and window.contains(commit.committed_at):
                        left_out.append(commit)
                elif window.contains(commit.committed_at):
                    batch.append((commit, excerpted))
                if len(batch) == BATCH:
                    yield from self._prs(batch, blobs)
                    batch = []
            yield from self._prs(batch, blobs)
        finally:
            blobs.close()

    def read_for_counts(self, window: Window) -> Iterator[PullRequest]:
        """The window's PRs as `stream` gives them, without diff excerpts or options: one walk of each
        commit's files and line counts, no patch and no file read (on trl's history a third of the walks'
        CPU and none of the excerpts' and options' parsing), for figures that only count them."""
        batch: list[tuple[Commit, str | None]] = []
        for commit in self._walks.changes(*_bounds(window)):
            if commit.sha not in self._boundary and window.contains(commit.committed_at):
                batch.append((commit, None))
            if len(batch) == BATCH:
                yield from self._prs(batch, None)
                batch = []
        yield from self._prs(batch, None)

    def _prs(self, batch: list[tuple[Commit, str | None]], blobs: Blobs | None) -> Iterator[PullRequest]:
        branch_authors = self._authors([c.parents[1] for c, _ in batch if len(c.parents) > 1])
        for commit, excerpted in batch:
            yield self._to_pr(commit, excerpted, branch_authors, blobs)

    def reading_ahead(self, whole: list[Window], counted: list[Window]) -> AbstractContextManager[object]:
        """The walks of the windows read next (`stream`'s for ``whole``, that of `read_for_counts` for
        ``counted``), the first started at once, each next one as the walks before it end (`WalksAhead`)."""
        return self._walks.ahead([_bounds(w) for w in whole], [_bounds(w) for w in counted])

    def fetch_pr(self, number: int) -> PullRequest | None:
        """One PR by number, from anywhere in the first-parent history; None when no commit names it."""
        grep = ("--fixed-strings", f"--grep=(#{number})", f"--grep=Merge pull request #{number} ")
        blobs = Blobs(self.path, CONFIG)
        try:
            for commit, excerpted in self._walks.commits(blobs, *grep):
                pr = self._to_pr(commit, excerpted, self._authors(commit.parents[1:2]), blobs)
                if pr.number == number:
                    return pr
        finally:
            blobs.close()
        return None

    def known_until(self) -> datetime | None:
        """Up to when the clone can know the remote's merges: its last fetch, for a remote-tracking ref
        (a clone fetched last week lacks this week's PRs); None for a local branch, complete up to now."""
        if not self.ref.startswith("refs/remotes/"):
            return None
        git_dir = Path(self._git("rev-parse", "--absolute-git-dir").strip())
        touched = [git_dir / "FETCH_HEAD", git_dir / "packed-refs", git_dir / self.ref]
        times = [p.stat().st_mtime for p in touched if p.exists()]
        return datetime.fromtimestamp(max(times), UTC) if times else None

    def extent(self) -> tuple[datetime | None, datetime | None]:
        """A full clone holds its whole history; a shallow one only what was merged after its boundary."""
        return self._shallow_since(), self.known_until()

    @cached_property
    def _boundary(self) -> frozenset[str]:
        """A shallow clone's boundary commits (listed in its `shallow` file): none in a full clone, whose
        root commit is read like any other."""
        listed = Path(self._git("rev-parse", "--git-path", "shallow").strip())
        shallow = listed if listed.is_absolute() else self.path / listed
        return frozenset(shallow.read_text().split()) if shallow.is_file() else frozenset()

    def begins(self) -> datetime | None:
        """A full clone's first commit; None for a shallow one, whose history before its boundary is
        unknown (`extent` says where what it holds begins)."""
        if self._boundary:
            return None
        return min((when for sha, when in self._roots if sha not in self._boundary), default=None)

    def _shallow_since(self) -> datetime | None:
        """Just after the boundary commit the branch's first-parent history stops at (None: a full clone)."""
        if not self._boundary:
            return None
        times = [when for sha, when in self._roots if sha in self._boundary]
        return max(times) + timedelta(seconds=1) if times else None

    @cached_property
    def _roots(self) -> list[tuple[str, datetime]]:
        """The commits the branch's first-parent history stops at, with their times."""
        roots = self._git("log", "--first-parent", "--max-parents=0", "--format=%H %cI", self.ref)
        return [
            (sha, datetime.fromisoformat(when))
            for sha, _, when in (line.partition(" ") for line in roots.splitlines())
        ]

    def diff(self, number: int, store: Store | None = None) -> str | None:
        return None  # a clone's PRs carry their diff excerpts

    def repo_file(self) -> str | None:
        """The repository's .prdigest.toml on the branch its reports read ("" when it has none)."""
        if not self._git("ls-tree", "--full-tree", "--name-only", self.ref, "--", FILE_NAME).strip():
            return ""
        return self._git("show", f"{self.ref}:{FILE_NAME}")

    def newest_merged(self) -> tuple[int, datetime] | None:
        """The number and merge time of the clone's newest PR (a direct push is none); None if it has none."""
        for chunk in self._walks.log(f"--format={FORMAT}", "-z", self.ref):
            pr = self._to_pr(header(chunk.partition("\0")[0]), None, {})
            if pr.number is not None:
                return pr.number, pr.merged_at
        return None

    def _authors(self, shas: list[str]) -> dict[str, tuple[str, str]]:
        """Author (name, email) of the branch tips that merge commits brought in."""
        if not shas:
            return {}
        out = self._git("show", "--no-patch", "--no-walk", "--format=%H%x1f%aN%x1f%aE", *shas)
        authors = {}
        for line in out.splitlines():
            sha, name, email = line.split("\x1f")
            authors[sha] = (name, email)
        return authors

    def _to_pr(
        self,
        c: Commit,
        excerpt: str | None,
        branch_authors: dict[str, tuple[str, str]],
        blobs: Blobs | None = None,
    ) -> PullRequest:
        subject, _, body = c.message.strip().partition("\n")
        body = body.strip()
        number: int | None = None
        author = (c.author_name, c.author_email)
        merged_by = None
        merge = MERGE.match(subject)
        if merge and len(c.parents) > 1:
            number = int(merge.group(1))
            title, _, body = body.partition("\n")
            title = title.strip() or subject
            body = body.strip()
            merged_by = identity(c.author_name, c.author_email, self.logins)
            author = branch_authors.get(c.parents[1], author)
        else:
            squash = SQUASH.search(subject)
            if squash:
                number = int(squash.group(1))
                subject = subject[: squash.start()]
            title = subject.strip()
        co_authors = [m.strip() for m in CO_AUTHOR.findall(body)]
        related = sorted(references(f"{title}\n{body}") - {number})
        return PullRequest(
            repo=self.repo,
            number=number,
            sha=c.sha,
            title=title,
            body=body,
            author=identity(*author, self.logins),
            merged_at=c.committed_at,
            merged_by=merged_by,
            base_branch=self.ref.removeprefix("refs/remotes/origin/") if self.ref != "HEAD" else None,
            additions=sum(f.additions or 0 for f in c.files),
            deletions=sum(f.deletions or 0 for f in c.files),
            files=c.files,
            diff_excerpt=excerpt,
            co_authors=co_authors,
            related=related,
            url=f"{self.web_url}/pull/{number}" if self.web_url and number else None,
            source="git",
            options=options(blobs, c) if blobs else None,
        )


def _bounds(window: Window) -> tuple[str, str]:
    """The walk's filters for a window. --since stops the walk at the first old commits and may stop early
    on skewed clocks: read a margin before, filter exactly. --until only filters: a margin after would read
    (and diff) the next days' commits for nothing, a week's worth when the history reads the weeks before
    a report."""
    return f"--since={(window.start - timedelta(days=2)).isoformat()}", f"--until={window.end.isoformat()}"
