"""The LLM engine: per-PR analyses and the week's narrative, with the rules engine as fallback.

Each PR the LLM fails on keeps its rules analysis, and each report section it fails on keeps
the rules' version; so does each one the endpoint's monthly token budget leaves out (``budget``),
and the report says so. The rules' findings for the judged labels are only hints in the PR's
prompt; ``merge`` says what of the LLM's analysis a report keeps.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Literal

from prdigest.analysis.llm.breaker import FAILED, Breaker, LLMStopped
from prdigest.analysis.llm.budget import LLMBudgetSpent, MonthlyBudget
from prdigest.analysis.llm.call import Attempt, Call, prompt_lang, request_hash
from prdigest.analysis.llm.client import (
    RUNGS,
    LLMClient,
    LLMContextFull,
    LLMError,
    LLMUnavailable,
)
from prdigest.analysis.llm.gate import Gate, GateRefused, analysis_texts, prompt_gate
from prdigest.analysis.llm.merge import flat_scores, with_rules, with_rules_scores
from prdigest.analysis.llm.narrative import apply_narrative, narrative_call
from prdigest.analysis.llm.patience import wait_until
from prdigest.analysis.llm.pr_call import pr_call
from prdigest.analysis.llm.schemas import (
    SOURCES,
    LLMOutput,
    NarrativeOut,
    PRAnalysisOut,
)
from prdigest.analysis.llm.shared import Claims
from prdigest.analysis.llm.spend import LLMReportCapped, ReportSpend
from prdigest.analysis.llm.workers import DiffLoader, Progress, counter, serialised
from prdigest.analysis.taxonomy import known_tags, taxonomy_hash
from prdigest.clock import utc_now
from prdigest.config import LLMSettings, Taxonomy
from prdigest.i18n import texts
from prdigest.models import LLMUsage, PRAnalysis, PullRequest, Report, numbered
from prdigest.prompts import load_prompt
from prdigest.storage import Store, llm_budget, llm_log
from prdigest.storage.db import analysis_key

log = logging.getLogger("prdigest.llm")
MIN_INPUT_BUDGET = 1000  # input tokens: below this a PR's evidence says too little to analyse
RETRY_FAILED_AFTER = timedelta(hours=1)  # a PR's invalid or timed-out analysis is not asked again sooner


class LLMEngine:
    """One run's use of the LLM (a report, a question): its calls are logged under one run id."""

    def __init__(self, settings: LLMSettings, store: Store, client: LLMClient | None = None):
        self.settings = settings
        self.store = store
        self.client = client or LLMClient(settings, store)
        # Where earlier runs found this endpoint's rung: a fresh client starts there.
        self._endpoint = settings.base_url or "https://api.openai.com/v1"
        self._stored_rung = llm_log.known_rung(store, self._endpoint, settings.model)
        if client is None and self._stored_rung in RUNGS:
            self.client.start = RUNGS.index(self._stored_rung)
        self.run_id = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._halted = ""  # why no more requests are sent in this run
        self._budget = MonthlyBudget(store, self._endpoint, settings.monthly_token_budget)
        self._run_noted = False  # the run's endpoint is in llm_runs
        self._narrative: Literal["llm", "rules"] | None = None
        self.spend = ReportSpend(settings, store, self.run_id)
        self._outcomes: dict[str, str] = {}  # each subject's last request outcome: why it failed
        self._failed: Counter[str] = Counter()  # PRs the LLM did not analyse, by why
        self._breaker = Breaker()  # stops the run's requests to a model that keeps failing
        self._input_budget = settings.input_budget_tokens  # halved when a prompt overflows the context
        self._wait_until = wait_until()  # how long a 429 may be waited out (patience.py)

    # --- calls ----------------------------------------------------------------------------

    def complete(self, call: Call, *, cache: bool = False) -> LLMOutput:
        """The validated answer; with ``cache``, an equal request made before costs nothing."""
        key = request_hash([{"model": self.settings.model, "version": call.version}, *call.messages])
        if cache and (data := llm_log.get_output(self.store, key)) is not None:
            try:
                parsed = call.parse(data)
            except ValueError:
                pass  # kept by an older release whose validation let it through: ask again
            else:
                self.spend.reused(call.subject, call.version)
                return parsed
        if self._halted:
            raise LLMUnavailable(self._halted, fatal=True)
        self._breaker.check()
        self.spend.check()
        self._budget.check()
        self._note_run()
        try:
            result = self.client.complete(call, lambda attempt: self._record(call, attempt), self._wait_until)
        except LLMUnavailable as exc:
            if exc.fatal:
                self._halted = str(exc)
            raise
        finally:  # a rung the server refused is remembered even when the next one timed out
            self._remember_rung()
        if cache:
            llm_log.put_output(
                self.store, key, call.purpose, self.settings.model, call.version, result.model_dump_json()
            )
        return result

    def _note_run(self) -> None:
        """Note the run's endpoint before its first request: the month's usage is summed per endpoint."""
        with self._lock:
            noted, self._run_noted = self._run_noted, True
        if not noted:
            llm_budget.record_run(self.store, self.run_id, self._endpoint, self.settings.model)

    def _remember_rung(self) -> None:
        rung = self.client.rung
        with self._lock:
            if rung == self._stored_rung:
                return
            self._stored_rung = rung
        llm_log.remember_rung(self.store, self._endpoint, self.settings.model, rung)

    def _record(self, call: Call, attempt: Attempt) -> None:
        self._budget.add(attempt.input_tokens + attempt.output_tokens)
        self.spend.sent(attempt.input_tokens + attempt.output_tokens)
        with self._lock:
            self._outcomes[call.subject] = attempt.outcome
        if attempt.outcome != "ok":  # why, where a user looks: one line per failed request
            log.info("%s %s: %s on the %s rung", call.purpose, call.subject, attempt.outcome, attempt.rung)
        llm_log.record_call(
            self.store,
            llm_log.LLMCall(
                run_id=self.run_id,
                purpose="repair" if attempt.repair else call.purpose,
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
        # Last: it raises once the model has failed the run, and then not even the repair is sent.
        self._breaker.note(attempt.outcome)

    def usage(self) -> LLMUsage:
        """What the report's answers cost: this run's requests, and those that made the reused ones."""
        by, run_calls = self.spend.by_purpose()
        return LLMUsage(
            model=self.settings.model,
            calls=sum(c.calls for c in by.values()),
            input_tokens=sum(c.input_tokens for c in by.values()),
            output_tokens=sum(c.output_tokens for c in by.values()),
            by_purpose=by,
            run_calls=run_calls,
            not_analysed=dict(sorted(self._failed.items())),
            analysed=self._counts["llm"],
            cached=self._counts["cached"],
            fallback=self._counts["fallback"],
            narrative=self._narrative,
        )

    def _count(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1

    def _why(self, reason: str) -> None:
        with self._lock:
            self._failed[reason] += 1

    # --- per-PR analyses ------------------------------------------------------------------

    @staticmethod
    def analysis_version(taxonomy: Taxonomy, lang: str, instructions: str = "") -> str:
        """The prompt's version, the taxonomy's hash and the repository's notes' hash (when it has
        notes): a change to any means a new analysis."""
        version = (
            f"analyse_pr-{load_prompt('analyse_pr', prompt_lang(lang)).version}+{taxonomy_hash(taxonomy)}"
        )
        return f"{version}+n{_short_hash(instructions)}" if instructions.strip() else version

    def analyse(
        self,
        prs: Iterable[PullRequest],
        rules: dict[int, PRAnalysis],
        taxonomy: Taxonomy,
        lang: str,
        diff_loader: DiffLoader | None = None,
        on_done: Progress | None = None,
        *,
        instructions: str = "",
        written_in: str | None = None,
    ) -> dict[int, PRAnalysis]:
        """Each PR's LLM analysis, from the cache or one call per PR in parallel; ``rules[n]`` where it fails.

        ``rules`` holds the rules engine's analysis of every PR (its fallback, and the source of
        its factual risk labels). ``diff_loader`` supplies the diff of a PR that carries none; it is
        called from the worker threads, one call at a time. ``prs`` is the window: the PRs an
        analysis's prose may name. ``on_done(done, total)`` is called as each PR sent to the LLM is
        finished (answered or fallen back), one call at a time, ``done`` counting up to ``total``.
        ``instructions``: the repository's ``extra_instructions``, data in each prompt (part of the key).
        ``written_in``: the language every analysis is asked in (default ``lang``), whatever the report's:
        a PR is analysed once, and a report in another language reads the summary the same answer
        translated (``merge.told_in``).
        """
        report_lang, lang = lang, written_in or lang
        version = self.analysis_version(taxonomy, lang, instructions)
        prs_n = numbered(prs)
        raw: dict[int, PRAnalysis] = {}  # the LLM's own analyses, as cached
        how: dict[int, str] = {}  # cached, llm or fallback: for the usage counts
        todo: list[tuple[int, PullRequest]] = []
        repo = prs_n[0][1].repo if prs_n else ""  # one repository's PRs: ``rules`` is keyed by number
        prompt = load_prompt("analyse_pr", prompt_lang(lang))
        gate = prompt_gate(prompt, repo=repo, tags=known_tags(taxonomy), sources=SOURCES)
        keys: dict[int, str] = {}
        for n, pr in prs_n:
            key = keys[n] = analysis_key(
                pr.repo, n, pr.content_hash(), "llm", self.settings.model, version, lang
            )
            cached = self._cached(key, gate)
            if cached is not None:
                raw[n], how[n] = cached, "cached"
                self.spend.reused(pr.uid, version)
            else:
                todo.append((n, pr))
        # A PR whose output stayed invalid, or that timed out, within the hour falls back at once:
        # chat commands rebuild reports, and must neither wait for it nor pay for it again.
        failed = llm_log.recent_failures(
            self.store,
            [pr.uid for _, pr in todo],
            self.settings.model,
            version,
            utc_now() - RETRY_FAILED_AFTER,
        )
        todo = [(n, pr) for n, pr in todo if pr.uid not in failed]
        prs_by = dict(todo)
        self.spend.for_prs(len(prs_n))
        diff = serialised(diff_loader)
        tick = counter(len(todo), on_done)

        def one(item: tuple[int, PullRequest]) -> PRAnalysis | None:
            analysis = self._analyse_one(item[1], rules[item[0]], taxonomy, lang, version, diff, instructions)
            tick()
            return analysis

        claims = Claims(self.store, self.run_id, keys)  # one analysis per PR, whatever runs at once
        mine, theirs = claims.split(todo)
        with ThreadPoolExecutor(self.settings.workers, thread_name_prefix="prdigest-llm") as pool:
            with claims.holding(mine):
                asked = list(zip(mine, pool.map(one, mine), strict=True))
            found, left = claims.awaited(theirs, lambda key: self._cached(key, gate))
            for n, analysis in found.items():
                raw[n], how[n] = analysis, "cached"
                self.spend.reused(prs_by[n].uid, version)
                tick()
            asked += zip(left, pool.map(one, left), strict=True)
        for (n, _), answer in asked:
            if answer is not None:
                raw[n], how[n] = answer, "llm"
        window = {n for n, _ in prs_n}
        out = {n: with_rules(a, rules[n], window, report_lang) for n, a in raw.items()}
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
        instructions: str,
    ) -> PRAnalysis | None:
        """The LLM's own analysis of ``pr`` (cached), or None where it failed."""
        excerpt = pr.diff_excerpt if pr.diff_excerpt is not None else diff(pr)
        try:
            result = self._fitted(
                lambda budget: pr_call(
                    self.store, pr, rules, taxonomy, lang, version, excerpt, instructions, budget
                )
            )
        except LLMBudgetSpent:
            self._count("over_budget")
            return None
        except LLMReportCapped:
            self._why("capped")
            return None
        except LLMStopped:  # a PR whose own request failed is counted by why; the others as stopped
            with self._lock:
                last = self._outcomes.get(pr.uid)
            self._why(last if last in FAILED else "stopped")
            return None
        except LLMError as exc:
            with self._lock:  # a request refused unsent (no turn under the rate limit) was never recorded
                last = self._outcomes.get(pr.uid, getattr(exc, "outcome", "error"))
            self._why("refused rung" if last == "rejected" else last)
            return None
        assert isinstance(result, PRAnalysisOut)
        analysis = result.to_analysis(pr, self.settings.model, version, lang)
        self.store.put_analysis(pr, analysis, lang)
        return analysis

    def _fitted(self, build: Callable[[int], Call], *, cache: bool = False) -> LLMOutput:
        """The answer to the request ``build`` makes within the run's input budget. A server whose context
        the prompt did not fit (``context``) is asked once more with half the evidence, and so is every
        later request of the run: the evidence shrinks, the way of asking stays."""
        budget = self._input_budget
        try:
            return self.complete(build(budget), cache=cache)
        except LLMContextFull:
            with self._lock:
                self._input_budget = max(MIN_INPUT_BUDGET, min(self._input_budget, budget // 2))
                budget = self._input_budget
            return self.complete(build(budget), cache=cache)

    def _cached(self, key: str, gate: Gate) -> PRAnalysis | None:
        """The cached analysis, its texts through the gate; None when there is none, or the gate refuses
        it (kept by a release without the gate): it is asked again."""
        cached = self.store.get_analysis(key)
        try:
            return cached.model_copy(update=analysis_texts(gate, cached)) if cached else None
        except GateRefused:
            return None

    # --- the week's narrative -------------------------------------------------------------

    def narrate(self, report: Report, analyses: dict[int, PRAnalysis], *, instructions: str = "") -> Report:
        """The report with the LLM's summary, themes, risk observations and recommendations.

        Figures are left as computed. Citations outside the window are dropped; a section the
        LLM leaves empty, or a narrative still invalid after its repair, keeps the rules' version.
        ``instructions``: the repository's ``extra_instructions``, data in the prompt.
        """
        if not report.prs:
            return report
        try:
            result = self._fitted(
                lambda budget: narrative_call(report, analyses, budget, instructions), cache=True
            )
        except LLMError:
            self._narrative = "rules"
        else:
            assert isinstance(result, NarrativeOut)
            self._narrative = "llm"
            report = apply_narrative(report, result)
        lang, model = report.lang, self.settings.model
        over = self._counts["over_budget"]
        notes = [self._budget.note(lang, over), self.gate_note(lang), self._breaker.note_text(model, lang)]
        return report.model_copy(update={"warnings": [*report.warnings, *(n for n in notes if n)]})

    def gate_note(self, lang: str) -> str | None:
        """What a report says when the quality gate (gate.py) refused analyses, else None."""
        n = self._failed["gate"]
        return texts(lang)["llm_gate_refused"].format(model=self.settings.model, n=n) if n else None


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]
