"""The model's check of each "addressed" the rules found: it confirms or rejects, never adds one.

One request per pair (the risk, the later PR), its answer cached by the request's hash, so a later
report asks nothing again. A failed call (an unreachable server, a spent monthly budget, invalid
output) keeps the rules' judgement.
"""

from __future__ import annotations

from prdigest.analysis.followups.items import RiskItem
from prdigest.analysis.llm.client import Call, LLMError, make_call, prompt_lang
from prdigest.analysis.llm.engine import LLMEngine
from prdigest.analysis.llm.evidence import evidence_budget, pr_evidence
from prdigest.analysis.llm.safety import data_line, one_line
from prdigest.analysis.llm.schemas import Allowed, FollowupOut
from prdigest.config import LLMSettings
from prdigest.i18n import risk_name
from prdigest.models import PullRequest
from prdigest.prompts import load_prompt
from prdigest.storage import Store

RISK_PRS_SHOWN = 3  # of the risk's PRs, the model reads the first few (the weightiest)


class FollowupCheck:
    """One run's checks of "addressed" pairs against one endpoint."""

    def __init__(self, settings: LLMSettings, store: Store, repo: str, lang: str):
        self.engine = LLMEngine(settings, store)
        self.budget = settings.input_budget_tokens
        self.repo = repo
        self.lang = lang

    def confirms(self, item: RiskItem, own: dict[int, PullRequest], later: PullRequest) -> bool:
        """False only when the model rejects the pair; its failure keeps the rules' "addressed"."""
        try:
            result = self.engine.complete(self.call(item, own, later), cache=True)
        except LLMError:
            return True
        return not isinstance(result, FollowupOut) or result.addressed

    def call(self, item: RiskItem, own: dict[int, PullRequest], later: PullRequest) -> Call:
        prompt = load_prompt("followup", prompt_lang(self.lang))
        variables = {"repo": self.repo, "label": item.label, "label_name": risk_name(item.label, prompt.lang)}
        shown = [own[n] for n in item.prs[:RISK_PRS_SHOWN] if n in own]
        # The evidence's budget shared by the risk's PRs and the later one, the later one as much as all.
        each = max(evidence_budget(prompt, self.budget, **variables) // (2 * max(len(shown), 1)), 100)
        lines = [
            data_line(f"Risk ({item.label}) of the week of {item.week.since}: {one_line(item.title, 300)}"),
            data_line(f"Its evidence: {one_line(item.evidence, 600)}"),
            *(f"\n== Risk PR ==\n{pr_evidence(pr, each, None, {})}" for pr in shown),
            f"\n== Later PR ==\n{pr_evidence(later, each * max(len(shown), 1), None, {})}",
            data_line(f"Files of the later PR: {', '.join(f.path for f in (later.files or [])[:30])}"),
        ]
        return make_call(
            prompt,
            purpose="followup",
            subject=f"{self.repo} {'+'.join(map(str, item.prs))} by #{later.number}",
            version=f"followup-{prompt.version}",
            schema=FollowupOut,
            allowed=Allowed(),
            evidence="\n".join(lines),
            **variables,
        )
