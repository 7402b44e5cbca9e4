"""Themes that continue: a theme of the week carries on from earlier PRs that changed its files or its
subsystem, or that its PRs name.

"Carry on" is decided from the code and the references alone, so it holds for any repository:
- a PR of the theme names an earlier PR ("follow-up to #12", a revert, the source's related list), or
- the earlier PRs changed at least two of the theme's files, or
- an earlier PR changed code in the theme's subsystem (the folder its story is told of).
A file or folder most of the earlier PRs changed, and other PRs of the week too (a changelog, a
repository-wide `src/`), tells nothing and is left out once there are enough earlier PRs to tell; the
code of a theme that made most of the earlier weeks' work still carries it on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from prdigest.analysis.stories.features import features
from prdigest.analysis.stories.text import subsystem
from prdigest.models import PullRequest, Theme

MAX_NAMED = 5  # earlier PRs a theme names, the most relevant first
MIN_SHARED_FILES = 2
COMMON_FROM = 4  # with this many earlier PRs or more, what most of them change is too common to tell
W_REFERENCE = 3.0  # a named PR outweighs any overlap of code


def continue_themes(
    themes: Iterable[Theme], prs: Sequence[PullRequest], earlier: Sequence[PullRequest]
) -> None:
    """Set each theme's ``continues``: the earlier PRs it carries on from, or None for a new theme."""
    by_number = {p.number: p for p in prs if p.number is not None}
    before = [p for p in earlier if p.number is not None and p.number not in by_number]
    for theme in themes:
        own = [by_number[n] for n in theme.prs if n in by_number]
        others = [p for n, p in by_number.items() if n not in theme.prs]
        named = _carried_from(own, before, others)
        theme.continues = named or None


def _common(
    changed: Callable[[PullRequest], bool], earlier: Sequence[PullRequest], others: list[PullRequest]
) -> bool:
    """Whether what ``changed`` tests is changed by most earlier PRs and by other PRs of the week."""
    many = len(earlier) >= COMMON_FROM and sum(map(changed, earlier)) * 2 > len(earlier)
    return many and any(map(changed, others))


def _carried_from(
    own: list[PullRequest], earlier: Sequence[PullRequest], others: list[PullRequest]
) -> list[int]:
    refs = {n for p in own for n in features(p).refs}
    files = {f for p in own for f in features(p).files}
    files = {f for f in files if not _common(_changes(f), earlier, others)}
    home = subsystem(own)
    if home is not None and _common(_changes_in(home), earlier, others):
        home = None
    shared_files = {f for p in earlier for f in features(p).files} & files
    scores: dict[int, float] = {}
    for p in earlier:
        assert p.number is not None  # `continue_themes` passes PRs only
        score = W_REFERENCE * (p.number in refs)
        if len(shared_files) >= MIN_SHARED_FILES:
            score += len(shared_files & features(p).files.keys())
        if home is not None and _changes_in(home)(p):
            score += 1
        if score:
            scores[p.number] = score
    ranked = sorted(scores, key=lambda n: (-scores[n], -n))  # the most relevant, then the latest
    return ranked[:MAX_NAMED]


def _changes(path: str) -> Callable[[PullRequest], bool]:
    return lambda pr: path in features(pr).files


def _changes_in(folder: str) -> Callable[[PullRequest], bool]:
    return lambda pr: any(path.startswith(folder + "/") for path in features(pr).files)
