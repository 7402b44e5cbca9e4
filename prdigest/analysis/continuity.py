"""Themes that continue: a theme of the week carries on from earlier PRs that changed its files or its
subsystem, or that its PRs name.

"Carry on" is decided from the code and the references alone, so it holds for any repository:
- a PR of the theme names an earlier PR ("follow-up to #12", a revert, the source's related list), or
- the earlier PRs changed at least two of the theme's files, or
- an earlier PR changed files in the theme's subsystem (the deepest folder most of its PRs share).
Files and folders most of the earlier PRs touch and other PRs of the week touch too (a changelog, a
repository-wide `src/`) tell nothing and are left out once there are enough earlier PRs to tell; the
code of a theme that made most of the earlier weeks' work still carries it on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from prdigest.analysis.story_features import features
from prdigest.models import PullRequest, Theme

MAX_NAMED = 5  # earlier PRs a theme names, the most relevant first
MIN_SHARED_FILES = 2
COMMON_FROM = 4  # with this many earlier PRs or more, what most of them touch is too common to tell
W_REFERENCE = 3.0  # a named PR outweighs any overlap of code


def continue_themes(
    themes: Iterable[Theme], prs: Sequence[PullRequest], earlier: Sequence[PullRequest]
) -> None:
    """Set each theme's ``continues``: the earlier PRs it carries on from, or None for a new theme."""
    by_number = {p.number: p for p in prs if p.number is not None}
    before = [p for p in earlier if p.number is not None and p.number not in by_number]
    common = _too_common(before)
    for theme in themes:
        own = [by_number[n] for n in theme.prs if n in by_number]
        others = {key for n, p in by_number.items() if n not in theme.prs for key in _keys(p)}
        named = _carried_from(own, before, common & others)
        theme.continues = named or None


def _too_common(earlier: Sequence[PullRequest]) -> set[str]:
    """The files and folders more than half of the earlier PRs touch."""
    if len(earlier) < COMMON_FROM:
        return set()
    seen = Counter(key for p in earlier for key in _keys(p))
    return {key for key, n in seen.items() if n * 2 > len(earlier)}


def _keys(pr: PullRequest) -> set[str]:
    """The files and folders a PR changes."""
    return {*features(pr).files, *features(pr).dirs}


def subsystem(prs: Sequence[PullRequest]) -> str | None:
    """The deepest folder at least half of the PRs change files in, if any."""
    counts = Counter(d for p in prs for d in features(p).dirs)
    shared = [d for d, n in counts.items() if n * 2 >= len(prs)]
    return max(shared, key=lambda d: (d.count("/"), counts[d], d)) if shared else None


def _carried_from(own: Sequence[PullRequest], earlier: Sequence[PullRequest], common: set[str]) -> list[int]:
    refs = {n for p in own for n in features(p).refs}
    files = {f for p in own for f in features(p).files} - common
    home = subsystem(own)
    home = None if home in common else home
    shared_files = {f for p in earlier for f in features(p).files} & files
    scores: dict[int, float] = {}
    for p in earlier:
        assert p.number is not None  # `continue_themes` passes PRs only
        feats = features(p)
        score = W_REFERENCE * (p.number in refs)
        if len(shared_files) >= MIN_SHARED_FILES:
            score += len(shared_files & feats.files.keys())
        if home is not None and home in feats.dirs:
            score += 1
        if score:
            scores[p.number] = score
    ranked = sorted(scores, key=lambda n: (-scores[n], -n))  # the most relevant, then the latest
    return ranked[:MAX_NAMED]
