"""The week's stories: PRs grouped by what ties them, not by the prefix of their titles.

Two PRs are tied by the subsystem their code lives in (the deepest package folders they share),
by the files they both change, by the distinctive words their titles, bodies and paths share
(weighted like TF-IDF over the week, so words every PR uses count for little), by an explicit
reference ("#N", a revert, the source's `related` list) and, weakly, by being one author's stack
of consecutive PRs. The ties weigh the edges of a graph that average-linkage clustering cuts
into groups; groups of two PRs or more are stories, ranked by the importance of their PRs.
Most minor PRs belong to none: a story that swallowed unrelated PRs would mislead its reader.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache

from prdigest.analysis.risk_rules import JUDGEMENT_LABELS
from prdigest.analysis.taxonomy import is_ci, is_doc, is_test, parse_title
from prdigest.models import PRAnalysis, PullRequest, Theme, Window

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
BODY_CHARS = 2000

# Words that name no subject: function words, the verbs of every change, generic code words.
_GENERIC_WORDS = """
    a an and are as at be been but by can do does for from has have in into is it its no not of on
    or so than that the their then there these this those to up via was were when which while with
    without we our you your i all any each every more most other some such only also just now new
    add adds added adding support supports supported supporting fix fixes fixed fixing update updates
    updated updating use uses used using make makes made allow allows enable enables enabled disable
    disables remove removes removed drop drops move moves moved rename renames renamed refactor
    refactors improve improves improved bump bumps feat feature chore docs doc test tests testing ci
    build perf style revert reverts cleanup clean wip minor misc small handle handles set get run runs
    instead after before when default defaults option options issue issues bug bugs pr prs change
    changes changed follow followup up one two first second via per across keep keeps stop stops
    py md txt json yaml yml toml sh cfg ini init main utils util common core base misc helper helpers
    lib src
    co authored signed off http https www github com org
"""
GENERIC = frozenset(_GENERIC_WORDS.split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)*")
_PART = re.compile(r"[_\-.]")
_URL = re.compile(r"\w+://\S+")
_TRAILER = re.compile(r"^(?:co-authored-by|signed-off-by|reviewed-by):.*$", re.I | re.M)
_REFERENCE = re.compile(r"(?<![\w/])#(\d+)\b")
_SERIES = re.compile(r"[\[(]\s*(\d+)\s*/\s*(\d+)\s*[\])]")
_STEM = re.compile(r"\.[A-Za-z0-9]+$")
_REVERT = re.compile(r'^\s*revert\s+"(?P<title>.+)"', re.I)


@dataclass(frozen=True)  # cached per PR: shared by every report of its week
class Features:
    """What a PR is about, as sparse weighted vectors, and whom it names."""

    words: dict[str, float]
    dirs: dict[str, float]
    files: dict[str, float]
    refs: set[int]
    series: tuple[int, int] | None


@dataclass
class Story:
    prs: list[PullRequest]  # merge order
    terms: list[str]  # the distinctive words its PRs share, most distinctive first
    references: list[tuple[int, int, str]] = field(default_factory=list)  # (pr, other, "revert"|"ref")
    score: float = 0.0


def tokens(text: str, generic: frozenset[str] = GENERIC) -> list[str]:
    """Lower-case words and their parts ("weights_backuper" -> it, "weights", "backuper"), not generic."""
    out: list[str] = []
    for word in _WORD.findall(_URL.sub(" ", text)):
        word = word.lower().strip(".")
        parts = [p for p in _PART.split(word) if p]
        for token in ([word] if len(parts) > 1 else []) + parts:
            token = _singular(token)
            if len(token) > 1 and not token.isdigit() and token not in generic:
                out.append(token)
    return out


@lru_cache(maxsize=64)
def _generic_for(repo: str) -> frozenset[str]:
    """The generic words plus the repository's own name, which every PR of it may say."""
    return GENERIC | frozenset(tokens(repo.replace("/", " ")))


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _dirs_of(path: str) -> list[str]:
    """The folders a file lives in, deepest last; a top folder counts only for files right inside it."""
    parts = path.split("/")[:-1]
    if len(parts) == 1:
        return parts
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def features(pr: PullRequest) -> Features:
    """What ties a PR to others; read-only, and cached: chat answers rebuild the same week's report."""
    paths = tuple(f.path for f in pr.files or [])
    return _features(pr.repo, pr.number or 0, pr.title, pr.body, paths, tuple(pr.related))


