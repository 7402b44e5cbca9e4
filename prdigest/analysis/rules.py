"""The rules engine: a PRAnalysis for every PR from its data alone, with no LLM.

Scores follow one documented formula (README, "How the rules engine scores");
each part is kept as a reason so that "explain #N" can show why. A rule whose
input is unknown (None) does not fire: a git clone has no reviews, so no PR of
it is called "unreviewed".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from prdigest.analysis import pr_text
from prdigest.analysis.facts import Facts, facts
from prdigest.analysis.review_flow import reviewers_of
from prdigest.analysis.risks import rules as risk_rules
from prdigest.analysis.risks.behaviour import cosmetic, product_lines
from prdigest.analysis.risks.common import may_hold
from prdigest.analysis.risks.rules import Evidence, Finding, quote
from prdigest.analysis.taxonomy import DEFAULT_TAGS, RISKS, parse_title, tags_for, taxonomy_hash
from prdigest.config import Taxonomy
from prdigest.danger import comments
from prdigest.i18n import texts
from prdigest.models import PRAnalysis, PullRequest, RiskLabel
from prdigest.path_kinds import is_ci, is_dependency

RULES_VERSION = "rules-6"  # the analysis cache key: bumped when the rules change

# Risk label -> the PR fields it needs, and how much it weighs (see taxonomy.Risk).
RISK_INPUTS = {risk.name: risk.inputs for risk in RISKS}
RISK_WEIGHT = {risk.name: risk.weight for risk in RISKS}

LARGE_CHANGE_LINES = 800
# The importance a change of each kind starts from; the tags of where a change is ride along with code.
_KIND_BASE = {tag.name: tag.weight for tag in DEFAULT_TAGS}
_AREA_TAGS = tuple(tag.name for tag in DEFAULT_TAGS if tag.area)
# Kinds a reader learns from, the most telling first: a PR counts the first it carries.
_INSIGHT_TAGS = [
    (tag.name, tag.insight) for tag in sorted(DEFAULT_TAGS, key=lambda t: -t.insight) if tag.insight
]
# A new release of a package the project runs on is new behaviour for every user, as a feature is.
UPGRADE_BASE = 3.0
# A release of the project ("Release: v1.8", "chore(release): 2.0.0"): what every user picks up next.
_RELEASE = re.compile(
    r"^\W*(?:chore\(release\)|\[?release\]?)\W+(?P<v>v?\d+(?:\.\d+)+)\b|^(?P<bare>v?\d+\.\d+\.\d+)$", re.I
)
RELEASE_BASE = 5.0


def released(title: str) -> str | None:
    """The version a release PR's title names ("Release: v1.8" -> "v1.8"); None for any other PR."""
    m = _RELEASE.search(title.strip())
    return (m.group("v") or m.group("bare")) if m else None


_TITLE_NAME = re.compile(r"[A-Za-z][\w.\-]{3,}")
# Files that make a folder a package: one added means a new subsystem lands, not a file in an old one.
_PACKAGE_MARKERS = ("__init__.py", "mod.rs", "index.ts", "index.js")
# A number starts where no digit or point precedes it: a search never restarts inside a run of digits.
_MEASURE = re.compile(r"(?<![\d.])\d+(\.\d+)?\s*(%|x\b|ms\b|s\b|gb\b|mb\b|tok(en)?s?/s|tflops|qps)", re.I)
_WHY = re.compile(r"\b(because|root cause|caused by|so that|in order to|trade-?off|instead of|race)\b", re.I)
# Every match of _WHY holds one of these (lower case): a body without them is not searched.
_WHY_WORDS = ("because", "root cause", "caused by", "so that", "in order to", "trade", "instead of", "race")


def rules_version(taxonomy: Taxonomy) -> str:
    return f"{RULES_VERSION}+{taxonomy_hash(taxonomy)}"


# --- risk rules from data the judgement rules (risk_rules.py) do not read ------------


