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
from dataclasses import dataclass

from prdigest.analysis.taxonomy import (
    is_ci,
    is_core,
    is_dependency,
    is_doc,
    is_test,
    module_of,
    parse_title,
    tags_for,
    taxonomy_hash,
)
from prdigest.config import Taxonomy
from prdigest.i18n import risk_name, texts
from prdigest.models import PRAnalysis, PullRequest, RiskLabel

RULES_VERSION = "rules-1"

# Risk label -> the PR fields it needs; unknown input means the rule stays silent.
RISK_INPUTS: dict[str, tuple[str, ...]] = {
    "security_sensitive": (),
    "failing_checks": ("checks",),
    "tests_removed": (),  # removed files need the file list; skip markers need only the diff
    "perf_regression": (),
    "config_breaking": (),
    "large_low_review": ("files", "reviews"),
    "fork_no_bot_review": ("is_fork", "reviews"),
    "unresolved_threads": ("review_threads",),
    "core_path": ("files",),
    "no_tests": ("files",),
    "dependency_change": ("files",),
}
# How much a label weighs in the week's risk level and the order of observations.
RISK_WEIGHT = {
    "security_sensitive": 5,
    "failing_checks": 4,
    "tests_removed": 4,
    "perf_regression": 4,
    "config_breaking": 4,
    "large_low_review": 3,
    "fork_no_bot_review": 3,
    "unresolved_threads": 3,
    "core_path": 2,
    "no_tests": 2,
    "dependency_change": 2,
}

LARGE_CHANGE_LINES = 800
_KIND_BASE = {
    "security": 3.5,
    "feature": 3.0,
    "performance": 3.0,
    "bugfix": 2.5,
    "refactor": 2.0,
    "configuration": 2.0,
    "dependency": 1.5,
    "ci": 1.5,
    "revert": 1.5,
    "testing": 1.2,
    "docs": 0.6,
}
# Security-sensitive code, each pattern behind the word it needs: a plain substring test skips
# most patterns on most diffs (one alternation over hundreds of lines was the rules engine's cost).
_SECURITY_DIFF = [
    (word, re.compile(pattern, re.I))
    for word, pattern in (
        ("eval", r"\beval\s*\("),
        ("exec", r"\bexec\s*\("),
        ("pickle", r"pickle\.loads?\("),
        ("shell", r"shell\s*=\s*True"),
        ("os.system", r"os\.system\("),
        ("yaml.load", r"yaml\.load\((?!.*SafeLoader)"),
        ("torch.load", r"torch\.load\((?!.*weights_only\s*=\s*True)"),
        ("verify", r"verify\s*=\s*False"),
        *((word, rf"{word}\s*=\s*['\"][^'\"]{{6,}}") for word in ("password", "secret", "api_key", "token")),
    )
]
_SECURITY_TEXT = re.compile(
    r"\b(security|cve-\d+|vulnerab\w*|injection|sanitiz\w*|privilege|credential\w*)\b", re.I
)
_SKIP_DIFF = re.compile(
    r"^\+.*(@pytest\.mark\.(skip|xfail)|unittest\.skip|\.skip\(|pytest\.skip\(|#\s*disabled)", re.I
)
_PERF_REGRESSION = re.compile(
    r"(perf(ormance)? regression|\bslow(er|down)\b|throughput (drops?|regress\w*|loss)|\boverhead\b"
    r"|(drops?|regress\w*|slower) (by )?~?\d+(\.\d+)?\s*%|\d+(\.\d+)?\s*% (slower|regression|drop))",
    re.I,
)
_CONFIRMED = re.compile(r"\d+(\.\d+)?\s*%|\bmeasured\b|\bconfirmed\b|\bbenchmark", re.I)
_FLAG = re.compile(r"--[a-z][a-z0-9-]+(?:[_-][a-z0-9]+)*")
_REMOVED_CONFIG = re.compile(
    r"\b(remov(e[sd]?|ing)|renam(e[sd]?|ing)|deprecat(e[sd]?|ing))\b[^.\n]{0,60}"
    r"\b(flags?|options?|arguments?|settings?|parameters?|config(uration)? (keys?|fields?|options?))\b",
    re.I,
)
_MEASURE = re.compile(r"\d+(\.\d+)?\s*(%|x\b|ms\b|s\b|gb\b|mb\b|tok(en)?s?/s|tflops|qps)", re.I)
_WHY = re.compile(r"\b(because|root cause|caused by|so that|in order to|trade-?off|instead of|race)\b", re.I)
_TEMPLATE = re.compile(r"^\s*(#+\s.*|-\s*\[[ xX]?\]\s*.*|<!--.*?-->|\s*)$", re.M)


