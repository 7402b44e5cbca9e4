"""The model's check of the risks the rules found addressed: for each, which of its few candidate later
PRs really address it. It confirms or rejects candidates, never adds one.

Items are asked in batches (ITEMS_PER_REQUEST to a request, whatever their week), each with at most
CANDIDATES later PRs, so that a report asks a handful of requests however many risks earlier weeks
left. Answers are cached by the request's hash: a later report asks nothing again. A failed call (an
unreachable server, a spent budget or cap, invalid output) keeps the rules' judgement, and so does an
item the answer leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.analysis.followups.items import RiskItem
from prdigest.analysis.llm.call import Call, make_call, prompt_lang
from prdigest.analysis.llm.client import LLMError
from prdigest.analysis.llm.engine import LLMEngine
from prdigest.analysis.llm.evidence import evidence_budget, pr_evidence
from prdigest.analysis.llm.safety import data_line, one_line
from prdigest.analysis.llm.schemas import Allowed, FollowupOut
from prdigest.i18n import risk_name
from prdigest.models import PullRequest
from prdigest.prompts import load_prompt

ITEMS_PER_REQUEST = 8  # as many as an answer's list may hold (schemas.MAX_ITEMS)
CANDIDATES = 3  # later PRs shown per item: the rules' strongest ties
RISK_PRS_SHOWN = 3  # of the risk's PRs, the model reads the titles and files of the first few
MIN_EACH = 80  # tokens of evidence a candidate gets however many share the request


@dataclass(frozen=True)
class Asked:
    """One risk item and the later PRs the rules found addressing it, strongest tie first."""

    item: RiskItem
    candidates: tuple[PullRequest, ...]


class FollowupCheck:
    """One report's checks of "addressed" risks, through the report's LLM engine (its usage and caps)."""

    def __init__(self, engine: LLMEngine, repo: str, lang: str):
        self.engine = engine
        self.budget = engine.settings.input_budget_tokens
        self.repo = repo
        self.lang = lang

    def addressed_by(self, asked: list[Asked], own: dict[int, PullRequest]) -> list[set[int] | None]:
        """For each of ``asked``, the candidates the model says address it; None where it gave no verdict
        (the rules' judgement stands)."""
        out: list[set[int] | None] = [None] * len(asked)
        for start in range(0, len(asked), ITEMS_PER_REQUEST):
            batch = asked[start : start + ITEMS_PER_REQUEST]
            try:
                result = self.engine.complete(self.call(batch, own), cache=True)
            except LLMError:
                continue
            assert isinstance(result, FollowupOut)
            for verdict in result.items:
                if 1 <= verdict.item <= len(batch):
                    shown = {p.number for p in batch[verdict.item - 1].candidates}
                    out[start + verdict.item - 1] = set(verdict.addressed_by) & shown
        return out

    def call(self, batch: list[Asked], own: dict[int, PullRequest]) -> Call:
        prompt = load_prompt("followup", prompt_lang(self.lang))
        variables = {"repo": self.repo}
        shown = sum(len(a.candidates) for a in batch)
        each = max(evidence_budget(prompt, self.budget, **variables) // max(shown, 1), MIN_EACH)
        lines: list[str] = []
        for i, asked in enumerate(batch, 1):
            item = asked.item
            label = f"{item.label}: {risk_name(item.label, prompt.lang)}"
            lines += [
                f"\n== Item {i} ==",
                data_line(f"Risk ({label}) of the week of {item.week.since}: {one_line(item.title, 300)}"),
                data_line(f"Its evidence: {one_line(item.evidence, 400)}"),
                *(
                    data_line(f"Risk PR #{n}: {one_line(own[n].title, 200)}; files: {_files(own[n], 8)}")
                    for n in item.prs[:RISK_PRS_SHOWN]
                    if n in own
                ),
                *(
                    f"-- Candidate PR --\n{pr_evidence(p, each, None, {})}\n"
                    + data_line(f"Files of candidate #{p.number}: {_files(p, 30)}")
                    for p in asked.candidates
                ),
            ]
        subject = ",".join(f"{'+'.join(map(str, a.item.prs))}:{a.item.label}" for a in batch)
        return make_call(
            prompt,
            purpose="followup",
            subject=f"{self.repo} {subject}"[:300],
            version=f"followup-{prompt.version}",
            schema=FollowupOut,
            allowed=Allowed(),
            evidence="\n".join(lines),
            **variables,
        )


def _files(pr: PullRequest, n: int) -> str:
    paths = [f.path for f in pr.files or []]
    more = f" (+{len(paths) - n})" if len(paths) > n else ""
    return ", ".join(paths[:n]) + more