@lru_cache(maxsize=8192)
def _features(
    repo: str, number: int, title: str, body: str, paths: tuple[str, ...], related: tuple[int, ...]
) -> Features:
    body = _TRAILER.sub(" ", body[:BODY_CHARS])
    generic = _generic_for(repo)
    words: Counter[str] = Counter()
    for token in tokens(title, generic):  # the scope and brackets too: "(fsdp)", "[lora]" name the subject
        words[token] += 1.0
    for token in set(tokens(body, generic)):
        words[token] += 0.5
    dirs: Counter[str] = Counter()
    files: dict[str, float] = {}
    path_words: set[str] = set()
    for path in paths:
        side = is_test(path) or is_doc(path) or is_ci(path)
        weight = 0.5 if side else 1.0
        files[path] = weight
        for d in _dirs_of(path):
            dirs[d] += weight
        if not side:  # the file's own name: "weight_sync.py" speaks of weight sync
            path_words.update(tokens(_STEM.sub("", path.rsplit("/", 1)[-1]), generic))
    for token in path_words:
        words[token] += 0.3
    refs = {int(n) for n in _REFERENCE.findall(f"{title}\n{body}")} | set(related)
    match = _SERIES.search(title)
    series = (int(match.group(1)), int(match.group(2))) if match else None
    return Features(
        words=dict(words),
        dirs={d: 1 + math.log(n) if n >= 1 else n for d, n in dirs.items()},
        files=files,
        refs=refs - {number},
        series=series,
    )


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
    ranked = sorted(
        (p for p in prs if p.number is not None), key=lambda p: (-importance.get(p.number, 0), p.number)
    )
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


# --- naming -------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _title_df(titles: tuple[str, ...], generic: frozenset[str]) -> Counter[str]:
    """In how many of the week's titles each word appears: the same for every story of the week."""
    return Counter(t for title in titles for t in set(tokens(title, generic)))


def topic_of(story: Story, week: list[PullRequest]) -> str:
    """The story's subject as its titles write it: the longest run of title words made of the distinctive
    words most of its PRs share ("session server v2"), in the casing the titles use most."""
    generic = _generic_for(story.prs[0].repo)
    df = _title_df(tuple(p.title for p in week), generic)
    counts = Counter(t for p in story.prs for t in set(tokens(p.title, generic)))
    n = max(len(week), 1)
    score = {t: c / len(story.prs) * math.log((n + 1) / df[t]) for t, c in counts.items() if c >= 2}
    if not score:  # no title word shared: the folder the code shares, the scope, a shared path word
        folder = subsystem(story.prs)
        fallback = folder.rsplit("/", 1)[-1] if folder else _scope(story.prs[0])
        return fallback or (story.terms[0] if story.terms else headline(story.prs[0].title))
    ranked = sorted(score, key=lambda t: (-score[t], t))
    top = {t for t in ranked[:4] if score[t] >= score[ranked[0]] / 2}
    best: tuple[float, int, str] = (0.0, 0, "")
    for p in story.prs:
        words = _TITLE_WORD.findall(p.title)
        run: list[str] = []
        for word in [*words, ""]:
            found = set(tokens(word, generic))
            parts = found - {word.lower()} or found  # "nvfp4-packed": its parts, not the whole
            if word and len(parts & top) * 2 > len(parts):  # mostly distinctive words
                run.append(word)
                continue
            held = {t for w in run for t in tokens(w, generic)}
            if run and ranked[0] in held:  # the phrase holds the most distinctive word
                value = sum(score[t] for t in held & top)
                best = max(best, (value, -len(run), " ".join(run)))
            run = []
    return _cased(best[2], [p.title for p in story.prs]) if best[2] else ranked[0]


