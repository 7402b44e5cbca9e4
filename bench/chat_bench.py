"""Chat benchmark: latency of cached replies through the handlers. Prints `name=value` lines.

    python bench/chat_bench.py [--shared ../shared] [--calls 200]

The replayed miles week (93 merged PRs) is read into a fresh cache and analysed once;
then `risks`, `top` and `explain #N` are each answered `--calls` times from the cache.
Figures: `cached_reply_p50_ms`, `cached_reply_p99_ms` over all those calls (goal: p99 < 300),
and the same per command (`risks_p99_ms`, `top_p99_ms`, `explain_p99_ms`). Then, from
bench/ack_bench.py: `ack_p50_ms`, `ack_p99_ms` for 50 concurrent signed Slack HTTP events on
loopback (goal: p99 < 100), `ack_failures`, and `replies_for_3_deliveries` (goal: 1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prdigest.config import load_settings  # noqa: E402
from prdigest.handlers import Context, Services, handle  # noqa: E402
from prdigest.models import Window  # noqa: E402
from prdigest.pipeline import read_window  # noqa: E402
from prdigest.sources.gitlog import GitSource  # noqa: E402
from prdigest.storage import Store  # noqa: E402

WEEK = Window(since="2026-08-10", until="2026-08-16", tz="Asia/Shanghai")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prdigest-chat-bench-") as name:
        tmp = Path(name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        subprocess.run(
            [sys.executable, str(args.shared / "tools/replay_history.py"),
             str(args.shared / "data/radixark__miles__2026-08-10.json"), str(tmp / "miles")],
            check=True, stdout=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        store = Store(tmp / "bench.db")
        read_window(store, GitSource(tmp / "miles", repo="radixark/miles"), WEEK)  # records its coverage
        prs = store.prs_in_window("radixark/miles", WEEK)
        svc = Services(
            settings=load_settings(env={}), store=store, default_repo="radixark/miles",
            clock=lambda: datetime(2026, 8, 17, 2, 0, tzinfo=UTC),  # Monday after the week, Shanghai morning
        )  # fmt: skip
        ctx = Context(platform="console", chat_id="bench", user_id="bench")
        number = max(prs, key=lambda p: p.additions + p.deletions).number
        commands = {"risks": "risks", "top": "top 10", "explain": f"explain #{number}"}
        for text in commands.values():  # warm the analyses cache: replies below are cached ones
            assert handle(text, ctx, svc).kind in ("risks", "prs", "explain")
        timings: dict[str, list[float]] = {}
        for name, text in commands.items():
            timings[name] = []
            for _ in range(args.calls):
                start = time.perf_counter()
                handle(text, ctx, svc)
                timings[name].append((time.perf_counter() - start) * 1000)
        store.close()
    every = [t for values in timings.values() for t in values]
    print(f"cached_reply_p50_ms={statistics.median(every):.1f}")
    print(f"cached_reply_p99_ms={percentile(every, 0.99):.1f}")
    for name, values in timings.items():
        print(f"{name}_p99_ms={percentile(values, 0.99):.1f}")
    sys.path.insert(0, str(ROOT / "bench"))
    from ack_bench import measure

    for name, value in measure().items():
        print(f"{name}={value:g}")


if __name__ == "__main__":
    main()
