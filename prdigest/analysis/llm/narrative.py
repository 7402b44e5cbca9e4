"""The week's narrative: the request, and the report it rewrites (figures left as computed)."""

from __future__ import annotations

from prdigest.analysis.llm.call import Call, make_call, prompt_lang
from prdigest.analysis.llm.evidence import week_evidence, with_notes
from prdigest.analysis.llm.safety import scrub_prs
from prdigest.analysis.llm.schemas import Allowed, NarrativeOut
from prdigest.analysis.report import enforce_citations
from prdigest.analysis.risks.level import level_sentence
from prdigest.analysis.rules import RISK_RULES
from prdigest.i18n import report_texts, risk_name
from prdigest.models import PRAnalysis, Recommendation, Report, RiskObservation, Theme
from prdigest.prompts import load_prompt


def narrative_call(
    report: Report, analyses: dict[int, PRAnalysis], input_budget: int, instructions: str = ""
) -> Call:
    """The request for the week's narrative, its evidence and the repository's notes (``instructions``)
    within ``input_budget`` tokens."""
    prompt = load_prompt("narrate", prompt_lang(report.lang))
    variables = {
        "repo": report.repo,
        "since": report.window.since,
        "until": report.window.until,
        "risk_labels": {label: risk_name(label, prompt.lang) for label in RISK_RULES},
    }
    notes, budget = with_notes(prompt, input_budget, instructions, **variables)
    return make_call(
        prompt,
        purpose="narrate",
        subject=f"{report.repo} {report.window.since}..{report.window.until}",
        version=f"narrate-{prompt.version}",
        schema=NarrativeOut,
        allowed=Allowed(links=frozenset(p.url for p in report.prs if p.url)),
        evidence=week_evidence(report, analyses, budget),
        instructions=notes,
        **variables,
    )


def apply_narrative(report: Report, narrative: NarrativeOut) -> Report:
    """A copy of the report with the narrative's sections, checked: a theme's PRs in the model's order
    (the order its story tells them), the other sections' in merge order."""
    position = {p.number: i for i, p in enumerate(report.prs)}

    def ordered(numbers: list[int]) -> list[int]:
        # Numbers outside the window sort last; enforce_citations drops them.
        return sorted(dict.fromkeys(numbers), key=lambda n: position.get(n, len(position)))

    # Prose may name the window's PRs and their own references, nothing else.
    keep = {n for p in report.prs for n in (p.number, *p.related)}

    def prose(text: str) -> str:
        return scrub_prs(text, keep)

    out = report.model_copy(deep=True)
    out.summary = prose(narrative.summary)
    out.themes = [
        Theme(
            title=prose(t.title),
            prs=[n for n in dict.fromkeys(t.prs) if n in position],  # the model's order: its story's
            story=prose(t.story),
            trend=prose(t.trend),
            representative=[n for n in t.representative if n in t.prs],
        )
        for t in narrative.themes
    ]
    out.risk_observations = [
        RiskObservation(title=prose(o.title), label=o.label, prs=ordered(o.prs), evidence=prose(o.evidence))
        for o in narrative.risks
    ]
    out.recommendations = [
        Recommendation(text=prose(r.text), prs=ordered(r.prs)) for r in narrative.recommendations
    ]
    enforce_citations(out)
    for section in ("themes", "risk_observations", "recommendations"):
        if not getattr(out, section):
            setattr(out, section, getattr(report, section))
    # The level and its cause are the report's, said in the one sentence every rendering says.
    level = level_sentence(out, report_texts(out.lang, out.window.since, out.window.until))
    gap = "" if out.lang == "zh" else " "
    out.summary = out.summary if level in out.summary else f"{out.summary}{gap}{level}".strip()
    return out
