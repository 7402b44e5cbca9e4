"""Hostile input benchmark: the worst PR we can build, a model answering what no schema takes, and a
server that drips its answer. Prints one `name=value` line per figure.

    python bench/hostile_bench.py [--timeout 3]

Figures (goals in parentheses):
  worst_pr_s                   the slowest of the PRs built within GitHub's limits (title 256
                               characters, body 65,536) through the rules engine and secret redaction
                               (title, body and diff): runs of digits, spaces, "a.", "password=",
                               "    x: ", a 4,000-character diff line, many short lines (<= 1)
  worst_pr                     which variant that was
  report_survives_hostile_llm  1 when a report of the demo week, whose model answers some PRs and the
                               narrative with JSON nested 100,000 deep, 200,000 characters long or of
                               the wrong types, finishes with the rules answering exactly those (1)
  llm_call_deadline_s          wall seconds of one call against a server that sends one byte a second,
                               with `--timeout` and no retries (<= timeout + 1)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.openai_api import (  # noqa: E402
    KEY,
    FakeOpenAI,
    Reply,
    Request,
    analysis_json,
    pr_number,
    prdigest_answers,
)

from prdigest.analysis.llm import Allowed, Call, LLMClient, LLMError, PRAnalysisOut  # noqa: E402
from prdigest.analysis.rules import analyse  # noqa: E402
from prdigest.config import LLMSettings, Taxonomy, load_settings  # noqa: E402
from prdigest.models import FileChange, PullRequest  # noqa: E402
from prdigest.pipeline.single import make_report  # noqa: E402
from prdigest.redact import redact  # noqa: E402
from prdigest.sources.fixture import FixtureSource, demo_fixture_path  # noqa: E402
from prdigest.storage import Store  # noqa: E402

TITLE, BODY, DIFF_LINE = 256, 65_536, 4_000  # GitHub's limits; a diff line as long as a hostile one
DEPTH = 100_000

# Runs that make a backtracking pattern, or a quadratic redaction, take long: each fills a body.
RUNS: dict[str, str] = {
    "digits": "1",
    "spaces": " ",
    "a-dots": "a.",
    "password": "password=",
    "indented-keys": "    x: ",
    "short-lines": "a\n",
    "hex": "deadbeef",
    "hashes": "#1 ",
    "backticks": "`a",
}
HOSTILE_ANSWERS = {
    "nested objects": '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "nested lists": '{"summary": "A change.", "related": ' + "[" * DEPTH + "]" * DEPTH + "}",
    "huge": analysis_json(1, explanation="x" * 200_000),
    "wrong types": json.dumps({"summary": {"a": [1]}, "importance": [], "insight": None, "tags": 5}),
}


def fill(run: str, size: int) -> str:
    return (run * (size // len(run) + 1))[:size]


def variants() -> dict[str, PullRequest]:
    """Each run as the title, and as the body, one long diff line (bare or under an "x: " key), or the
    body's lines under an "x: " key."""
    merged = datetime(2026, 9, 8, tzinfo=UTC)
    out = {}
    for name, run in RUNS.items():
        for where, body, diff in (
            ("body", fill(run, BODY), "+ok\n"),
            ("diff-line", "A change.", "+" + fill(run, DIFF_LINE) + "\n"),
            ("keyed-diff-line", "A change.", "+    x: " + fill(run, DIFF_LINE) + "\n"),
            ("keyed-lines", "\n".join(f"    x: {fill(run, 1000)}" for _ in range(BODY // 1008)), "+ok\n"),
        ):
            out[f"{name}/{where}"] = PullRequest(
                repo="hostile/repo",
                number=1,
                title=fill(run, TITLE),
                body=body,
                author="mallory",
                merged_at=merged,
                files=[FileChange(path="src/app.py", additions=1)],
                diff_excerpt=f"diff --git a/src/app.py b/src/app.py\n@@ -1 +1 @@\n{diff}",
            )
    return out


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def worst_pr() -> tuple[float, str]:
    """The slowest variant through the rules engine and redaction, in seconds, and its name."""
    taxonomy = Taxonomy()

    def through(pr: PullRequest) -> None:
        analyse(pr, taxonomy, "en")
        for text in (pr.title, pr.body, pr.diff_excerpt or ""):
            redact(text)

    times = {name: timed(functools.partial(through, pr)) for name, pr in variants().items()}
    name = max(times, key=times.__getitem__)
    return times[name], name


def report_survives_hostile_llm() -> bool:
    """A demo week's report whose model answers some PRs, and the narrative, with hostile JSON."""
    demo = FixtureSource(demo_fixture_path())
    assert demo.window is not None
    numbers = sorted(pr.number for pr in demo.prs if pr.number is not None)
    hostile = {n: answer for n, answer in zip(numbers[::7], HOSTILE_ANSWERS.values(), strict=False)}

    def answers(request: Request) -> Reply | str:
        if "<untrusted_pr_data>" in request.user:
            return hostile.get(pr_number(request)) or prdigest_answers(request)
        return HOSTILE_ANSWERS["nested objects"]  # the narrative

    with FakeOpenAI(responder=answers) as fake, tempfile.TemporaryDirectory() as tmp:
        env = {
            "PRDIGEST_LLM_BASE_URL": fake.url,
            "PRDIGEST_LLM_MODEL": "fake-model",
            "PRDIGEST_LLM_API_KEY": KEY,
            # The fake bills a reply by its length: no report cap, so that the answers alone decide.
            "PRDIGEST_LLM__MAX_TOKENS_PER_REPORT": "1000000000",
        }
        settings = load_settings(env=env)
        store = Store(Path(tmp) / "cache.db")
        try:
            report = make_report(settings, store, demo, demo.window, save=False)
        finally:
            store.close()
    usage = report.llm_usage
    return (
        report.stats.engines == {"llm": len(numbers) - len(hostile), "rules": len(hostile)}
        and usage is not None
        and usage.narrative == "rules"
    )


def llm_call_deadline(timeout: float) -> float:
    """Seconds one call takes against a server that drips its answer a byte a second."""
    call = Call(
        "analyse_pr",
        "hostile/repo#1",
        "v",
        "en",
        ({"role": "user", "content": "hi"},),
        PRAnalysisOut,
        Allowed(),
    )
    with FakeOpenAI(responder=lambda _: Reply(content=analysis_json(1), drip=1.0)) as fake:
        llm = LLMSettings(base_url=fake.url, api_key=KEY, model="fake-model", timeout=timeout, max_retries=0)
        started = time.perf_counter()
        with contextlib.suppress(LLMError):  # the timeout: what is timed
            LLMClient(llm).complete(call, lambda _: None)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--timeout", type=float, default=3.0, help="the LLM timeout of the drip call")
    args = parser.parse_args()
    # The report first: the deadline call then times the request, not the SDK's first import.
    print(f"report_survives_hostile_llm={int(report_survives_hostile_llm())}", flush=True)
    print(f"llm_call_deadline_s={llm_call_deadline(args.timeout):.2f}", flush=True)
    seconds, name = worst_pr()
    print(f"worst_pr_s={seconds:.2f}", flush=True)
    print(f"worst_pr={name}", flush=True)


if __name__ == "__main__":
    main()
