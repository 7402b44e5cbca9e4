"""Chat benchmark: latency of replies through the handlers. Prints `name=value` lines.

    python bench/chat_bench.py [--shared ../shared] [--calls 200] [--size 2000] [--rounds 20] [--no-memo]

The replayed miles week (93 merged PRs) is read into a fresh cache and analysed once; then `risks`,
`top` and `explain #N` are each answered `--calls` times, one at a time. Figures: `cached_reply_p50_ms`,
`cached_reply_p99_ms` over all those calls (goal: p99 < 300), and the same per command
(`risks_p99_ms`, `top_p99_ms`, `explain_p99_ms`).

Then a week of `--size` PRs (bench/report_bench.py's `generated`: the miles week's commits repeated)
is read into another fresh cache, and:
  first_reply_ms_2000        `risks` on it, the first time: analyses and the report built
  rebuild_ms_2000            `risks` the second time: the report built from a warm cache
  cached_reply_p50_ms_2000, cached_reply_p99_ms_2000
                             `--rounds` rounds of 20 concurrent requests (risks, top, explain mixed)
                             through prdigest.handlers.handle on threads (goal: p99 <= 100)
`--no-memo` turns the report memo off: every command builds its own report, as before the memo.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))

import report_bench  # noqa: E402

from prdigest.config import load_settings  # noqa: E402
from prdigest.handlers import Context, Services, handle  # noqa: E402
from prdigest.handlers.report_memo import memo_for  # noqa: E402
from prdigest.models import Window  # noqa: E402
from prdigest.pipeline.single import read_window  # noqa: E402
from prdigest.sources.git.source import GitSource  # noqa: E402
from prdigest.storage import Store  # noqa: E402

WEEK = Window(since="2026-08-10", until="2026-08-16", tz="Asia/Shanghai")
MONDAY_AFTER = datetime(2026, 8, 17, 2, 0, tzinfo=UTC)  # Monday after the week, Shanghai morning
CONCURRENT = 20
CTX = Context(platform="console", chat_id="bench", user_id="bench")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def chat_on(repo: Path, db: Path, memo: bool) -> tuple[Services, dict[str, str]]:
    """A fresh cache holding the week read from ``repo``, the chat's services, and its three commands."""
    store = Store(db)
    read_window(store, GitSource(repo, repo="radixark/miles"), WEEK)  # records its coverage
    if not memo:  # every command builds its own report: no memo, no shared builds
        off = memo_for(store)
        off.size = 0
        off.report = lambda store, settings, key, build, keep=None: build()  # type: ignore[method-assign]
    prs = store.prs_in_window("radixark/miles", WEEK)
    svc = Services(
        settings=load_settings(env={}), store=store, default_repo="radixark/miles", clock=lambda: MONDAY_AFTER
    )
    number = max(prs, key=lambda p: p.additions + p.deletions).number
    return svc, {"risks": "risks", "top": "top 10", "explain": f"explain #{number}"}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def sequential(svc: Services, commands: dict[str, str], calls: int) -> dict[str, list[float]]:
    for text in commands.values():  # warm the analyses cache: replies below are cached ones
        assert handle(text, CTX, svc).kind in ("risks", "prs", "explain")
    return {
        name: [timed(lambda t=text: handle(t, CTX, svc)) for _ in range(calls)]
        for name, text in commands.items()
    }


def concurrent(svc: Services, commands: dict[str, str], rounds: int) -> list[float]:
    """``rounds`` bursts of CONCURRENT requests released at once; each request's own latency."""
    texts = list(commands.values())
    gate = threading.Barrier(CONCURRENT)

    def one(i: int) -> float:
        gate.wait(timeout=120)
        start = time.perf_counter()
        reply = handle(texts[i % len(texts)], CTX, svc)
        elapsed = (time.perf_counter() - start) * 1000
        assert reply.kind in ("risks", "prs", "explain"), reply.text
        return elapsed

    out: list[float] = []
    with ThreadPoolExecutor(CONCURRENT) as pool:
        for _ in range(rounds):
            out += [f.result(timeout=600) for f in [pool.submit(one, i) for i in range(CONCURRENT)]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-memo", action="store_true", help="build the report for every command")
    args = parser.parse_args()
    os.environ.pop("PRDIGEST_CONFIG", None)
    with tempfile.TemporaryDirectory(prefix="prdigest-chat-bench-") as name:
        tmp = Path(name)
        report_bench.replay(args.shared, args.shared / report_bench.DATA, tmp / "miles")
        svc, commands = chat_on(tmp / "miles", tmp / "bench.db", not args.no_memo)
        timings = sequential(svc, commands, args.calls)
        svc.store.close()
        every = [t for values in timings.values() for t in values]
        print(f"cached_reply_p50_ms={statistics.median(every):.1f}")
        print(f"cached_reply_p99_ms={percentile(every, 0.99):.1f}")
        for cmd, values in timings.items():
            print(f"{cmd}_p99_ms={percentile(values, 0.99):.1f}", flush=True)

        big = report_bench.generated(args.shared, tmp / "big", args.size, report_bench.WEEK, spread=False)
        svc, commands = chat_on(big, tmp / "big.db", not args.no_memo)
        print(f"first_reply_ms_{args.size}={timed(lambda: handle('risks', CTX, svc)):.0f}", flush=True)
        print(f"rebuild_ms_{args.size}={timed(lambda: handle('risks', CTX, svc)):.0f}", flush=True)
        burst = concurrent(svc, commands, args.rounds)
        svc.store.close()
        print(f"cached_reply_p50_ms_{args.size}={statistics.median(burst):.1f}")
        print(f"cached_reply_p99_ms_{args.size}={percentile(burst, 0.99):.1f}")


if __name__ == "__main__":
    main()
