"""Themes that continue: a theme of the week carries on from the earlier PRs tied to it, by a reference or
by the same named feature in the same code; a theme with no tie is new.

A tie is read from the references, the titles and the code alone, so it holds for any repository:
- a reference: a PR of the theme names the earlier PR ("follow-up to #12", a revert, the source's
  related list), or the earlier PR names a PR of the theme as what it fixes or follows; or
- the same feature in the same code: the earlier PR's title says most of the theme's name, the rarer
  words weighing more (its topic: the words of its title, less the kind it names, that its PRs' titles
  say; for a title in other words, those at least two of its PRs' titles share; never a generic word),
  and the earlier PR changed one of the theme's files or code in its subsystem (the folder its story is
  told of).
Shared files or a shared folder alone tie nothing: a busy folder's PRs are mostly about other things.
A file, folder or word most of the earlier PRs have, and other PRs of the week too (a changelog, a
repository-wide `src/`), tells nothing and is left out once there are enough earlier PRs to tell.
An earlier PR carries on one theme at most, the one it ties best: a reference over a shared word, rarer
words over commoner ones, then more shared code; among equals the theme listed first (the weightiest).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from prdigest.analysis.stories.features import features, generic_for, tokens
from prdigest.analysis.stories.text import subsystem
from prdigest.i18n.stories import TEXT
from prdigest.models import PullRequest, Theme

MAX_NAMED = 5  # earlier PRs a theme names, the most relevant first
COMMON_FROM = 4  # with this many earlier PRs or more, what most of them have is too common to tell
# What a theme's title says of its kind ("a run of fixes"), longest first: not its topic.
_KINDS = sorted(
    {text for t in TEXT.values() for key, text in t.items() if key.startswith("story_kind_")},
    key=len,
    reverse=True,
)

# How an earlier PR ties a theme, compared as a tuple: referenced, the rarity of the words both name, the
# files and subsystem both change.
Tie = tuple[bool, float, int]


def continue_themes(
    themes: Iterable[Theme], prs: Sequence[PullRequest], earlier: Sequence[PullRequest]
) -> None:
    """Set each theme's ``continues``: the earlier PRs it carries on from, or None for a new theme."""
    themes = list(themes)
    by_number = {p.number: p for p in prs if p.number is not None}
    before = [p for p in earlier if p.number is not None and p.number not in by_number]
    rarity = _rarity([*by_number.values(), *before])
    best: dict[int, tuple[Tie, int]] = {}  # earlier PR -> its best tie and the theme's index
    for i, theme in enumerate(themes):
        own = [by_number[n] for n in theme.prs if n in by_number]
        others = [p for n, p in by_number.items() if n not in theme.prs]
        tie = _ties(theme, own, before, others, rarity)
        for p in before:
            assert p.number is not None  # `before` holds numbered PRs only
            found = tie(p)
            # Strictly better only: among equal ties the theme listed first keeps the PR.
            if found is not None and (p.number not in best or found > best[p.number][0]):
                best[p.number] = (found, i)
    for i, theme in enumerate(themes):
        mine = [n for n, (_, j) in best.items() if j == i]
        ranked = sorted(mine, key=lambda n: (best[n][0], n), reverse=True)  # the best tied, then the latest
        theme.continues = ranked[:MAX_NAMED] or None


def _title_words(pr: PullRequest) -> set[str]:
    return set(tokens(pr.title, generic_for(pr.repo)))


def _rarity(prs: Sequence[PullRequest]) -> Callable[[str], float]:
    """How rare a title word is among these PRs: a word few titles say names a feature more surely."""
    said = Counter(t for p in prs for t in _title_words(p))
    return lambda word: math.log((len(prs) + 1) / max(said[word], 1))


def _common(
    changed: Callable[[PullRequest], bool], earlier: Sequence[PullRequest], others: list[PullRequest]
) -> bool:
    """Whether what ``changed`` tests is had by most earlier PRs and by other PRs of the week."""
    many = len(earlier) >= COMMON_FROM and sum(map(changed, earlier)) * 2 > len(earlier)
    return many and any(map(changed, others))


def _names(theme: Theme, own: list[PullRequest]) -> set[str]:
    """The words that name the theme's feature: those of its title its PRs' titles say (its topic), else
    (a title in other words) those at least two of its PRs' titles share, all of a lone PR's."""
    said = Counter(t for p in own for t in _title_words(p))
    title = theme.title
    for kind in _KINDS:
        title = title.replace(kind, " ")
    topic = set(tokens(title, generic_for(own[0].repo))) & said.keys()
    return topic or {t for t, n in said.items() if n >= 2 or len(own) == 1}


def _ties(
    theme: Theme,
    own: list[PullRequest],
    earlier: Sequence[PullRequest],
    others: list[PullRequest],
    rarity: Callable[[str], float],
) -> Callable[[PullRequest], Tie | None]:
    """How each earlier PR ties the theme, None for no tie."""
    if not own:
        return lambda _: None
    refs = {n for p in own for n in features(p).refs}
    numbers = {p.number for p in own}
    words = {w for w in _names(theme, own) if not _common(_says(w), earlier, others)}
    files = {f for p in own for f in features(p).files if not _common(_changes(f), earlier, others)}
    home = subsystem(own)
    if home is not None and _common(_changes_in(home), earlier, others):
        home = None
    whole = sum(map(rarity, words))

    def tie(p: PullRequest) -> Tie | None:
        referenced = p.number in refs or bool(features(p).refs & numbers)
        named = sum(map(rarity, words & _title_words(p)))
        code = len(files & features(p).files.keys()) + (home is not None and _changes_in(home)(p))
        # The feature is named when most of its name is said, the rarest words counting most: one common
        # word of a many-word topic ("datasets" of "iterable datasets") names another feature as well.
        if referenced or (named * 2 > whole and code):
            return (referenced, named, code)
        return None

    return tie


def _says(word: str) -> Callable[[PullRequest], bool]:
    return lambda pr: word in _title_words(pr)


def _changes(path: str) -> Callable[[PullRequest], bool]:
    return lambda pr: path in features(pr).files


def _changes_in(folder: str) -> Callable[[PullRequest], bool]:
    return lambda pr: any(path.startswith(folder + "/") for path in features(pr).files)
