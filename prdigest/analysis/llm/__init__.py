"""The LLM engine: per-PR analyses and the week's narrative from any OpenAI-compatible server.

The rules engine is the fallback: each PR the LLM fails on keeps its rules analysis, and each
report section the LLM fails on keeps the rules' version. What the LLM returns is validated,
clamped and made inert before anything keeps it. One module per concern:

* ``client``: the openai SDK (only there, imported only when a request is sent), the
  structured-output ladder (``json_schema``, ``json_object``, a "JSON only" prompt; the rung
  that worked is kept in ``llm_rungs`` so the next run starts there), one repair request for
  invalid output, retries, ``sdk_client`` and ``tool_call``.
* ``schemas``: the pydantic models of what an LLM may return, and what each may name.
* ``gate``: the quality gate on what a model says: a summary is a sentence about its subject, not
  JSON, hashes, the prompt echoed or a merged PR called unmerged; a refused answer is repaired once,
  then the rules answer, and it is never cached.
* ``safety``: text going out redacted and sealed in ``<untrusted_…>`` tags; text coming back
  without mentions, links or markup, and without PR numbers it may not name; a risk label is
  kept only when its evidence quotes what the model was shown of the PR.
* ``evidence``: what goes into a prompt within its token budget, least valuable lines dropped first.
* ``engine``: per-PR analyses (cached by content, model and prompt version); every request is
  logged in ``llm_calls``.
* ``merge``: an LLM analysis merged with the rules' facts; scores that rank nothing dropped.
* ``budget``: the endpoint's monthly token budget: no request once this month's tokens reach it.
* ``narrative``: the week's narrative request, and the report it rewrites.

Secret redaction itself lives in ``prdigest.redact``; ``redact`` is re-exported here.
"""

from prdigest.analysis.llm.budget import LLMBudgetSpent, MonthlyBudget
from prdigest.analysis.llm.call import Attempt, Call, Exchange, make_call
from prdigest.analysis.llm.client import (
    RUNGS,
    LLMBadOutput,
    LLMClient,
    LLMError,
    LLMUnavailable,
    sdk_client,
    tool_call,
)
from prdigest.analysis.llm.engine import LLMEngine
from prdigest.analysis.llm.evidence import (
    Section,
    evidence_budget,
    fit,
    lead,
    pr_evidence,
    pr_sections,
    shown_of,
    week_evidence,
)
from prdigest.analysis.llm.merge import flat_scores, with_rules, with_rules_scores
from prdigest.analysis.llm.narrative import apply_narrative
from prdigest.analysis.llm.safety import Shown, data_line, estimate_tokens, inert, one_line, scrub_prs
from prdigest.analysis.llm.schemas import (
    FACT_LABELS,
    JUDGED_LABELS,
    SOURCES,
    Allowed,
    LLMOutput,
    NarrativeOut,
    ObservationOut,
    PRAnalysisOut,
    PRNumbers,
    RecommendationOut,
    RiskOut,
    Score,
    ThemeOut,
    first_json_object,
    json_value,
    strict_schema,
)
from prdigest.analysis.llm.workers import DiffLoader, Progress
from prdigest.models import LLMUsage
from prdigest.redact import REDACTED, redact

__all__ = [
    "FACT_LABELS",
    "JUDGED_LABELS",
    "REDACTED",
    "RUNGS",
    "SOURCES",
    "Allowed",
    "Attempt",
    "Call",
    "DiffLoader",
    "Exchange",
    "LLMBadOutput",
    "LLMBudgetSpent",
    "LLMClient",
    "LLMEngine",
    "LLMError",
    "LLMOutput",
    "LLMUnavailable",
    "LLMUsage",
    "MonthlyBudget",
    "NarrativeOut",
    "ObservationOut",
    "PRAnalysisOut",
    "PRNumbers",
    "Progress",
    "RecommendationOut",
    "RiskOut",
    "Score",
    "Section",
    "Shown",
    "ThemeOut",
    "apply_narrative",
    "data_line",
    "estimate_tokens",
    "evidence_budget",
    "first_json_object",
    "fit",
    "flat_scores",
    "inert",
    "json_value",
    "lead",
    "make_call",
    "one_line",
    "pr_evidence",
    "pr_sections",
    "redact",
    "scrub_prs",
    "sdk_client",
    "shown_of",
    "strict_schema",
    "tool_call",
    "week_evidence",
    "with_rules",
    "with_rules_scores",
]
