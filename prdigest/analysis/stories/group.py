"""The week's stories: PRs grouped by what ties them, not by the prefix of their titles.

Two PRs are tied by the subsystem their code lives in (the deepest package folders they share),
by the files they both change, by the distinctive words their titles, bodies and paths share
(weighted like TF-IDF over the week, so words every PR uses count for little), by an explicit
reference ("#N", a revert, the source's `related` list) and, weakly, by being one author's stack
of consecutive PRs. The ties weigh the edges of a graph that average-linkage clustering cuts
into groups; groups of two PRs or more are stories, ranked by the importance of their PRs.
Most minor PRs belong to none: a story that swallowed unrelated PRs would mislead its reader.

Here the grouping; what a PR is about is read in `story_features`, and a story is named and told
in `story_text` (both re-exported here).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import timedelta

from prdigest.analysis.stories.features import Features, Story, features
from prdigest.models import PullRequest, numbered

# Weights of the ties; an edge is their sum. Explicit references outweigh every content tie.
W_WORDS = 0.6
W_DIRS = 0.2
W_FILES = 0.2
W_REFERENCE = 1.5
W_SERIES = 1.0  # "(2/4)" and "(3/4)" by one author
W_STACK = 0.1  # consecutive PRs of one author merged close together: a hint, below every threshold
# Groups merge while their average tie is at least this; lower levels fill in when too few stories form.
THRESHOLDS = (0.16, 0.12)
# Only the most important PRs are grouped: stories are about them, and the cost stays quadratic in this.
MAX_CANDIDATES = 150
STACK_NUMBER_GAP = 3
STACK_TIME_GAP = timedelta(hours=12)
STACK_LANDING = timedelta(hours=1)  # a stack landed: its PRs merged one after another
_REVERT = re.compile(r'^\s*revert\s+"(?P<title>.+)"', re.I)


# --- ties ---------------------------------------------------------------------------------


def _weighted(vectors: list[dict[str, float]]) -> list[dict[str, float]]:
    """TF-IDF over the week, unit length; terms of one PR only, or of most PRs, are dropped."""
    n = len(vectors)
    df = Counter(term for v in vectors for term in v)
    out = []
    for v in vectors:
        w = {t: tf * math.log(n / df[t]) for t, tf in v.items() if 2 <= df[t] <= max(2, n // 2)}
        norm = math.sqrt(sum(x * x for x in w.values())) or 1.0
        out.append({t: x / norm for t, x in w.items()})
    return out


def _cosines(vectors: list[dict[str, float]]) -> dict[tuple[int, int], float]:
    """Cosine of every pair that shares a term, through an inverted index."""
    index: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, v in enumerate(vectors):
        for term, x in v.items():
            index[term].append((i, x))
    sims: dict[tuple[int, int], float] = defaultdict(float)
    for postings in index.values():
        for a, (i, x) in enumerate(postings):
            for j, y in postings[a + 1 :]:
                sims[(i, j)] += x * y
    return sims


def ties(prs: list[PullRequest], feats: list[Features]) -> dict[tuple[int, int], float]:
    """The weight of the edge between every two PRs that share anything (indices into ``prs``)."""
    edges: dict[tuple[int, int], float] = defaultdict(float)
    for vectors, weight in (
        ([f.words for f in feats], W_WORDS),
        ([f.dirs for f in feats], W_DIRS),
        ([f.files for f in feats], W_FILES),
    ):
        for pair, cos in _cosines(_weighted(vectors)).items():
            edges[pair] += weight * cos
    for pair in references(prs, feats):
        edges[pair] += W_REFERENCE
    for pair in stacks(prs, feats):
        edges[pair] += W_SERIES if _same_series(feats[pair[0]], feats[pair[1]]) else W_STACK
    return edges


def references(prs: list[PullRequest], feats: list[Features]) -> dict[tuple[int, int], str]:
    """Pairs where one PR names the other: "#N", its `related` list, or a revert of its title."""
    at = {p.number: i for i, p in enumerate(prs)}
    by_title = {p.title.strip().lower(): i for i, p in enumerate(prs)}
    out: dict[tuple[int, int], str] = {}
    for i, (p, f) in enumerate(zip(prs, feats, strict=True)):
        named = {at[n] for n in f.refs if n in at}
        reverted = _REVERT.match(p.title)
        if reverted:
            target = by_title.get(re.sub(r"\s*\(#\d+\)\s*$", "", reverted.group("title")).strip().lower())
            named |= {target} if target is not None else set()
        for j in named - {i}:
            out[(min(i, j), max(i, j))] = "revert" if reverted else "ref"
    return out


def runs(prs: list[PullRequest], within: timedelta) -> list[list[int]]:
    """Each author's runs of near-consecutive PRs, each merged within ``within`` of the one before."""
    by_author: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(prs):
        by_author[p.author].append(i)
    out: list[list[int]] = []
    for members in by_author.values():
        members.sort(key=lambda i: prs[i].number or 0)
        current = [members[0]]
        for i in members[1:]:
            last = prs[current[-1]]
            near = (prs[i].number or 0) - (last.number or 0) <= STACK_NUMBER_GAP
            if near and abs(prs[i].merged_at - last.merged_at) <= within:
                current.append(i)
            else:
                out.append(current)
                current = [i]
        out.append(current)
    return [run for run in out if len(run) > 1]


