"""LLM engine benchmark against the local fake server: prints one `name=value` line per figure.

    python bench/llm_bench.py [--latency 1.0] [--prs 40]

Figures (goals in parentheses):
  llm_wall_s_40       wall time of the LLM part of a 40-PR week, at the default concurrency (8) and
                      `--latency` seconds per call: the per-PR analyses and the narrative (<= 8)
  llm_calls_first     requests sent by that first run (one per PR, one for the narrative)
  llm_calls_rerun     requests sent when the same report is made again (0)
  input_tokens_mean   mean input tokens of the per-PR requests, as the server billed them
  input_tokens_max    the largest of them; one generated PR is huge (<= input_token_budget)
  input_token_budget  the per-PR input budget (the default)

The week is the demo fixture's 30 PRs and generated ones, renumbered, in the same days.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.openai_api import FakeOpenAI, prdigest_answers  # noqa: E402

from prdigest.analysis.llm import LLMEngine  # noqa: E402
from prdigest.analysis.report import build_report  # noqa: E402
from prdigest.config import (  # noqa: E402
    LLMSettings,
    ReportSettings,
    Taxonomy,
)
from prdigest.models import PullRequest, Window  # noqa: E402
from prdigest.pipeline.single import analyse_prs  # noqa: E402
from prdigest.sources.fixture import FixtureSource, demo_fixture_path  # noqa: E402
from prdigest.storage import Store, llm_log  # noqa: E402


def week(count: int) -> tuple[str, Window, list[PullRequest]]:
    """The demo week's PRs repeated to ``count`` under new numbers; the last one huge."""
    demo = FixtureSource(demo_fixture_path())
    assert demo.window is not None
    base = [p for p in demo.prs if p.number is not None]
    prs = []
    for i in range(count):
        pr = base[i % len(base)]
        prs.append(pr if i < len(base) else pr.model_copy(update={"number": 90_000 + i}))
    prs[-1] = prs[-1].model_copy(
        update={
            "body": "\n".join(
                f"Step {i}: the loader now streams shard {i} before the next." for i in range(20_000)
            ),
            "diff_excerpt": "\n".join(f"+    shard_{i} = load({i})" for i in range(50_000)),
        }
    )
    return demo.repo, demo.window, prs


def report_run(store: Store, llm: LLMSettings, repo: str, window: Window) -> tuple[float, LLMEngine]:
    """The LLM part of making the report: analyses, then the narrative; the rules are cached before."""
    prs = store.prs_in_window(repo, window)
    rules = analyse_prs(store, prs, Taxonomy(), "en")
    engine = LLMEngine(llm, store)
    started = time.perf_counter()
    analyses = engine.analyse(prs, rules, Taxonomy(), "en")
    report = build_report(
        repo,
        window,
        prs,
        source="bench",
        unavailable=(),
        settings=ReportSettings(),
        analyses=analyses,
        lang="en",
    )
    engine.narrate(report, analyses)
    return time.perf_counter() - started, engine


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake takes per call")
    parser.add_argument("--prs", type=int, default=40)
    args = parser.parse_args()
    repo, window, prs = week(args.prs)
    with (
        tempfile.TemporaryDirectory(prefix="prdigest-llm-bench-") as tmp,
        FakeOpenAI(responder=prdigest_answers, latency=args.latency) as fake,
    ):
        store = Store(Path(tmp) / "bench.db")
        store.upsert_prs(prs)
        llm = LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model")
        seconds, first = report_run(store, llm, repo, window)
        print(f"llm_wall_s_{args.prs}={seconds:.3f}", flush=True)
        print(f"llm_calls_first={first.usage().calls}", flush=True)
        _, rerun = report_run(store, llm, repo, window)
        print(f"llm_calls_rerun={rerun.usage().calls}", flush=True)
        tokens = [
            c.input_tokens for c in llm_log.calls_of_run(store, first.run_id) if c.purpose == "analyse_pr"
        ]
        print(f"input_tokens_mean={statistics.mean(tokens):.0f}", flush=True)
        print(f"input_tokens_max={max(tokens)}", flush=True)
        print(f"input_token_budget={llm.input_budget_tokens}", flush=True)
        store.close()


if __name__ == "__main__":
    main()