@dataclass(frozen=True)
class Facts:
    """What the rules read from one PR, computed once."""

    churn: int
    paths: list[str] | None
    code_paths: list[str]
    test_paths: list[str]
    core_paths: list[str]
    modules: list[str]
    body: str
    diff_added: list[str]
    diff_removed: list[str]


def rules_version(taxonomy: Taxonomy) -> str:
    return f"{RULES_VERSION}+{taxonomy_hash(taxonomy)}"


def clean_body(body: str) -> str:
    """The body without PR-template headings, checklists and comments."""
    text = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not _TEMPLATE.fullmatch(line)).strip()


def facts(pr: PullRequest, taxonomy: Taxonomy) -> Facts:
    paths = [f.path for f in pr.files] if pr.files is not None else None
    code = [p for p in paths or [] if not (is_test(p) or is_doc(p) or is_ci(p))]
    churn_by_module: dict[str, int] = {}
    for f in pr.files or []:
        if f.path in code:
            key = module_of(f.path)
            churn_by_module[key] = churn_by_module.get(key, 0) + (f.additions or 0) + (f.deletions or 0)
    diff = (pr.diff_excerpt or "").splitlines()
    return Facts(
        churn=pr.additions + pr.deletions,
        paths=paths,
        code_paths=code,
        test_paths=[p for p in paths or [] if is_test(p)],
        core_paths=[p for p in paths or [] if is_core(p, taxonomy)],
        modules=sorted(churn_by_module, key=lambda m: -churn_by_module[m]),
        body=clean_body(pr.body),
        diff_added=[line[1:] for line in diff if line.startswith("+")],
        diff_removed=[line[1:] for line in diff if line.startswith("-")],
    )


# --- risk rules: each returns (evidence, where it came from) or None --------------

Evidence = tuple[str, str] | None