def stacks(prs: list[PullRequest], feats: list[Features]) -> set[tuple[int, int]]:
    """Pairs in one author's run of near-consecutive PRs merged close together, or in one numbered series."""
    out = {(min(a, b), max(a, b)) for run in runs(prs, STACK_TIME_GAP) for a in run for b in run if a != b}
    series = [i for i, f in enumerate(feats) if f.series]
    out |= {
        (min(a, b), max(a, b))
        for a in series
        for b in series
        if a != b and prs[a].author == prs[b].author and _same_series(feats[a], feats[b])
    }
    return out


def join_stacks(groups: list[list[int]], prs: list[PullRequest]) -> list[list[int]]:
    """Groups that are mostly one author's stack (three PRs or more landed within the hour) are one story:
    a stack is one piece of work, even where its parts share few words or files."""
    stack_of = {i: k for k, run in enumerate(runs(prs, STACK_LANDING)) if len(run) >= 3 for i in run}
    merged: dict[int, list[int]] = {}
    out = []
    for group in groups:
        owners = Counter(stack_of[i] for i in group if i in stack_of)
        stack, held = owners.most_common(1)[0] if owners else (None, 0)
        if len(group) >= 2 and stack is not None and held * 3 >= len(group) * 2:
            if stack in merged:
                merged[stack] += group
                continue
            merged[stack] = group
        out.append(group)
    return [sorted(g) for g in out]


def _same_series(a: Features, b: Features) -> bool:
    return a.series is not None and b.series is not None and a.series[1] == b.series[1] > 1


# --- grouping -----------------------------------------------------------------------------


def cluster(n: int, edges: dict[tuple[int, int], float], threshold: float) -> list[list[int]]:
    """Average-linkage agglomeration: merge the two groups whose mean tie is highest, while it reaches
    ``threshold``. Averaging keeps one strong pair from chaining two unrelated groups together.

    A heap holds the candidate merges; an entry whose groups changed since it was pushed is skipped."""
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    links: dict[int, dict[int, float]] = defaultdict(dict)  # group -> neighbouring group -> summed ties
    for (i, j), w in edges.items():
        links[i][j] = links[j][i] = w
    heap = [(-w, i, j) for (i, j), w in edges.items() if w >= threshold]
    heapq.heapify(heap)
    while heap:
        negative, a, b = heapq.heappop(heap)
        if a not in members or b not in members or -negative != _mean(a, b, links, members):
            continue  # stale: one of the groups grew since
        members[a] += members.pop(b)
        for c, w in links.pop(b).items():
            del links[c][b]
            if c != a:
                links[a][c] = links[c][a] = links[a].get(c, 0.0) + w
        for c in links[a]:
            mean = _mean(a, c, links, members)
            if mean >= threshold:
                heapq.heappush(heap, (-mean, min(a, c), max(a, c)))
    return [sorted(m) for m in members.values()]


def _mean(a: int, b: int, links: dict[int, dict[int, float]], members: dict[int, list[int]]) -> float:
    return links[a].get(b, 0.0) / (len(members[a]) * len(members[b]))


def find_stories(
    prs: Iterable[PullRequest], importance: dict[int, float], *, limit: int = 5, minimum: int = 3
) -> list[Story]:
    """At most ``limit`` stories of two PRs or more, the weightiest first; lower thresholds are tried
    when fewer than ``minimum`` form."""
    ranked = [p for n, p in sorted(numbered(prs), key=lambda item: (-importance.get(item[0], 0), item[0]))]
    candidates = sorted(ranked[:MAX_CANDIDATES], key=lambda p: (p.merged_at, p.number))
    feats = [features(p) for p in candidates]
    edges = ties(candidates, feats)
    refs = references(candidates, feats)
    chosen: list[list[int]] = []
    for threshold in THRESHOLDS:
        groups = [
            g for g in join_stacks(cluster(len(candidates), edges, threshold), candidates) if len(g) >= 2
        ]
        groups.sort(key=lambda g: -_weight(g, candidates, importance))
        taken = {i for g in chosen for i in g}
        chosen += [g for g in groups if not taken & set(g)][: limit - len(chosen)]
        if len(chosen) >= minimum:
            break
    stories = []
    for group in chosen:
        story_prs = [candidates[i] for i in group]
        stories.append(
            Story(
                prs=story_prs,
                terms=shared_terms(group, feats),
                references=[
                    (candidates[j].number or 0, candidates[i].number or 0, kind)
                    for (i, j), kind in refs.items()
                    if i in group and j in group
                ],
                score=_weight(group, candidates, importance),
            )
        )
    return sorted(stories, key=lambda s: -s.score)


def _weight(group: list[int], prs: list[PullRequest], importance: dict[int, float]) -> float:
    return sum(importance.get(prs[i].number or 0, 0.0) for i in group)


def shared_terms(group: list[int], feats: list[Features], limit: int = 3) -> list[str]:
    """Title words most of the group shares, the rarer in the week the better."""
    n = len(feats)
    df = Counter(t for f in feats for t in f.words)
    inside = Counter(t for i in group for t in feats[i].words)
    scored = {
        t: (c / len(group)) * math.log((n + 1) / df[t])
        for t, c in inside.items()
        if c >= 2 or len(group) == 1
    }
    return [t for t, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
