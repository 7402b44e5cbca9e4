"""The request that asks the LLM to analyse one PR: its prompt, the evidence fitted to an input budget,
the rules' hints, and what the answer may name."""

from __future__ import annotations

import re

from prdigest.analysis.llm.call import Call, make_call, prompt_lang
from prdigest.analysis.llm.evidence import fit, pr_sections, shown_of, with_notes
from prdigest.analysis.llm.safety import data_line, one_line
from prdigest.analysis.llm.schemas import JUDGED_LABELS, SOURCES, Allowed, PRAnalysisOut
from prdigest.analysis.taxonomy import known_tags
from prdigest.config import Taxonomy
from prdigest.models import PRAnalysis, PullRequest
from prdigest.prompts import load_prompt
from prdigest.storage import Store


def pr_call(
    store: Store,
    pr: PullRequest,
    rules: PRAnalysis,
    taxonomy: Taxonomy,
    lang: str,
    version: str,
    diff: str | None,
    instructions: str,
    budget: int,
) -> Call:
    """The analysis request of ``pr`` within ``budget`` input tokens; ``diff`` is its diff excerpt (its
    own, or one loaded for a PR that carries none); ``rules`` its rules analysis, whose judged labels are
    hints."""
    prompt = load_prompt("analyse_pr", prompt_lang(lang))
    tags = known_tags(taxonomy)
    variables = {
        "repo": pr.repo,
        "tags": tags,
        "sources": SOURCES,
        # The rules' findings for the judged labels: hints to confirm or reject, never findings.
        "hints": [
            data_line(f"{r.label}: {one_line(r.evidence, 300)} ({r.evidence_source})")
            for r in rules.risks
            if r.label in JUDGED_LABELS
        ],
    }
    related = {n: _title(store, pr.repo, n) for n in pr.related}
    notes, budget = with_notes(prompt, budget, instructions, **variables)
    header, sections = pr_sections(pr, budget, diff, related)
    evidence = fit(header, sections, budget)
    # The PRs it may call related: its own references, and any "#N" its text names.
    named = {int(n) for n in re.findall(r"#(\d+)", f"{pr.title}\n{pr.body}")}
    allowed = Allowed(
        links=frozenset(filter(None, [pr.url])),
        tags=frozenset(tags),
        risk_labels=frozenset(JUDGED_LABELS),
        prs=frozenset(named | set(pr.related)) - {pr.number or 0},
        shown=shown_of(pr, sections),
    )
    return make_call(
        prompt,
        purpose="analyse_pr",
        subject=pr.uid,
        version=version,
        schema=PRAnalysisOut,
        allowed=allowed,
        evidence=evidence,
        instructions=notes,
        **variables,
    )


def _title(store: Store, repo: str, number: int) -> str:
    cached = store.get_pr(repo, number)
    return one_line(cached.title, 200) if cached else ""
