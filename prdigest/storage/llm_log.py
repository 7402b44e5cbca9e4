"""What the LLM engine keeps: a row per request sent (cost and outcome), and validated outputs.

No prompt or answer text is logged: prompts carry PR text, which may hold secrets
the redactor missed. The output cache holds validated narratives and answers
by request hash, so that a rerun over unchanged data sends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, NamedTuple

from prdigest.clock import utc_now
from prdigest.metrics import count_llm_call
from prdigest.storage.db import Store


@dataclass(frozen=True)
class LLMCall:
    run_id: str  # one report run, question or bench run: what its usage sums over
    purpose: str  # analyse_pr, narrate, ask
    subject: str  # owner/name#N, or the repository and period
    model: str
    prompt_version: str
    prompt_hash: str  # of the messages sent: equal hashes mean the same request was paid twice
    rung: str  # json_schema, json_object or prompt
    input_tokens: int
    output_tokens: int
    latency_ms: int
    outcome: str  # ok, invalid, blank, rejected, timeout, rate_limited, unavailable, error


class CallTotals(NamedTuple):
    calls: int
    input_tokens: int
    output_tokens: int


def _totals(row: dict[str, Any]) -> CallTotals:
    # int(): PostgreSQL's sum of bigints is a numeric.
    return CallTotals(int(row["n"]), int(row["i"]), int(row["o"]))


def record_call(store: Store, call: LLMCall) -> None:
    """Log one request sent (every LLM call passes here), and count it in the metrics."""
    count_llm_call(call.purpose, call.outcome, call.input_tokens, call.output_tokens)
    row = {"created_at": utc_now().isoformat(), **asdict(call)}
    with store.writing() as tx:
        tx.insert("llm_calls", row)


def run_totals(store: Store, run_id: str) -> CallTotals:
    with store.reading() as tx:
        row = tx.one(
            "select count(*) as n, coalesce(sum(input_tokens), 0) as i, "
            "coalesce(sum(output_tokens), 0) as o from llm_calls where run_id = ?",
            [run_id],
        )
    return _totals(row) if row else CallTotals(0, 0, 0)


def purpose_totals(store: Store, run_id: str) -> dict[str, CallTotals]:
    """The run's requests, by purpose."""
    with store.reading() as tx:
        rows = tx.rows(
            "select purpose, count(*) as n, coalesce(sum(input_tokens), 0) as i, "
            "coalesce(sum(output_tokens), 0) as o from llm_calls where run_id = ? group by purpose",
            [run_id],
        )
    return {row["purpose"]: _totals(row) for row in rows}


def built_cost(store: Store, made: Iterable[tuple[str, str]], run_id: str) -> dict[str, CallTotals]:
    """What the answers run ``run_id`` reused from the cache cost when they were made, by purpose: for
    each (subject, prompt version), the requests of the last other run that asked it."""
    out: dict[str, CallTotals] = {}
    with store.reading() as tx:
        for subject, version in set(made):
            rows = tx.rows(
                "select purpose, count(*) as n, coalesce(sum(input_tokens), 0) as i, "
                "coalesce(sum(output_tokens), 0) as o from llm_calls "
                "where subject = ? and prompt_version = ? and run_id = (select run_id from llm_calls "
                "where subject = ? and prompt_version = ? and run_id != ? "
                "order by id desc limit 1) group by purpose",
                [subject, version, subject, version, run_id],
            )
            for row in rows:
                had, more = out.get(row["purpose"], CallTotals(0, 0, 0)), _totals(row)
                out[row["purpose"]] = CallTotals(*(a + b for a, b in zip(had, more, strict=True)))
    return out


def calls_of_run(store: Store, run_id: str) -> list[LLMCall]:
    """The run's calls in the order they were logged."""
    fields = ", ".join(LLMCall.__dataclass_fields__)
    with store.reading() as tx:
        rows = tx.rows(f"select {fields} from llm_calls where run_id = ? order by id", [run_id])
    return [LLMCall(**row) for row in rows]


def get_output(store: Store, key: str) -> str | None:
    with store.reading() as tx:
        row = tx.one("select data from llm_outputs where key = ?", [key])
    return row["data"] if row else None


def put_output(store: Store, key: str, purpose: str, model: str, prompt_version: str, data: str) -> None:
    row = {
        "key": key,
        "purpose": purpose,
        "model": model,
        "prompt_version": prompt_version,
        "data": data,
        "created_at": utc_now().isoformat(),
    }
    with store.writing() as tx:
        tx.upsert("llm_outputs", [row], pk=["key"])


def recent_failures(
    store: Store, subjects: list[str], model: str, prompt_version: str, since: datetime
) -> set[str]:
    """The subjects whose last analysis request since ``since`` (same model and prompt) ended in
    invalid output or a timeout."""
    if not subjects:
        return set()
    marks = ", ".join("?" * len(subjects))
    with store.reading() as tx:
        rows = tx.rows(
            "select subject, outcome from llm_calls where id in (select max(id) from llm_calls "
            f"where purpose = 'analyse_pr' and model = ? and prompt_version = ? and created_at >= ? "
            f"and subject in ({marks}) group by subject)",
            [model, prompt_version, since.isoformat(), *subjects],
        )
    return {row["subject"] for row in rows if row["outcome"] in ("invalid", "timeout")}


def known_rung(store: Store, endpoint: str, model: str) -> str | None:
    """The rung of the structured-output ladder this endpoint and model last accepted."""
    with store.reading() as tx:
        row = tx.one("select rung from llm_rungs where endpoint = ? and model = ?", [endpoint, model])
    return row["rung"] if row else None


def remember_rung(store: Store, endpoint: str, model: str, rung: str) -> None:
    row = {"endpoint": endpoint, "model": model, "rung": rung, "updated_at": utc_now().isoformat()}
    with store.writing() as tx:
        tx.upsert("llm_rungs", [row], pk=("endpoint", "model"))


def pr_summaries(store: Store, repo: str, numbers: Iterable[int]) -> dict[int, str]:
    """The summary of each PR's latest cached analysis (rules or LLM), by number."""
    wanted = sorted(set(numbers))
    if not wanted:
        return {}
    marks = ", ".join("?" * len(wanted))
    with store.reading() as tx:
        rows = tx.rows(
            f"select number, summary from prs where repo = ? and number in ({marks}) and summary is not null",
            [repo, *wanted],
        )
    return {row["number"]: row["summary"] for row in rows}
