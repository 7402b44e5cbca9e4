"""The LLM engine: per-PR analyses and the week's narrative, with the rules engine as fallback.

Each PR the LLM fails on keeps its rules analysis, and each report section it fails on keeps
the rules' version. With an LLM answer, the judgement labels (``JUDGED_LABELS``) and the
scores are the model's; the rules' findings for those labels are only hints in its prompt,
and the rules keep the labels of facts the model cannot check (``FACT_LABELS``). A week whose
scores are all equal (or all 10) keeps the rules' scores.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Literal

from prdigest.analysis.llm.client import (
    RUNGS,
    Attempt,
    Call,
    LLMClient,
    LLMError,
    LLMUnavailable,
    make_call,
    prompt_lang,
    request_hash,
)
from prdigest.analysis.llm.evidence import evidence_budget, fit, pr_sections, shown_of
from prdigest.analysis.llm.narrative import apply_narrative, narrative_call
from prdigest.analysis.llm.safety import data_line, one_line, scrub_prs
from prdigest.analysis.llm.schemas import (
    FACT_LABELS,
    JUDGED_LABELS,
    SOURCES,
    Allowed,
    LLMOutput,
    NarrativeOut,
    PRAnalysisOut,
)
from prdigest.analysis.taxonomy import known_tags, taxonomy_hash
from prdigest.config import LLMSettings, Taxonomy
from prdigest.errors import PrdigestError
from prdigest.models import LLMUsage, PRAnalysis, PullRequest, Report, numbered
from prdigest.prompts import load_prompt
from prdigest.storage import Store, llm_log
from prdigest.storage.db import analysis_key

# Scores that do not rank PRs: all equal over this many LLM analyses, or all 10 over two.
FLAT_SCORES_MIN = 3
RETRY_FAILED_AFTER = timedelta(hours=1)  # a PR's invalid or timed-out analysis is not asked again sooner


DiffLoader = Callable[[PullRequest], str | None]


class LLMEngine:
    """One run's use of the LLM (a report, a question): its calls are logged under one run id."""

    def __init__(self, settings: LLMSettings, store: Store, client: LLMClient | None = None):
        self.settings = settings
        self.store = store
        self.client = client or LLMClient(settings)
        # Where earlier runs found this endpoint's rung: a fresh client starts there.
        self._endpoint = settings.base_url or "https://api.openai.com/v1"
        self._stored_rung = llm_log.known_rung(store, self._endpoint, settings.model)
        if client is None and self._stored_rung in RUNGS:
            self.client.start = RUNGS.index(self._stored_rung)
        self.run_id = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._halted = ""  # why no more requests are sent in this run
        self._narrative: Literal["llm", "rules"] | None = None

    # --- calls ----------------------------------------------------------------------------

    def complete(self, call: Call, *, cache: bool = False) -> LLMOutput:
        """The validated answer; with ``cache``, an equal request made before costs nothing."""
        key = request_hash([{"model": self.settings.model, "version": call.version}, *call.messages])
        if cache and (data := llm_log.get_output(self.store, key)) is not None:
            try:
                return call.parse(data)
            except ValueError:
                pass  # kept by an older release whose validation let it through: ask again
        if self._halted:
            raise LLMUnavailable(self._halted, fatal=True)
        try:
            result = self.client.complete(call, lambda attempt: self._record(call, attempt))
        except LLMUnavailable as exc:
            if exc.fatal:
                self._halted = str(exc)
            raise
        self._remember_rung()
        if cache:
            llm_log.put_output(
                self.store, key, call.purpose, self.settings.model, call.version, result.model_dump_json()
            )
        return result

    def _remember_rung(self) -> None:
        rung = self.client.rung
        with self._lock:
            if rung == self._stored_rung:
                return
            self._stored_rung = rung
        llm_log.remember_rung(self.store, self._endpoint, self.settings.model, rung)

    def _record(self, call: Call, attempt: Attempt) -> None:
        llm_log.record_call(
            self.store,
            llm_log.LLMCall(
                run_id=self.run_id,
                purpose=call.purpose,
                subject=call.subject,
                model=self.settings.model,
                prompt_version=call.version,
                prompt_hash=attempt.prompt_hash,
                rung=attempt.rung,
                input_tokens=attempt.input_tokens,
                output_tokens=attempt.output_tokens,
                latency_ms=attempt.latency_ms,
                outcome=attempt.outcome,
            ),
        )

    def usage(self) -> LLMUsage:
        totals = llm_log.run_totals(self.store, self.run_id)
        return LLMUsage(
            model=self.settings.model,
            calls=totals.calls,
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            analysed=self._counts["llm"],
            cached=self._counts["cached"],
            fallback=self._counts["fallback"],
            narrative=self._narrative,
        )

    def _count(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1

    # --- per-PR analyses ------------------------------------------------------------------

    @staticmethod
    def analysis_version(taxonomy: Taxonomy, lang: str) -> str:
        """The prompt's version and the taxonomy's hash: a change to either means a new analysis."""
        return f"analyse_pr-{load_prompt('analyse_pr', prompt_lang(lang)).version}+{taxonomy_hash(taxonomy)}"

    def analyse(
        self,
        prs: Iterable[PullRequest],
        rules: dict[int, PRAnalysis],
        taxonomy: Taxonomy,
        lang: str,
        diff_loader: DiffLoader | None = None,
    ) -> dict[int, PRAnalysis]:
        """Each PR's LLM analysis, from the cache or one call per PR in parallel; ``rules[n]`` where it fails.

        ``rules`` holds the rules engine's analysis of every PR (its fallback, and the source of
        its factual risk labels). ``diff_loader`` supplies the diff of a PR that carries none; it is
        called from the worker threads, one call at a time. ``prs`` is the window: the PRs an
        analysis's prose may name.
        """
        version = self.analysis_version(taxonomy, lang)
        prs_n = numbered(prs)
        raw: dict[int, PRAnalysis] = {}  # the LLM's own analyses, as cached
        how: dict[int, str] = {}  # cached, llm or fallback: for the usage counts
        todo: list[tuple[int, PullRequest]] = []
        for n, pr in prs_n:
            key = analysis_key(pr.repo, n, pr.content_hash(), "llm", self.settings.model, version, lang)
            cached = self.store.get_analysis(key)
            if cached is not None:
                raw[n], how[n] = cached, "cached"
            else:
                todo.append((n, pr))
        # A PR whose output stayed invalid, or that timed out, within the hour falls back at once:
        # chat commands rebuild reports, and must neither wait for it nor pay for it again.
        failed = llm_log.recent_failures(
            self.store,
            [pr.uid for _, pr in todo],
            self.settings.model,
            version,
            datetime.now(UTC) - RETRY_FAILED_AFTER,
        )
        todo = [(n, pr) for n, pr in todo if pr.uid not in failed]
        diff = _serialised(diff_loader)
        with ThreadPoolExecutor(self.settings.concurrency, thread_name_prefix="prdigest-llm") as pool:
            done = pool.map(
                lambda item: self._analyse_one(item[1], rules[item[0]], taxonomy, lang, version, diff), todo
            )
            for (n, _), analysis in zip(todo, done, strict=True):
                if analysis is not None:
                    raw[n], how[n] = analysis, "llm"
        window = {n for n, _ in prs_n}
        out = {n: with_rules(a, rules[n], window) for n, a in raw.items()}
        if flat_scores(list(out.values())):
            # Scores that rank nothing are invalid output: the rules' scores stand for every PR.
            out = {n: with_rules_scores(a, rules[n]) for n, a in out.items()}
            how = dict.fromkeys(how, "fallback")
        for n, _ in prs_n:
            self._count(how.get(n, "fallback"))
        return {n: out.get(n, rules[n]) for n, _ in prs_n}

    def _analyse_one(
        self,
        pr: PullRequest,
        rules: PRAnalysis,
        taxonomy: Taxonomy,
        lang: str,
        version: str,
        diff: DiffLoader,
    ) -> PRAnalysis | None:
        """The LLM's own analysis of ``pr`` (cached), or None where it failed."""
        try:
            call = self._pr_call(pr, rules, taxonomy, lang, version, diff)
            result = self.complete(call)
        except LLMError:
            return None
        assert isinstance(result, PRAnalysisOut)
        analysis = result.to_analysis(pr, self.settings.model, version)
        self.store.put_analysis(pr, analysis, lang)
        return analysis

    def _pr_call(
        self,
        pr: PullRequest,
        rules: PRAnalysis,
        taxonomy: Taxonomy,
        lang: str,
        version: str,
        diff: DiffLoader,
    ) -> Call:
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
        related = {n: self._title(pr.repo, n) for n in pr.related}
        budget = evidence_budget(prompt, self.settings.input_budget_tokens, **variables)
        header, sections = pr_sections(
            pr, budget, pr.diff_excerpt if pr.diff_excerpt is not None else diff(pr), related
        )
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
            **variables,
        )

    def _title(self, repo: str, number: int) -> str:
        cached = self.store.get_pr(repo, number)
        return one_line(cached.title, 200) if cached else ""

    # --- the week's narrative -------------------------------------------------------------

    def narrate(self, report: Report, analyses: dict[int, PRAnalysis]) -> Report:
        """The report with the LLM's summary, themes, risk observations and recommendations.

        Figures are left as computed. Citations outside the window are dropped; a section the
        LLM leaves empty, or a narrative still invalid after its repair, keeps the rules' version.
        """
        if not report.prs:
            return report
        try:
            result = self.complete(self._narrative_call(report, analyses), cache=True)
        except LLMError:
            self._narrative = "rules"
            return report
        assert isinstance(result, NarrativeOut)
        self._narrative = "llm"
        return apply_narrative(report, result)

    def _narrative_call(self, report: Report, analyses: dict[int, PRAnalysis]) -> Call:
        return narrative_call(report, analyses, self.settings.input_budget_tokens)


