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
  weak_model_report_s       wall seconds of `prdigest report` of the 7-PR miles week (2026-08-19..20)
                            with a weak model: llama-cpp-python's server with SmolLM2-135M when the
                            realllm extra is installed, else the fake in weak mode (json_schema refused
                            with a 500, junk answers, tools ignored) (<= 60)
  weak_model_findings_kept  the rules' strong findings that report keeps / those the rules alone find (1.0)

The week is the demo fixture's 30 PRs and generated ones, renumbered, in the same days.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.openai_api import KEY, FakeOpenAI, prdigest_answers, weak_answers  # noqa: E402
from fakes.weak_week import (  # noqa: E402
    BUNDLE,
    MODEL,
    clone,
    findings_kept,
    llama_server,
    llm_env,
    missing,
    week_report,
)

from prdigest.analysis.llm import LLMEngine  # noqa: E402
from prdigest.analysis.report import build_report  # noqa: E402
from prdigest.config import (  # noqa: E402
    LLMSettings,
    ReportSettings,
    Taxonomy,
)
from prdigest.config.models import HOSTED_WORKERS  # noqa: E402
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


@contextmanager
def weak_server(fake: bool) -> Iterator[dict[str, str]]:
    """The LLM settings of a weak model: the real server where the realllm extra is installed."""
    why = "--weak-fake" if fake else missing()
    if not why:
        print("weak model: llama-cpp-python's server with SmolLM2-135M", file=sys.stderr)
        with llama_server() as url:
            yield llm_env(url, MODEL)
        return
    print(f"weak model: the fake in weak mode ({why})", file=sys.stderr)
    with FakeOpenAI("weak", responder=weak_answers) as fake:
        yield llm_env(fake.url, "fake-model", KEY)


def weak_model(fake: bool) -> None:
    if not BUNDLE.exists():
        print(f"weak_model_*: {BUNDLE} is not here", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory(prefix="prdigest-weak-bench-") as tmp:
        git = clone(Path(tmp) / "miles")
        _, rules, _ = week_report(git, Path(tmp) / "rules.db")
        with weak_server(fake) as env:
            seconds, llm, _ = week_report(git, Path(tmp) / "llm.db", env)
    print(f"weak_model_report_s={seconds:.1f}", flush=True)
    print(f"weak_model_findings_kept={findings_kept(rules, llm):.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake takes per call")
    parser.add_argument("--prs", type=int, default=40)
    parser.add_argument(
        "--weak-fake", action="store_true", help="the weak model from the fake, not the real server"
    )
    args = parser.parse_args()
    repo, window, prs = week(args.prs)
    with (
        tempfile.TemporaryDirectory(prefix="prdigest-llm-bench-") as tmp,
        FakeOpenAI(responder=prdigest_answers, latency=args.latency) as fake,
    ):
        store = Store(Path(tmp) / "bench.db")
        store.upsert_prs(prs)
        # A hosted endpoint's concurrency and whole answers: the fake listens on 127.0.0.1, where the
        # defaults are 2 requests in flight, streamed.
        llm = LLMSettings(
            base_url=fake.url, api_key=fake.key, model="fake-model", concurrency=HOSTED_WORKERS, stream=False
        )
        seconds, first = report_run(store, llm, repo, window)
        print(f"llm_wall_s_{args.prs}={seconds:.3f}", flush=True)
        print(f"llm_calls_first={first.usage().run_calls}", flush=True)
        _, rerun = report_run(store, llm, repo, window)
        print(f"llm_calls_rerun={rerun.usage().run_calls}", flush=True)
        tokens = [
            c.input_tokens for c in llm_log.calls_of_run(store, first.run_id) if c.purpose == "analyse_pr"
        ]
        print(f"input_tokens_mean={statistics.mean(tokens):.0f}", flush=True)
        print(f"input_tokens_max={max(tokens)}", flush=True)
        print(f"input_token_budget={llm.input_budget_tokens}", flush=True)
        store.close()
    weak_model(args.weak_fake)


if __name__ == "__main__":
    main()
