"""One LLM analysis per PR across reports built at once: two runs asking about the same PRs together (a zh
and an en team on Monday) send one request per PR, the second reading the first's answers; a claim whose
run died, or that ended without an answer, leaves the PR to the run waiting for it."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from test_llm_engine import analyse, by_purpose, settings, week_prs

from prdigest.analysis.llm import shared
from prdigest.analysis.llm.engine import LLMEngine
from prdigest.clock import utc_now
from prdigest.config import Taxonomy
from prdigest.storage import Store, analysis_claims
from prdigest.storage.db import analysis_key


def keys_of(prs) -> list[str]:
    version = LLMEngine.analysis_version(Taxonomy(), "en")
    return [analysis_key(p.repo, p.number, p.content_hash(), "llm", "fake-model", version, "en") for p in prs]


@pytest.mark.parametrize("lease_s", [30.0, 1.0])  # 1 s: the answers outlast it; the claims are renewed
def test_two_runs_at_once_send_one_request_per_pr(
    demo_store: Store, serve, monkeypatch, lease_s: float
) -> None:
    monkeypatch.setattr(shared, "LEASE", timedelta(seconds=lease_s))
    fake = serve(latency=2.5)
    prs = week_prs(demo_store)[:6]
    llm = settings(fake, concurrency=6)
    results: list[dict] = []

    def run() -> None:
        results.append(analyse(demo_store, llm, prs)[0])

    threads = [threading.Thread(target=run, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(results) == 2
    assert len(by_purpose(fake, "<untrusted_pr_data>")) == len(prs)  # twice as many without the claims
    for analyses in results:
        assert {analyses[p.number].engine for p in prs} == {"llm"}


def test_a_claim_of_a_dead_run_is_taken_over_at_once(demo_store: Store, serve) -> None:
    fake = serve()
    prs = week_prs(demo_store)[:2]
    long_ago = utc_now() - shared.LEASE - timedelta(minutes=1)
    for key in keys_of(prs):
        assert analysis_claims.claim(demo_store, key, "a run that died", long_ago, shared.LEASE)
    analyses, _ = analyse(demo_store, settings(fake), prs)
    assert {analyses[p.number].engine for p in prs} == {"llm"}
    assert len(by_purpose(fake, "<untrusted_pr_data>")) == 2


def test_a_claim_that_ends_without_an_answer_leaves_the_pr_to_the_waiting_run(
    demo_store: Store, serve
) -> None:
    fake = serve()
    prs = week_prs(demo_store)[:1]
    [key] = keys_of(prs)
    assert analysis_claims.claim(demo_store, key, "another run", utc_now(), shared.LEASE)
    ended = threading.Timer(0.6, analysis_claims.release, args=(demo_store, [key], "another run"))
    ended.daemon = True
    began = time.monotonic()  # the fake's clock
    ended.start()
    analyses, _ = analyse(demo_store, settings(fake), prs)
    ended.join(timeout=5)
    assert analyses[prs[0].number].engine == "llm"
    requests = by_purpose(fake, "<untrusted_pr_data>")
    assert len(requests) == 1 and requests[0].at >= began + 0.5  # asked once the claim ended


def test_claims_on_every_store(any_store: Store) -> None:
    now, lease = utc_now(), timedelta(minutes=5)
    assert analysis_claims.claim(any_store, "k1", "a", now, lease)
    assert not analysis_claims.claim(any_store, "k1", "b", now, lease)  # a holds it
    assert analysis_claims.held(any_store, ["k1", "k2"], now, lease) == {"k1"}
    assert analysis_claims.held(any_store, ["k1"], now + lease + timedelta(seconds=1), lease) == set()
    assert analysis_claims.claim(any_store, "k1", "b", now + lease + timedelta(seconds=1), lease)  # a died
    analysis_claims.release(any_store, ["k1"], "a")  # no longer a's: stays b's
    assert analysis_claims.held(any_store, ["k1"], now + lease, lease) == {"k1"}
    analysis_claims.release(any_store, ["k1"], "b")
    assert analysis_claims.held(any_store, ["k1"], now, lease) == set()