_TITLE_WORD = re.compile(r"[\w][\w.\-/]*[\w]|\w")


def _scope(pr: PullRequest) -> str:
    parsed = parse_title(pr.title)
    return parsed.scope or (parsed.brackets[0] if parsed.brackets else "")


def _cased(phrase: str, titles: list[str]) -> str:
    """Each word in the casing with the most capitals the titles give it (a title's first letter aside)."""
    variants: dict[str, Counter[str]] = defaultdict(Counter)
    for title in titles:
        for i, word in enumerate(_TITLE_WORD.findall(title)):
            variants[word.lower()][word if i else word[:1].lower() + word[1:]] += 1
    out = []
    for word in phrase.split():
        seen = variants.get(word.lower())
        out.append(max(seen, key=lambda w: (sum(c.isupper() for c in w), seen[w])) if seen else word)
    return " ".join(out)


# --- telling ------------------------------------------------------------------------------

# What a PR does, from the first of its tags that names a kind of change (the title's tags come first).
_TAG_KIND = {
    "feature": "feature",
    "bugfix": "bugfix",
    "revert": "bugfix",
    "refactor": "migration",
    "performance": "performance",
    "security": "security",
    "dependency": "dependency",
    "testing": "hardening",
    "ci": "hardening",
    "docs": "docs",
}
# The order roles are told in, and ties between kinds are broken by.
KINDS = ("feature", "bugfix", "migration", "performance", "security", "dependency", "hardening", "docs")
_ROLES = (*KINDS, "change")  # "change": a PR whose tags name no kind
# Tests and docs ride along with most changes: they lead a story only when nothing else does.
_SIDE_KINDS = {"hardening": 0.5, "docs": 0.5}
DETAILED = 6  # PRs told with their summary; the others are cited by number
# Risks a story's text names, in this order, with what they cost its reader.
_COSTS = JUDGEMENT_LABELS
_OPTION = re.compile(r"--[A-Za-z0-9][\w-]*")


def pr_kind(analysis: PRAnalysis) -> str:
    """What a PR does; "change" when no tag says."""
    if any(r.label == "config_breaking" for r in analysis.risks) and "feature" not in analysis.tags[:1]:
        return "migration"  # it removes or renames what users rely on
    return next((_TAG_KIND[t] for t in analysis.tags if t in _TAG_KIND), "change")


def story_kind(prs: list[PullRequest], analyses: dict[int, PRAnalysis]) -> str:
    votes: Counter[str] = Counter()
    for p in prs:
        a = analyses[p.number or 0]
        kind = pr_kind(a)
        votes[kind] += (1 + a.importance) * _SIDE_KINDS.get(kind, 1.0)
    return max(KINDS, key=lambda k: (votes[k], -KINDS.index(k)))  # no kind named at all: a feature