def _security(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    # One search over all the lines, not one per line: diffs run to hundreds of lines.
    for lines, key in ((f.diff_added, "ev_security_added"), (f.diff_removed, "ev_security_removed")):
        text = "\n".join(lines)
        lowered = text.lower()
        hits = [m for word, pattern in _SECURITY_DIFF if word in lowered and (m := pattern.search(text))]
        hit = min(hits, key=lambda m: m.start(), default=None)
        if hit:
            start, end = text.rfind("\n", 0, hit.start()) + 1, text.find("\n", hit.end())
            return t[key].format(code=_quote(text[start : end if end != -1 else len(text)].strip())), "diff"
    match = _SECURITY_TEXT.search(pr.title) or _SECURITY_TEXT.search(f.body)
    if match and (f.paths is None or f.code_paths):  # a docs page about security is no risk
        return t["ev_security_text"].format(word=match.group(0)), "title" if _SECURITY_TEXT.search(
            pr.title
        ) else "body"
    return None


def _failing_checks(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.checks is not None
    if pr.checks.state in ("FAILURE", "ERROR"):
        names = ", ".join(pr.checks.failing[:3]) or pr.checks.state
        return t["ev_failing_checks"].format(names=names), "checks"
    return None


def _tests_removed(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    removed = [x.path for x in pr.files or [] if x.status == "removed" and is_test(x.path)]
    if removed:
        return t["ev_tests_removed"].format(paths=", ".join(removed[:3])), "paths"
    skips = [line for line in (pr.diff_excerpt or "").splitlines() if _SKIP_DIFF.match(line)]
    if skips:
        return t["ev_tests_skipped"].format(code=_quote(skips[0][1:].strip())), "diff"
    return None


def _perf_regression(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    for where, text in (("title", pr.title), ("body", f.body)):
        match = _PERF_REGRESSION.search(text)
        if match:
            sentence = _sentence_around(text, match.start())
            key = "ev_perf_confirmed" if _CONFIRMED.search(sentence) else "ev_perf_suspected"
            return t[key].format(text=_quote(sentence)), where
    return None


def _config_breaking(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    removed = {m for line in f.diff_removed for m in _FLAG.findall(line)}
    kept = {m for line in f.diff_added for m in _FLAG.findall(line)}
    gone = sorted(removed - kept)
    if gone:
        return t["ev_config_removed"].format(flags=", ".join(gone[:4])), "diff"
    parsed = parse_title(pr.title)
    if parsed.breaking or "BREAKING CHANGE" in pr.body:
        return t["ev_config_breaking_marker"], "title" if parsed.breaking else "body"
    for where, text in (("title", pr.title), ("body", f.body)):
        match = _REMOVED_CONFIG.search(text)
        if match:
            return t["ev_config_text"].format(text=_quote(match.group(0))), where
    return None


def _large_low_review(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
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


def _fork_no_bot_review(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    assert pr.reviews is not None
    if pr.is_fork and not any(r.is_bot for r in pr.reviews):
        return t["ev_fork_no_bot"], "reviews"
    return None


def _unresolved_threads(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    open_threads = [th for th in pr.review_threads or [] if not th.is_resolved and not th.is_outdated]
    if open_threads:
        first = open_threads[0]
        where = f" ({first.path})" if first.path else ""
        return t["ev_unresolved"].format(n=len(open_threads), first=_quote(first.body) + where), "reviews"
    return None


def _core_path(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    if f.core_paths:
        more = f" (+{len(f.core_paths) - 3})" if len(f.core_paths) > 3 else ""
        return t["ev_core_path"].format(paths=", ".join(f.core_paths[:3]) + more), "paths"
    return None


def _no_tests(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    if ("bugfix" in tags or "feature" in tags) and f.code_paths and not f.test_paths:
        return t["ev_no_tests"].format(n=len(f.code_paths)), "paths"
    return None


def _dependency_change(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    deps = [p for p in f.paths or [] if is_dependency(p)]
    if not deps:
        return None
    added = [
        line.strip()
        for line in f.diff_added
        if re.match(r"^\s*[\"']?[A-Za-z0-9_.\-\[\]]+\s*(==|>=|~=|<)", line)
    ]
    if added:
        return t["ev_dependency_lines"].format(
            paths=", ".join(deps[:3]), lines=_quote("; ".join(added[:3]))
        ), "diff"
    return t["ev_dependency"].format(paths=", ".join(deps[:3])), "paths"


RISK_RULES: dict[str, Callable[[PullRequest, Facts, list[str], dict[str, str]], Evidence]] = {
    "security_sensitive": _security,
    "failing_checks": _failing_checks,
    "tests_removed": _tests_removed,
    "perf_regression": _perf_regression,
    "config_breaking": _config_breaking,
    "large_low_review": _large_low_review,
    "fork_no_bot_review": _fork_no_bot_review,
    "unresolved_threads": _unresolved_threads,
    "core_path": _core_path,
    "no_tests": _no_tests,
    "dependency_change": _dependency_change,
}


def risks_for(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> list[RiskLabel]:
    found = []
    for label, rule in RISK_RULES.items():
        if any(getattr(pr, field) is None for field in RISK_INPUTS[label]):
            continue  # unknown input: the rule does not fire
        evidence = rule(pr, f, tags, t)
        if evidence:
            found.append(RiskLabel(label=label, evidence=evidence[0], evidence_source=evidence[1]))
    return found


# --- scores -------------------------------------------------------------------------


def importance(pr: PullRequest, f: Facts, tags: list[str], risks: list[RiskLabel], t: dict[str, str]):
    """0-10: kind of change + size + spread + core paths + security + review activity."""
    parts: list[tuple[str, float]] = []
    kind = max(tags, key=lambda tag: _KIND_BASE.get(tag, 1.0), default=None)
    parts.append((t["r_kind"].format(kind=kind or "-"), _KIND_BASE.get(kind or "", 1.0)))
    parts.append((t["r_size"].format(lines=f.churn), min(2.5, 0.8 * math.log10(1 + f.churn))))
    if len(f.modules) > 1:
        parts.append((t["r_spread"].format(n=len(f.modules)), min(1.5, 0.5 * (len(f.modules) - 1))))
    labels = {r.label for r in risks}
    if "core_path" in labels:
        parts.append((t["r_core"].format(n=len(f.core_paths)), 2.0))
    if "security_sensitive" in labels:
        parts.append((t["r_security"], 2.0))
    if "config_breaking" in labels:
        parts.append((t["r_breaking"], 1.0))
    if pr.reviews is not None:
        activity = sum(1 for r in pr.reviews if not r.is_bot) + len(pr.review_threads or [])
        if activity:
            parts.append((t["r_reviews"].format(n=activity), min(1.0, 0.25 * activity)))
    score = sum(v for _, v in parts)
    if f.paths is not None and not f.code_paths:  # docs, tests or CI only
        score = min(score, 4.0)
        parts.append((t["r_no_code"], 0.0))
    return _clamp(score), parts


def insight(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]):
    """0-10: how much a reader learns: explanation, measurements, discussion, tests, kind."""
    parts: list[tuple[str, float]] = [(t["r_base"], 1.0)]
    words = len(f.body.split())
    if words:
        parts.append((t["r_body"].format(words=words), min(3.0, words / 60)))
    if _MEASURE.search(f.body) or _MEASURE.search(pr.title):
        parts.append((t["r_measured"], 1.5))
    if _WHY.search(f.body):
        parts.append((t["r_why"], 1.0))
    discussion = sum(1 for r in pr.reviews or [] if r.body.strip() and not r.is_bot)
    discussion += len(pr.review_threads or []) + sum(1 for c in pr.comments or [] if not c.is_bot)
    if discussion:
        parts.append((t["r_discussion"].format(n=discussion), min(2.0, 0.4 * discussion)))
    if f.test_paths and f.code_paths:
        parts.append((t["r_tests"], 1.0))
    added = [x.path for x in pr.files or [] if x.status == "added" and x.path in f.code_paths]
    if added:  # a new module or abstraction is something to learn about
        parts.append((t["r_new_files"].format(n=len(added)), min(1.5, 0.5 * len(added))))
    if len(f.modules) > 1:
        parts.append((t["r_reach"].format(n=len(f.modules)), min(1.0, 0.5 * (len(f.modules) - 1))))
    for tag, bonus in (("performance", 1.5), ("security", 1.5), ("refactor", 1.0)):
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
    risks = risks_for(pr, f, tags, t)
    imp, imp_parts = importance(pr, f, tags, risks, t)
    ins, ins_parts = insight(pr, f, tags, t)
    unresolved = [
        f"{th.path or '-'}: {_quote(th.body)}"
        for th in pr.review_threads or []
        if not th.is_resolved and not th.is_outdated
    ]
    return PRAnalysis(
        repo=pr.repo,
        number=pr.number,
        summary=summary_line(pr),
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
        watch=[t["watch"].format(risk=risk_name(r.label, lang), evidence=r.evidence) for r in risks[:3]],
        unresolved=unresolved,
        related=pr.related,
        reasons=[f"{t['importance']} {name} +{value:.1f}" for name, value in imp_parts]
        + [f"{t['insight']} {name} +{value:.1f}" for name, value in ins_parts],
        engine="rules",
        version=rules_version(taxonomy),
    )


def summary_line(pr: PullRequest) -> str:
    """The title without its conventions: "feat(rollout): add X" -> "rollout: Add X"."""
    parsed = parse_title(pr.title)
    text = parsed.text or pr.title
    text = text[:1].upper() + text[1:]
    scope = parsed.scope or ", ".join(b for b in parsed.brackets if b not in ("ci", "fix", "feat"))
    return f"{scope}: {text}" if scope else text


def _clamp(score: float) -> float:
    return round(max(0.0, min(10.0, score)), 1)


def _quote(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _sentence_around(text: str, index: int) -> str:
    """The sentence that holds text[index] ("8.5%" does not end a sentence)."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, index)), default=0)
    end = _SENTENCE_END.search(text, index)
    return text[start : end.start() if end else len(text)].strip()
