"""The week's stories told: each named by the subject its titles share, and told as a theme in
sentences that say what changed, how its PRs relate and what it means for the reader.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from prdigest.analysis.risks.rules import JUDGEMENT_LABELS
from prdigest.analysis.stories.features import Story, generic_for, tokens
from prdigest.analysis.taxonomy import DEFAULT_TAGS, parse_title
from prdigest.models import PRAnalysis, PullRequest, Theme, Window
from prdigest.path_kinds import is_ci, is_doc, is_test

# --- naming -------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _title_df(titles: tuple[str, ...], generic: frozenset[str]) -> Counter[str]:
    """In how many of the week's titles each word appears: the same for every story of the week."""
    return Counter(t for title in titles for t in set(tokens(title, generic)))


# Verbs and adverbs that say how a change was made, never what it is about: no story is named after one
# (grouping still reads them: a series of "Align X with Y" PRs is one thread).
_HOW_WORDS = """
    simplify simplifies avoid avoids correct corrects align aligns harmonize harmonise ensure ensures
    prevent prevents reduce reduces clarify clarifies introduce introduces implement implements replace
    replaces raise raises warn warns skip skips expose exposes pass passes treat treats factor extract
    extracts split splits reject rejects honor honour decide switch switches migrate migrates unify
    restore restores respect respects apply applies document documents properly correctly better
"""
_HOW = frozenset(_HOW_WORDS.split())


def topic_of(story: Story, week: list[PullRequest]) -> str:
    """The story's subject as its titles write it: the longest run of title words made of the distinctive
    words most of its PRs share ("session server v2"), in the casing the titles use most."""
    generic = generic_for(story.prs[0].repo) | _HOW
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
    nouns = _qualified(p.title for p in story.prs)
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
                # A qualifier ("iterable") ends on what most of the titles say it qualifies ("datasets").
                noun = [word] if word and parts and word.lower() == nouns.get(run[-1].lower()) else []
                best = max(best, (value, -len(run), " ".join([*run, *noun])))
            run = []
    return _cased(best[2], [p.title for p in story.prs]) if best[2] else ranked[0]


_TITLE_WORD = re.compile(r"[\w][\w.\-/]*[\w]|\w")
# A word that qualifies a subject rather than names one: a topic does not end on it.
_ADJECTIVE = re.compile(r"[a-z](?:able|ible|ive|ous|ful|less)$")


def _qualified(titles: Iterable[str]) -> dict[str, str]:
    """Each qualifying word of the titles ("iterable") with the word that most often follows it."""
    follows: defaultdict[str, Counter[str]] = defaultdict(Counter)
    said: Counter[str] = Counter()  # in how many titles a word is: the subject they share wins a tie
    for title in titles:
        words = [w.lower() for w in _TITLE_WORD.findall(title)]
        said.update(set(words))
        for word, after in pairwise(words):
            if _ADJECTIVE.search(word):
                follows[word][after] += 1
    return {word: max(seen, key=lambda w: (seen[w], said[w], w)) for word, seen in follows.items()}


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
_TAG_KIND = {tag.name: tag.story for tag in DEFAULT_TAGS if tag.story}
# The order roles are told in, and ties between kinds are broken by.
KINDS = ("feature", "bugfix", "migration", "performance", "security", "dependency", "hardening", "docs")
_ROLES = (*KINDS, "change")  # "change": a PR whose tags name no kind
# Tests and docs ride along with most changes: they lead a story only when nothing else does.
_SIDE_KINDS = {"hardening": 0.5, "docs": 0.5}
DETAILED = 6  # PRs told with their summary; the others are cited by number
# Risks a story's text names, in this order, with what they cost its reader.
_COSTS = JUDGEMENT_LABELS
_OPTION = re.compile(r"--[A-Za-z0-9][\w-]*")
_WITH_CODE = 20  # lines of shipped code that make a PR more than its tests
_SAYS_TESTS = re.compile(r"\b(tests?|testing|ci|coverage|flaky|e2e|benchmarks?|lint\w*)\b", re.I)


def pr_kind(analysis: PRAnalysis, pr: PullRequest | None = None) -> str:
    """What a PR does; "change" when no tag says. With the PR: tests and CI it touched make it hardening
    only when they are most of what it adds (a feature with its tests, or a PR that deletes, is not)."""
    if any(r.label == "config_breaking" for r in analysis.risks) and "feature" not in analysis.tags[:1]:
        return "migration"  # it removes or renames what users rely on
    kind = next((_TAG_KIND[t] for t in analysis.tags if t in _TAG_KIND), "change")
    if kind == "hardening" and pr is not None and pr.files:
        aside = sum(f.additions or 0 for f in pr.files if is_test(f.path) or is_ci(f.path))
        if aside * 2 < pr.additions or pr.deletions > pr.additions:
            return "change"
        # Tests beside a change of the code its title names ("Environment-owned reward") come with it.
        shipped = sum(
            f.additions or 0 for f in pr.files if not (is_test(f.path) or is_ci(f.path) or is_doc(f.path))
        )
        if shipped >= _WITH_CODE and not _SAYS_TESTS.search(pr.title):
            return "change"
    return kind


def story_kind(prs: list[PullRequest], analyses: dict[int, PRAnalysis]) -> str:
    votes: defaultdict[str, float] = defaultdict(float)
    for p in prs:
        a = analyses[p.number or 0]
        kind = pr_kind(a, p)
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
    lead = next((p for p in ranked if pr_kind(analyses[p.number or 0], p) == kind), ranked[0])
    detailed = {p.number for p in ranked[: DETAILED + 1]} | {lead.number}
    sentences = [t[f"open_{kind}_{variant % 2}"].format(topic=topic, lead=_item(lead, analyses, t))]
    roles: dict[str, list[PullRequest]] = defaultdict(list)
    for p in prs:
        if p is not lead and p.number in detailed:
            roles[pr_kind(analyses[p.number or 0], p)].append(p)
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
_AFTER_FULL = re.compile(r"(?<=[）】」』，。；：、])\s+|(?<!\s)\s+(?=[（【「『，。；：、）])")


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
    if not shared:
        return None
    return max(shared, key=lambda d: (holders[d] * (1 + d.count("/")), d.count("/"), d))


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
    kinds = [pr_kind(analyses[p.number or 0], p) for p in prs]
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
