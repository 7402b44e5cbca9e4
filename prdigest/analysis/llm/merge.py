"""The LLM's analysis of a PR as a report uses it: merged with the rules' facts, and scores that rank.

With an LLM answer, the judgement labels (``JUDGED_LABELS``) and the scores are the model's; the
rules keep the labels of facts the model cannot check (``FACT_LABELS``), and, where the model names no
risk at all, their strong findings that a line of the diff shows (a weak model answers ``[]`` to
everything; a judgement it gives is never drowned by the rules'). A week whose scores are
all equal (or all 10) keeps the rules' scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prdigest.analysis.llm.safety import scrub_prs
from prdigest.analysis.llm.schemas import FACT_LABELS, JUDGED_LABELS
from prdigest.models import PRAnalysis, RiskLabel

# Scores that do not rank PRs: all equal over this many LLM analyses, or all 10 over two.
FLAT_SCORES_MIN = 3


def with_rules(analysis: PRAnalysis, rules: PRAnalysis, window: Iterable[int], lang: str) -> PRAnalysis:
    """The LLM's analysis as a report in ``lang`` uses it: its judged labels (or, where it named none, the
    rules' diff-evidenced ones), the rules' fact labels, the rules' tags where it named none, its summary
    in ``lang`` (``told_in``), and no PR number in its prose outside the PR, its related PRs and ``window``.

    Merged on use, not in the cache: a new rules engine changes the facts without a new LLM call.
    """
    keep = {*window, analysis.number, *analysis.related}
    # A label the model confirms keeps what the rules' evidence showed: users break (RiskLabel.breaks).
    breaking = {r.label for r in rules.risks if r.breaks}
    judged = [  # caches of older prompts had more labels
        r.model_copy(update={"breaks": r.breaks or r.label in breaking})
        for r in analysis.risks
        if r.label in JUDGED_LABELS
    ]
    # A silent model (no risk at all) leaves the rules' findings that a line of the diff shows.
    kept = [r for r in rules.risks if r.label in FACT_LABELS or (not judged and diff_evidenced(r))]
    theirs = [r.model_copy(update={"by_rules": True}) for r in kept]
    return analysis.model_copy(
        update={
            "summary": scrub_prs(told_in(analysis, rules, lang), keep),
            "explanation": scrub_prs(analysis.explanation, keep),
            "watch": [t for t in (scrub_prs(w, keep) for w in analysis.watch) if t],
            "unresolved": [t for t in (scrub_prs(u, keep) for u in analysis.unresolved) if t],
            "risks": [
                r.model_copy(update={"evidence": scrub_prs(r.evidence, keep)}) for r in [*judged, *theirs]
            ],
            "tags": analysis.tags or rules.tags,
        }
    )


def told_in(analysis: PRAnalysis, rules: PRAnalysis, lang: str) -> str:
    """The analysis's summary in ``lang``: its own, the translation the same answer gave, else the rules'
    (``rules`` is in the report's language). A PR is analysed once, whatever its reports' languages."""
    if analysis.lang in ("", lang):
        return analysis.summary
    return analysis.translations.get(lang) or rules.summary


def diff_evidenced(risk: RiskLabel) -> bool:
    """A judged finding of the rules' strong enough to outlive a silent model: strong, and shown by a
    line of the diff (a title's or description's words, a file list, are what the model judges better)."""
    return risk.label in JUDGED_LABELS and risk.strength == "strong" and risk.evidence_source == "diff"


def flat_scores(analyses: Sequence[PRAnalysis]) -> bool:
    """Whether the LLM's scores rank nothing: every LLM analysis got the same importance or the same
    insight (over ``FLAT_SCORES_MIN`` of them), or all got 10 (over two)."""
    llm = [a for a in analyses if a.engine == "llm"]
    for score in ("importance", "insight"):
        values = {getattr(a, score) for a in llm}
        if len(values) == 1 and (len(llm) >= FLAT_SCORES_MIN or (len(llm) >= 2 and values == {10.0})):
            return True
    return False


def with_rules_scores(analysis: PRAnalysis, rules: PRAnalysis) -> PRAnalysis:
    """The analysis with the rules' importance and insight, and their reasons."""
    return analysis.model_copy(
        update={"importance": rules.importance, "insight": rules.insight, "reasons": rules.reasons}
    )