def tell(
    story: Story,
    analyses: dict[int, PRAnalysis],
    topic: str,
    window: Window,
    t: dict[str, str],
    variant: int = 0,
) -> Theme:
    """The story as a theme: named by its subject and kind, told in sentences that say what changed,
    how its PRs relate and what it means for the reader, with its direction for the trends table."""
    prs = story.prs
    kind = story_kind(prs, analyses)
    ranked = sorted(prs, key=lambda p: (-analyses[p.number or 0].importance, p.number))
    # The story opens on its weightiest PR of its own kind: a fix series on a fix.
    lead = next((p for p in ranked if pr_kind(analyses[p.number or 0]) == kind), ranked[0])
    detailed = {p.number for p in ranked[: DETAILED + 1]} | {lead.number}
    sentences = [t[f"open_{kind}_{variant % 2}"].format(topic=topic, lead=_item(lead, analyses, t))]
    roles: dict[str, list[PullRequest]] = defaultdict(list)
    for p in prs:
        if p is not lead and p.number in detailed:
            roles[pr_kind(analyses[p.number or 0])].append(p)
    for role in sorted(roles, key=lambda r: (r != kind, _ROLES.index(r))):
        key = (
            f"role_{role}"
            if role != kind
            else f"role_{role}_lead"
            if f"role_{role}_lead" in t
            else "role_same"
        )
        sentences.append(t[key].format(items=listed([_item(p, analyses, t) for p in roles[role]], t)))
    rest = [f"#{p.number}" for p in prs if p.number not in detailed]
    if rest:
        sentences.append(t["role_more"].format(refs=listed(rest, t)))
    ties = _ties(story, t)
    if ties:
        sentences.append(t["ties"].format(items=t["tie_sep"].join(ties)))
    sentences.append(_where(prs, t, variant))
    sentences.append(t[f"mean_{kind}_{variant % 2}"])
    sentences += _costs(prs, analyses, kind, t)
    return Theme(
        title=t["theme_title"].format(topic=topic, kind=t[f"story_kind_{kind}"]),
        prs=[p.number for p in prs if p.number is not None],
        story=_sentences(sentences, t),
        trend=trend(prs, analyses, kind, window, t),
        representative=[p.number for p in ranked[:8] if p.number is not None],
    )


def _ties(story: Story, t: dict[str, str]) -> list[str]:
    """The story's explicit references, grouped by the PR referred to: "#12 and #13 followed up on #10"."""
    by_target: dict[tuple[int, str], list[int]] = defaultdict(list)
    for number, target, kind in sorted(story.references):
        by_target[(target, kind)].append(number)
    return [
        t[f"tie_{kind}"].format(a=listed([f"#{n}" for n in numbers], t), b=target)
        for (target, kind), numbers in sorted(by_target.items(), key=lambda kv: -len(kv[1]))[:2]
    ]


def _item(p: PullRequest, analyses: dict[int, PRAnalysis], t: dict[str, str]) -> str:
    return t["item"].format(number=p.number, summary=headline(analyses[p.number or 0].summary))


# Where a summary's first sentence ends: the rules engine appends its detail after "。" or ". ".
_SENTENCE = re.compile(r"。|\.(?:\s|$)")
HEADLINE_CHARS = 100


def headline(summary: str) -> str:
    """A summary's first sentence: what the PR does, without the detail that may follow it."""
    first = _SENTENCE.split(" ".join(summary.split()), maxsplit=1)[0].strip()
    return first if len(first) <= HEADLINE_CHARS else first[: HEADLINE_CHARS - 1].rstrip() + "…"


def listed(items: list[str], t: dict[str, str]) -> str:
    """ "#1, #2 and #3" in the report's language."""
    if len(items) <= 1:
        return "".join(items)
    return t["list_sep"].join(items[:-1]) + t["list_and"] + items[-1]


def counted(what: str, n: int, t: dict[str, str]) -> str:
    """ "1 PR", "2 PRs": a language with a singular form has a ``count_<what>_one`` text."""
    one = t.get(f"count_{what}_one") if n == 1 else None
    return (one or t[f"count_{what}"]).format(n=n)


def n_prs(n: int, t: dict[str, str]) -> str:
    return counted("pr", n, t)


def _sentences(parts: list[str], t: dict[str, str]) -> str:
    if t["lang"] == "zh":
        return spaced("".join(parts))
    return " ".join(_capital(p) for p in parts)


def _capital(sentence: str) -> str:
    """A sentence's first letter in capitals, unless it opens on an identifier ("fully-async", "qwen3_5")."""
    first = sentence.split(" ", 1)[0]
    return sentence[:1].upper() + sentence[1:] if first.isalpha() else sentence


