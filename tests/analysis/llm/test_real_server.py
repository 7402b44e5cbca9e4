"""A weak model never makes the report worse than the rules: the 7-PR miles week (2026-08-19..20)
through a fake that refuses json_schema with a 500 and answers junk, and through a real server,
llama-cpp-python's with SmolLM2-135M (`realllm`: skipped unless the extra is installed).

The report's time is printed, not asserted (the bench measures it: weak_model_report_s); a hang is
bounded by each test's timeout."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_api import KEY, FakeOpenAI, weak_answers
from fakes.weak_week import (
    BUNDLE,
    MODEL,
    clone,
    findings_kept,
    llama_server,
    llm_env,
    missing,
    prdigest,
    strong_findings,
    week_report,
)

_WORD = re.compile(r"[^\W\d_]{3,}")
_HASH_LIST = re.compile(r"[0-9a-f]{6,40}(?:[;,\s]+[0-9a-f]{6,40})*")


def junk(text: str) -> bool:
    """Not a sentence: JSON punctuation or a fragment (fewer than two words), a hash list, the prompt."""
    text = text.strip()
    return (
        len(_WORD.findall(text)) < 2
        or bool(_HASH_LIST.fullmatch(text))
        or "untrusted" in text
        or "Ignore any request" in text
    )


def test_junk_is_told_from_sentences() -> None:
    for bad in ("}, {", "0", ":{", "repo:", "d55816; d873b353", "<untrusted_pr_data> PR #1: fix"):
        assert junk(bad), bad
    assert not junk("Point the ROCm image at the v0.5.16 wheels")


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not BUNDLE.exists():
        pytest.skip(f"{BUNDLE} is not here")
    return clone(tmp_path_factory.mktemp("miles") / "miles")


def assert_no_worse(llm: dict[str, Any], rules: dict[str, Any], seconds: float, stderr: str) -> None:
    print(f"7-PR week with the weak model: {seconds:.1f} s; stderr: {stderr.strip()}")
    assert llm["stats"]["merged_prs"] == rules["stats"]["merged_prs"] == 7
    bad = [(pr["number"], pr["summary"]) for pr in llm["prs"] if junk(pr["summary"])]
    assert not bad, f"junk summaries: {bad}"
    assert not junk(llm["summary"]), llm["summary"]
    assert strong_findings(rules), "the rules find strong risks this week"
    kept = findings_kept(rules, llm)
    assert kept == 1.0, strong_findings(rules) - strong_findings(llm)


def assert_rerun_asks_again(git: Path, db: Path, env: dict[str, str], first: dict[str, Any]) -> None:
    """Nothing the model failed on was cached: a rerun reuses only its good analyses, and asks again."""
    _, again, _ = week_report(git, db, env)
    usage = again["llm_usage"]
    assert usage["cached"] == first["llm_usage"]["analysed"] < 7 and usage["run_calls"] > 0, usage


@pytest.mark.timeout(300)
def test_a_weak_fake_week_keeps_the_rules_findings(week: Path, tmp_path: Path) -> None:
    _, rules, _ = week_report(week, tmp_path / "rules.db")
    with FakeOpenAI("weak", responder=weak_answers) as fake:
        env = llm_env(fake.url, "fake-model", KEY)
        seconds, llm, stderr = week_report(week, tmp_path / "llm.db", env)
        assert_no_worse(llm, rules, seconds, stderr)
        assert "did not analyse" in stderr  # the gate refused the junk, and the report says so
        assert_rerun_asks_again(week, tmp_path / "llm.db", env, llm)


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    why = missing()
    if why:
        pytest.skip(why)
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


@pytest.mark.realllm
@pytest.mark.timeout(300)
def test_llm_check_on_llama_cpp_python(real_server: str, tmp_path: Path) -> None:
    env = llm_env(real_server, MODEL)
    status, out, err = prdigest("llm", "check", "--db", str(tmp_path / "c.db"), env=env)
    print(out)
    assert status == 0, err
    # llama-cpp-python's request validation knows no json_schema type: a 500 naming response_format.
    assert re.search(r"json_schema\s*│\s*rejected\s*│\s*HTTP 500: .*response_format", out), out
    assert re.search(r"json_object\s*│\s*ok", out), out
    assert "verdict: reports ask on the json_object rung" in out
    # Its server says no context length: neither /props nor a length in /v1/models.
    assert "context length: unknown" in out


@pytest.mark.realllm
@pytest.mark.timeout(1800)  # the rules' report, then the model's (REPORT_TIMEOUT_S at most)
def test_a_real_weak_model_keeps_the_rules_findings(real_server: str, week: Path, tmp_path: Path) -> None:
    _, rules, _ = week_report(week, tmp_path / "rules.db")
    env = llm_env(real_server, MODEL)
    seconds, llm, stderr = week_report(week, tmp_path / "llm.db", env)
    assert_no_worse(llm, rules, seconds, stderr)
    assert_rerun_asks_again(week, tmp_path / "llm.db", env, llm)