def failing_checks(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.checks is not None
    if pr.checks.state in ("FAILURE", "ERROR"):
        names = ", ".join(pr.checks.failing[:3]) or pr.checks.state
        return t["ev_failing_checks"].format(names=names), "checks"
    return None


def large_low_review(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.reviews is not None
    if f.churn < LARGE_CHANGE_LINES or not f.code_paths:
        return None
    human = [r for r in pr.reviews if not r.is_bot]
    threads = len(pr.review_threads or [])
    approved = any(r.state == "APPROVED" for r in human)
    # Little review: one reviewer's pass at most, or nobody approved it.
    if (len(human) <= 1 and threads <= 1) or not approved:
        verdict = ", ".join(r.state for r in human) or t["no_review"]
        return t["ev_large_low_review"].format(lines=f.churn, reviews=verdict, threads=threads), "reviews"
    return None


def fork_no_bot_review(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.reviews is not None
    if pr.is_fork and not any(r.is_bot for r in pr.reviews):
        return t["ev_fork_no_bot"], "reviews"
    return None


def unresolved_threads(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    open_threads = [th for th in pr.review_threads or [] if not th.is_resolved and not th.is_outdated]
    if open_threads:
        first = open_threads[0]
        where = f" ({first.path})" if first.path else ""
        return t["ev_unresolved"].format(n=len(open_threads), first=quote(first.body) + where), "reviews"
    return None


def core_path(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    if f.core_paths:
        more = f" (+{len(f.core_paths) - 3})" if len(f.core_paths) > 3 else ""
        return t["ev_core_path"].format(paths=", ".join(f.core_paths[:3]) + more), "paths"
    return None


def unreviewed_core_change(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.reviews is not None
    if f.core_paths and not reviewers_of(pr):
        more = f" (+{len(f.core_paths) - 3})" if len(f.core_paths) > 3 else ""
        own = [r.state for r in pr.reviews if r.author == pr.author and not r.is_bot]
        key = "ev_unreviewed_core_own" if own else "ev_unreviewed_core"
        return t[key].format(paths=", ".join(f.core_paths[:3]) + more), "reviews"
    return None


# Each PR's risk label's rule is the function named as the label (a label without one fails at import);
# the week's labels (`Risk.weekly`) are found of the week's PRs together.
_RULES = {
    rule.__name__: rule
    for rule in (
        risk_rules.security_sensitive,
        failing_checks,
        risk_rules.tests_removed,
        risk_rules.perf_regression,
        risk_rules.config_breaking,
        large_low_review,
        fork_no_bot_review,
        unresolved_threads,
        core_path,
        unreviewed_core_change,
        risk_rules.no_tests,
        risk_rules.dependency_change,
    )
}
RISK_RULES: dict[str, Callable[[PullRequest, Facts, list[str], dict[str, str]], Evidence]] = {
    risk.name: _RULES[risk.name] for risk in RISKS if not risk.weekly
}


def risks_for(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> list[RiskLabel]:
    found = []
    for label, rule in RISK_RULES.items():
        if any(getattr(pr, field) is None for field in RISK_INPUTS[label]):
            continue  # unknown input: the rule does not fire
        result = rule(pr, f, tags, t)
        if result:
            finding = Finding(*result)
            found.append(
                RiskLabel(
                    label=label,
                    evidence=finding.evidence,
                    evidence_source=finding.source,
                    breaks=finding.breaks,
                    strength=finding.strength,
                )
            )
    return found


# --- scores -------------------------------------------------------------------------


# What a fix fixes, by how badly users were hurt: a crash or wrong result matters more than a typo.
_SEVERE = re.compile(
    r"(?i:\b(memory leak|leak(s|ed|ing)?|oom|out of memory|crash(es|ed)?|hang(s|ing)?|deadlock\w*|nan|inf/nan"
    r"|data loss|corrupt\w*|segfault|wrong (result|output|answer|value|gradient)s?|incorrect|race condition"
    r"|out[- ]of[- ]bounds|divergen\w*)\b)"
    r"|\b[A-Z][a-z]+(?:[A-Z][a-z]*)*(?:Error|Exception)\b",  # an exception users hit: FileNotFoundError
)
# Every match of _SEVERE holds one of these (lower case), or names an exception: most texts hold neither.
_SEVERE_WORDS = (
    "leak", "oom", "out of memory", "crash", "hang", "deadlock", "nan", "data loss", "corrupt", "segfault",
    "wrong ", "incorrect", "race condition", "bounds", "divergen",
)  # fmt: skip
NO_CODE_CAP = 3.0
SUPPORT_CAP = 3.5


def change_kind(tags: list[str], f: Facts) -> str | None:
    """The kind of change that scores: tags from paths (tests, CI) ride along, they name no code change."""
    kinds = [tag for tag in tags if tag in _KIND_BASE and not (f.product_paths and tag in _AREA_TAGS)]
    if not kinds:
        return None
    return max(kinds, key=lambda tag: _KIND_BASE[tag])


def severity(pr: PullRequest, f: Facts) -> str | None:
    """The worst harm the PR names in its title, body or code comments, if any."""
    for text in (pr.title, f.body):
        harm = _harm_in(text)
        if harm:
            return harm
    return _harm_in(comments(f.diff_added))  # read last: only when the title and body name no harm


def _harm_in(text: str) -> str | None:
    if not (may_hold(text, _SEVERE_WORDS) or "Error" in text or "Exception" in text):
        return None
    m = _SEVERE.search(text)
    return m.group(0) if m else None


def fixed_harm(pr: PullRequest, f: Facts, tags: list[str]) -> str | None:
    """The harm a fix removes, for a fix (or an unnamed change) of code."""
    return (
        severity(pr, f) if change_kind(tags, f) in ("bugfix", "performance", None) and f.code_paths else None
    )


def upgrade(pr: PullRequest, f: Facts) -> str | None:
    """The upgrade a PR is about: a package its title names ("Bump flash-attn to 2.7") whose pinned
    release the diff moves. A pin moved on the way to something else is a dependency change, no more."""
    moves = risk_rules.version_moves(f) if f.diffs else []
    words = {risk_rules.fold(w) for w in _TITLE_NAME.findall(pr.title)} if moves else set()
    for name, old, new in moves:
        if any(len(w) >= 4 and w in risk_rules.fold(name) for w in words):
            return f"{name} {old} -> {new}"
    return None


def importance(
    pr: PullRequest, f: Facts, tags: list[str], risks: list[RiskLabel], harm: str | None, t: dict[str, str]
) -> tuple[float, list[tuple[str, float]]]:
    """0-10: kind of change + severity of what it fixes (``harm``: `fixed_harm`) + its reach for users +
    size + spread + core paths.

    Size counts the shipped code (snapshots and docs weigh nothing), and for an upgrade the manifests and
    images that ship it; a PR that ships no code is capped."""
    parts: list[tuple[str, float]] = []
    kind = change_kind(tags, f)
    upgraded = upgrade(pr, f)
    default = 2.0 if f.product_paths else 1.0  # a code change whose title names no kind
    defined, undefined = risk_rules.option_changes(f)
    options = risk_rules.new_options(f) if not undefined - defined else []  # a renamed option is no new one
    release = released(pr.title)
    if release:
        parts.append((t["r_release"].format(version=release), RELEASE_BASE))
    elif upgraded:
        parts.append((t["r_upgrade"].format(what=upgraded), UPGRADE_BASE))
    elif options and _KIND_BASE.get(kind or "", default) < _KIND_BASE["feature"]:
        # New options are something new users can set, whatever the title calls the change.
        parts.append((t["r_new_options"].format(flags=", ".join(options[:3])), _KIND_BASE["feature"]))
    else:
        parts.append((t["r_kind"].format(kind=kind or "-"), _KIND_BASE.get(kind or "", default)))
    if harm:
        parts.append((t["r_severity"].format(word=harm), 1.5))
    code = sum(
        (x.additions or 0) + (x.deletions or 0)
        for x in pr.files or []
        if x.path in f.product_set or (upgraded and is_dependency(x.path))
    )
    lines = code if pr.files is not None else f.churn
    parts.append((t["r_size"].format(lines=lines), min(2.5, 0.8 * math.log10(1 + lines))))
    if len(f.modules) > 1:
        parts.append((t["r_spread"].format(n=len(f.modules)), min(1.5, 0.5 * (len(f.modules) - 1))))
    packages = [
        x.path.rsplit("/", 1)[0]
        for x in pr.files or []
        if x.status == "added" and x.path in f.product_set and x.path.endswith(_PACKAGE_MARKERS)
    ]
    if packages:  # one more module reached, as spread counts them
        parts.append((t["r_new_package"].format(path=packages[0]), 0.5))
    labels = {r.label for r in risks}
    if "core_path" in labels:
        parts.append((t["r_core"].format(n=len(f.core_paths)), 1.0))
    if "security_sensitive" in labels:
        parts.append((t["r_security"], 1.0))
    if "config_breaking" in labels:
        parts.append((t["r_breaking"], 1.5))
    installs = any(r.label == "dependency_change" and r.evidence_source == "diff" for r in risks)
    # A CI action's pin ships nothing; a range's moved bound reaches only the users at its edge.
    installs = installs and not all(is_ci(p) for p in f.paths or []) and risk_rules.installs_change(f)
    if installs:  # a version that every user's environment picks up
        parts.append((t["r_installs"], 1.5))
    if pr.reviews is not None:
        activity = sum(1 for r in pr.reviews if not r.is_bot) + len(pr.review_threads or [])
        if activity:
            parts.append((t["r_reviews"].format(n=activity), min(1.0, 0.25 * activity)))
    score = sum(v for _, v in parts)
    cap = _cap(pr, f, installs, t)
    if cap is not None:
        score = min(score, cap[0])
        parts.append((cap[1], 0.0))
    return _clamp(score), parts


def _cap(pr: PullRequest, f: Facts, installs: bool, t: dict[str, str]) -> tuple[float, str] | None:
    """The most a PR that ships no new behaviour may weigh, and the reason; None for the others (a release
    ships whatever its files are)."""
    if released(pr.title):
        return None
    product = product_lines(f)  # read again by no_tests: once per PR
    moves = any(x.status != "modified" for x in pr.files or [] if x.path in f.product_set)  # modules come, go
    if (
        product.diffs and not moves and cosmetic(product, parse_title(pr.title).text)
    ):  # weighs what docs weigh
        return NO_CODE_CAP, t["r_form_only"].format(cap=NO_CODE_CAP)
    if f.paths is not None and not f.code_paths:  # docs, tests or CI only
        return NO_CODE_CAP, t["r_no_code"].format(cap=NO_CODE_CAP)
    if f.paths is not None and not f.product_paths and not installs:  # examples, scripts
        return SUPPORT_CAP, t["r_support_only"].format(cap=SUPPORT_CAP)
    return None


def insight(
    pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]
) -> tuple[float, list[tuple[str, float]]]:
    """0-10: how much a reader learns: explanation, measurements, discussion, tests, kind."""
    parts: list[tuple[str, float]] = [(t["r_base"], 1.0)]
    words = len(f.body.split())
    if words:
        parts.append((t["r_body"].format(words=words), min(3.0, words / 60)))
    if _MEASURE.search(f.body) or _MEASURE.search(pr.title):
        parts.append((t["r_measured"], 1.5))
    if may_hold(f.body, _WHY_WORDS) and _WHY.search(f.body):
        parts.append((t["r_why"], 1.0))
    discussion = sum(1 for r in pr.reviews or [] if r.body.strip() and not r.is_bot)
    discussion += len(pr.review_threads or []) + sum(1 for c in pr.comments or [] if not c.is_bot)
    if discussion:
        parts.append((t["r_discussion"].format(n=discussion), min(2.0, 0.4 * discussion)))
    if f.test_paths and f.code_paths:
        parts.append((t["r_tests"], 1.0))
    added = [x.path for x in pr.files or [] if x.status == "added" and x.path in f.code_set]
    if added:  # a new module or abstraction is something to learn about
        parts.append((t["r_new_files"].format(n=len(added)), min(1.5, 0.5 * len(added))))
    if len(f.modules) > 1:
        parts.append((t["r_reach"].format(n=len(f.modules)), min(1.0, 0.5 * (len(f.modules) - 1))))
    for tag, bonus in _INSIGHT_TAGS:
        if tag in tags:
            parts.append((t["r_kind"].format(kind=tag), bonus))
            break
    if pr.related:
        parts.append((t["r_related"].format(n=len(pr.related)), 0.5))
    return _clamp(sum(v for _, v in parts)), parts


# --- the analysis -------------------------------------------------------------------


def analyse(pr: PullRequest, taxonomy: Taxonomy, lang: str) -> PRAnalysis:
    if pr.number is None:
        raise ValueError("direct pushes are not analysed")
    t = texts(lang)
    f = facts(pr, taxonomy)
    tags = tags_for(pr, taxonomy)
    found = risks_for(pr, f, tags, t)
    risks = [r for r in found if r.strength == "strong"]
    weak = [r for r in found if r.strength == "weak"]
    harm = fixed_harm(pr, f, tags)  # the importance and the points to watch both name it
    imp, imp_parts = importance(pr, f, tags, risks, harm, t)
    names = pr_text.changed_names(f)
    ins, ins_parts = insight(pr, f, tags, t)
    unresolved = [
        f"{th.path or '-'}: {quote(th.body)}"
        for th in pr.review_threads or []
        if not th.is_resolved and not th.is_outdated
    ]
    return PRAnalysis(
        repo=pr.repo,
        number=pr.number,
        summary=pr_text.summary(pr, f, names, t),
        explanation=t["explanation"].format(
            files=len(f.paths) if f.paths is not None else "?",
            modules=", ".join(f.modules[:3]) or "-",
            additions=pr.additions,
            deletions=pr.deletions,
        ),
        importance=imp,
        insight=ins,
        tags=tags,
        risks=risks,
        weak_risks=weak,
        watch=pr_text.watch(pr, f, names, [*risks, *weak], harm, t),
        unresolved=unresolved,
        related=pr.related,
        reasons=[f"{t['importance']} {name} +{value:.1f}" for name, value in imp_parts]
        + [f"{t['insight']} {name} +{value:.1f}" for name, value in ins_parts],
        engine="rules",
        version=rules_version(taxonomy),
    )


def _clamp(score: float) -> float:
    return round(max(0.0, min(10.0, score)), 1)