_CJK = "\u3400-\u9fff"
_LATIN_CJK = re.compile(rf"([A-Za-z0-9#%)\]`'\"]|\.\.\.)(?=[{_CJK}])|(?<=[{_CJK}])(?=[A-Za-z0-9#(\[`'\"-])")
_AFTER_FULL = re.compile(r"(?<=[）】」』，。；：、])\s+|\s+(?=[（【「『，。；：、）])")


def spaced(text: str) -> str:
    """Chinese text with a space between Han characters and Latin words or numbers, none next to
    full-width punctuation: "修复了#12和#13" -> "修复了 #12 和 #13"."""
    return _AFTER_FULL.sub("", _LATIN_CJK.sub(lambda m: (m.group(1) or "") + " ", text))


def subsystem(prs: list[PullRequest]) -> str | None:
    """The folder that best holds the story's code: among those holding code of at least half its PRs
    (and of two), the one whose depth times the PRs it holds is largest: deep, but not a corner."""
    holders: Counter[str] = Counter()
    for p in prs:
        code = [f.path for f in p.files or [] if not (is_test(f.path) or is_doc(f.path) or is_ci(f.path))]
        holders.update({d for path in code for d in _ancestors(path)})
    need = max(2, math.ceil(len(prs) / 2))
    shared = [d for d, n in holders.items() if n >= need]
    return max(shared, key=lambda d: (holders[d] * (1 + d.count("/")), d.count("/"), d), default=None)


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _where(prs: list[PullRequest], t: dict[str, str], variant: int) -> str:
    figures = {
        "n": n_prs(len(prs), t),
        "additions": sum(p.additions for p in prs),
        "deletions": sum(p.deletions for p in prs),
    }
    folder = subsystem(prs)
    if folder:
        return t[f"where_{variant % 2}"].format(dir=folder, **figures)
    return t[f"where_spread_{variant % 2}"].format(**figures)


def _costs(
    prs: list[PullRequest], analyses: dict[int, PRAnalysis], kind: str, t: dict[str, str]
) -> list[str]:
    found: dict[str, list[int]] = defaultdict(list)
    options: list[str] = []
    for p in prs:
        for r in analyses[p.number or 0].risks:
            if r.label in _COSTS and p.number not in found[r.label]:
                found[r.label].append(p.number or 0)
            if r.label == "config_breaking":
                options += [o for o in _OPTION.findall(r.evidence) if o not in options]
    if kind == "dependency":
        found.pop("dependency_change", None)  # the story already says so
    out = []
    named = t["options"].format(names=", ".join(options[:4])) if options else ""
    for label in _COSTS:
        if found.get(label):
            prs_text = listed([f"#{n}" for n in found[label][:4]], t)
            out.append(t[f"cost_{label}"].format(prs=prs_text, options=named))
    return out[:2]  # the weightiest two; the risk section lists the rest


def trend(
    prs: list[PullRequest], analyses: dict[int, PRAnalysis], kind: str, window: Window, t: dict[str, str]
) -> str:
    """Where the theme is heading: its direction from its PRs' kinds in merge order, and its momentum."""
    direction = kind
    kinds = [pr_kind(analyses[p.number or 0]) for p in prs]
    later = kinds[len(kinds) // 2 :]
    if kind == "feature" and later.count("bugfix") * 2 > len(later):
        direction = "feature_then_fix"
    mix = Counter(kinds).most_common(3)
    mixed = t["list_sep"].join(
        counted(k, n, t) for k, n in sorted(mix, key=lambda kv: (-kv[1], _ROLES.index(kv[0])))
    )
    days = sorted({window.local_day(p.merged_at) for p in prs})
    if len(days) == 1:
        momentum = t["mom_oneday"].format(n=n_prs(len(prs), t), day=f"{days[0]:%m-%d}")
    elif (window.until - days[-1]).days <= 1:
        momentum = t["mom_late"]
    elif (days[-1] - window.since).days <= 3:
        momentum = t["mom_early"]
    else:
        momentum = t["mom_steady"]
    return t["trend"].format(direction=t[f"dir_{direction}"], mix=mixed, momentum=momentum)
