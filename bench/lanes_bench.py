"""Lanes benchmark: cached chat replies while four questions to the LLM hang. Prints `name=value` lines.

    python bench/lanes_bench.py [--waves 5] [--concurrent 20] [--miles ../shared]

The demo week (or, with `--miles`, the replayed miles week: 93 PRs) is read into a fresh
cache (its coverage recorded, as a sync does), with an LLM configured at a local fake
OpenAI-compatible server that answers analyses and narratives at once. `risks`, `top 5`,
`explain #N` and a question are asked once each to fill the LLM's caches and load the code;
then `--waves` waves of `--concurrent` of the three (mixed) go through `BotCore.submit`, and
the time from each submission to its `respond` callback is measured: first idle
(`cached_reply_p99_ms_idle`), then while four `ask` questions hang at the fake
(`cached_reply_p99_ms_llm_busy`, goal <= 300). `queued_notice_ok`: a fifth question, queued
behind the four, gets its "working on it" notice (1) or not (0). `--hang-s` bounds the hang
(with one pool for every request, the cached replies waited for it).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from datetime import time as clock_time
from itertools import count
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the fake LLM

from fakes.openai_api import KEY, FakeOpenAI, Reply, Request, prdigest_answers  # noqa: E402

from prdigest.bot.app import BotCore, Inbound  # noqa: E402
from prdigest.config import load_settings  # noqa: E402
from prdigest.handlers import Reply as ChatReply  # noqa: E402
from prdigest.handlers import Services  # noqa: E402
from prdigest.models import Window  # noqa: E402
from prdigest.pipeline.single import read_window  # noqa: E402
from prdigest.sources.base import Source  # noqa: E402
from prdigest.sources.fixture import FixtureSource, demo_fixture_path  # noqa: E402
from prdigest.sources.git.source import GitSource  # noqa: E402
from prdigest.storage import Store  # noqa: E402

HUNG = 4  # questions hanging at the LLM: as many as the slow lane's workers
QUESTIONS = [
    "ask which PRs changed the NVFP4 kernels?", "ask what changed in CI?", "ask who fixed the CUDA sync?",
    "ask what did the Docker sandbox add?", "ask which docs changed?",
]  # fmt: skip
ANSWER = '{"answer": "It was #4107.", "cited": [4107]}'
NOTICE_AFTER_S = 0.5


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def week(tmp: Path, shared: Path | None) -> tuple[Source, Window, datetime]:
    """The demo week; with ``shared``, the replayed miles week (a git clone) as chat_bench reads it."""
    if shared is None:
        demo = FixtureSource(demo_fixture_path())
        monday = datetime.combine(demo.window.until + timedelta(days=1), clock_time(10), demo.window.zone)
        return demo, demo.window, monday
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        [sys.executable, str(shared / "tools/replay_history.py"),
         str(shared / "data/radixark__miles__2026-08-10.json"), str(tmp / "miles")],
        check=True, stdout=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    window = Window(since="2026-08-10", until="2026-08-16", tz="Asia/Shanghai")
    return GitSource(tmp / "miles", repo="radixark/miles"), window, datetime(2026, 8, 17, 2, 0, tzinfo=UTC)


def measure(
    waves: int = 5, concurrent: int = 20, hang_s: float = 600, shared: Path | None = None
) -> dict[str, float]:
    os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    hang = threading.Event()

    def answers(request: Request) -> Reply | str:
        if hang.is_set() and not any(
            tag in request.user for tag in ("<untrusted_pr_data>", "<untrusted_week_data>")
        ):
            return Reply(content=ANSWER, delay=hang_s)  # a question: it hangs (until the fake closes)
        return prdigest_answers(request)

    with (
        tempfile.TemporaryDirectory(prefix="prdigest-lanes-bench-") as tmp,
        FakeOpenAI(responder=answers) as llm,
    ):
        env = {
            "PRDIGEST_LLM_BASE_URL": llm.url,
            "PRDIGEST_LLM_MODEL": "fake-model",
            "PRDIGEST_LLM_API_KEY": KEY,
            "PRDIGEST_ACCESS__OPEN": "true",  # one team's install: the bench's channel sees the week
        }
        source, window, monday = week(Path(tmp), shared)
        store = Store(Path(tmp) / "bench.db")
        read_window(store, source, window)  # records its coverage: the week is cached
        svc = Services(
            settings=load_settings(env=env), store=store, default_repo=source.repo, clock=lambda: monday
        )
        core = BotCore(svc, notice_after=NOTICE_AFTER_S)
        prs = store.prs_in_window(source.repo, window)
        biggest = max(prs, key=lambda p: p.additions + p.deletions).number
        cached = ["risks", "top 5", f"explain #{biggest}"]
        ids = count(1)
        try:
            # Fill the LLM's caches (the replies below are cached ones), and load the question's code
            # once (about 0.5 s of imports, which a running service paid long ago).
            for text in [*cached, "ask what changed in the rollout?"]:
                _ask(core, next(ids), text).wait(120)
            idle = _waves(core, ids, cached, waves, concurrent)
            hang.set()
            hung = [_ask(core, next(ids), q) for q in QUESTIONS[:HUNG]]
            deadline = time.monotonic() + 30
            while llm.in_flight < HUNG and time.monotonic() < deadline:
                time.sleep(0.01)
            queued = _ask(core, next(ids), QUESTIONS[HUNG], notices := [])
            busy = _waves(core, ids, cached, waves, concurrent)
            time.sleep(NOTICE_AFTER_S * 2)
            notice_ok = llm.in_flight == HUNG and bool(notices) and not queued.is_set()
        finally:
            llm.close()  # the hanging answers come back...
            core.close()  # ...and every request is answered
            store.close()
        assert all(event.is_set() for event in [*hung, queued]), "a question was not answered"
    return {
        "cached_reply_p50_ms_idle": percentile(idle, 0.5),
        "cached_reply_p99_ms_idle": percentile(idle, 0.99),
        "cached_reply_p50_ms_llm_busy": percentile(busy, 0.5),
        "cached_reply_p99_ms_llm_busy": percentile(busy, 0.99),
        "queued_notice_ok": float(notice_ok),
    }


def _ask(core: BotCore, n: int, text: str, notices: list[str] | None = None) -> threading.Event:
    done = threading.Event()

    def respond(reply: ChatReply) -> None:
        done.set()

    inbound = Inbound(
        platform="slack", event_id=f"EvLanes{n:06d}", chat_id="C0BENCH", user_id="U1", text=text
    )
    core.submit(inbound, respond, None if notices is None else notices.append)
    return done


def _waves(core: BotCore, ids: count[int], texts: list[str], waves: int, concurrent: int) -> list[float]:
    """The ms from each submission to its answer, ``concurrent`` requests at a time."""
    timings: list[float] = []
    lock = threading.Lock()
    finished = threading.Semaphore(0)
    for _ in range(waves):
        for i in range(concurrent):
            start = time.perf_counter()

            def respond(reply: ChatReply, start: float = start) -> None:
                with lock:
                    timings.append((time.perf_counter() - start) * 1000)
                finished.release()

            text = texts[i % len(texts)]
            inbound = Inbound(
                platform="slack",
                event_id=f"EvLanes{next(ids):06d}",
                chat_id="C0BENCH",
                user_id="U1",
                text=text,
            )
            core.submit(inbound, respond)
        for _ in range(concurrent):
            if not finished.acquire(timeout=120):
                raise RuntimeError("a cached reply did not come within 120 s")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--waves", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--miles", type=Path, metavar="SHARED", help="the replayed miles week, from SHARED")
    parser.add_argument(
        "--hang-s", type=float, default=600, help="how long a question hangs (default: until the end)"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    figures = measure(args.waves, args.concurrent, args.hang_s, args.miles)
    for name in ("cached_reply_p50_ms_idle", "cached_reply_p99_ms_idle", "cached_reply_p50_ms_llm_busy",
                 "cached_reply_p99_ms_llm_busy"):  # fmt: skip
        print(f"{name}={figures[name]:.1f}")
    print(f"queued_notice_ok={figures['queued_notice_ok']:.0f}")


if __name__ == "__main__":
    main()
