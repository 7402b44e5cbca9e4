"""What a source is to the rest of prdigest: the `Source` protocol (which source a repository reads is
sources/registry.py's).

The pipeline, the chat handlers and the weekly delivery use a source only through this protocol; they
never ask which kind it is, and reports name it by its kind's label. A new kind of source (GitLab,
Gitea) is a class that implements it, a factory in the registry's `FACTORIES`, and its kind registered
where it is defined (`prdigest.subscription.register_source_kind`: its label in each language, the
settings table it reads). The settings it needs, a table of its own, are config's.

A source says what it cannot supply (`unavailable`: reviews, labels, checks, forks ... a clone knows
none of them) rather than answering "none": an unknown field is None, never an empty list, which would
mean "there were none" (models.py), and up to when what it gives is complete (`extent`): a clone up to
its last fetch, a fixture file for the period it says it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Protocol

from prdigest.clock import utc_now
from prdigest.models import PullRequest, Window

if TYPE_CHECKING:
    from prdigest.config.models import AttentionSettings
    from prdigest.models import Attention
    from prdigest.storage import Store


# What a caller does with each batch of PRs a source is about to store: it returns their summaries by uid
# (an analysis's), stored with the PRs that are new to the cache (the full-text index reads each once).
BatchHook = Callable[[list[PullRequest]], Mapping[str, str]]


class Source(Protocol):
    """Where one repository's merged PRs come from.

    A class may implement the protocol structurally or inherit from it for `read_into`, which brings
    a window into the cache from `fetch` and `extent` (a source with a smarter read overrides it)."""

    kind: str  # how reports and replies name it: "git", "fixture", "github", ...
    repo: str  # OWNER/NAME
    unavailable: tuple[str, ...]  # the PR fields it cannot supply (None in its PRs: unknown, not none)
    # Whether reading the periods before a report (the trend chart's) is cheap: a local source reads
    # them in a moment; a remote one keeps its request budget for the report's own window.
    reads_history: ClassVar[bool] = True
    # Whether `fetch_pr` looks for a PR beyond what the source was given to read (a clone's whole
    # history, GitHub): `explain` asks it for a PR the cache lacks, and says where it looked.
    finds_prs: ClassVar[bool] = True

    def fetch(self, window: Window) -> list[PullRequest]:
        """The PRs merged in the window, oldest first."""
        ...

    def fetch_pr(self, number: int) -> PullRequest | None:
        """One merged PR by number; None when the source knows no such PR."""
        ...

    def diff(self, number: int, store: Store | None = None) -> str | None:
        """The diff excerpt of a PR that carries none (see `parsing.excerpt`), cached in ``store`` when
        it costs a request; None when the source has none to give (its PRs carry theirs)."""
        ...

    def newest_merged(self) -> tuple[int, datetime] | None:
        """The number and merge time of the newest merged PR; None when there is none."""
        ...

    def extent(self) -> tuple[datetime | None, datetime | None]:
        """The span the source holds completely: from (None: its beginning) until (None: now)."""
        ...

    def read_into(self, store: Store, window: Window, each_batch: BatchHook | None = None) -> list[str]:
        """Bring the window into the cache and record the days read completely; warnings for the report
        (a partial read). A source that reads in batches gives ``each_batch`` each batch as it stores it
        (the pipeline analyses it while the source reads on); one that does not may ignore it."""
        return read_complete(store, self, window, each_batch=each_batch)

    def read_for_counts(self, window: Window) -> Iterable[PullRequest] | None:
        """The window's PRs for figures that only count them (merged PRs, lines, authors, their files),
        read at less cost than `read_into` reads them and not for the cache: they may lack what an
        analysis reads (a clone's: diff excerpts and options). None when the source has no cheaper read."""
        return None

    def reading_ahead(self, whole: list[Window], counted: list[Window]) -> AbstractContextManager[object]:
        """Within the block, the source may start reading the windows the caller reads next (``whole`` by
        `read_into`, ``counted`` by `read_for_counts`) while the caller does other work: a read of one of
        them then finds it under way; what is not read by the end of the block is dropped. A source that
        cannot read ahead does nothing."""
        return nullcontext()

    def attention(self, thresholds: AttentionSettings, now: datetime) -> Attention | None:
        """The open PRs that need someone now, and the default branch's checks; None when the source
        cannot tell (a clone knows nothing of open PRs)."""
        return None

    def begins(self) -> datetime | None:
        """When the repository's history begins (its first commit), where the source knows it: no period
        before it is compared with a report's; None when it cannot tell."""
        return None

    def points_spent(self) -> int:
        """The request points the source has spent so far (GitHub's rate-limit cost); 0 for one that
        costs none."""
        return 0

    def repo_file(self) -> str | None:
        """The text of the repository's own ``.prdigest.toml``: "" when it has none, None when the
        source cannot read it."""
        return None


def read_complete(
    store: Store,
    source: Source,
    window: Window,
    prs: Iterable[PullRequest] | None = None,
    each_batch: BatchHook | None = None,
) -> list[str]:
    """A source that reads a window whole: its PRs (``prs``, as the source streams them, else its
    `fetch`) stored, the days it holds recorded as read."""
    from prdigest.storage import coverage

    read_at = utc_now()
    store.upsert_prs(source.fetch(window) if prs is None else prs, each_batch)
    coverage.record(store, source.repo, source.kind, *read_span(source, window, read_at))
    return []


def read_span(source: Source, window: Window, read_at: datetime) -> tuple[datetime, datetime]:
    """What a read of the window that began at ``read_at`` gave completely: [start, end), within the
    source's extent (empty when end <= start)."""
    since, until = source.extent()
    start = max(window.start, since) if since is not None else window.start
    end = min(window.end, until, read_at) if until is not None else min(window.end, read_at)
    return start, end