def with_rules(analysis: PRAnalysis, rules: PRAnalysis, window: Iterable[int]) -> PRAnalysis:
    """The LLM's analysis as a report uses it: its judged labels, the rules' fact labels, the rules'
    tags where it named none, and no PR number in its prose outside the PR, its related PRs and ``window``.

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
    facts = [r for r in rules.risks if r.label in FACT_LABELS]
    return analysis.model_copy(
        update={
            "summary": scrub_prs(analysis.summary, keep),
            "explanation": scrub_prs(analysis.explanation, keep),
            "watch": [t for t in (scrub_prs(w, keep) for w in analysis.watch) if t],
            "unresolved": [t for t in (scrub_prs(u, keep) for u in analysis.unresolved) if t],
            "risks": [
                r.model_copy(update={"evidence": scrub_prs(r.evidence, keep)}) for r in [*judged, *facts]
            ],
            "tags": analysis.tags or rules.tags,
        }
    )


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


def _serialised(loader: DiffLoader | None) -> DiffLoader:
    """``loader`` called one at a time (a source client need not be thread-safe); its errors mean no diff."""
    lock = threading.Lock()

    def load(pr: PullRequest) -> str | None:
        if loader is None:
            return None
        with lock:
            try:
                return loader(pr)
            except PrdigestError:
                return None

    return load
