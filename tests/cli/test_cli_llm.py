"""The command line with an LLM: the LLM engine writes, the rules engine stands in, reruns are free."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from fakes.openai_api import KEY, FakeOpenAI, prdigest_answers

from prdigest.i18n import detect_lang
from prdigest.sources.fixture import demo_fixture_path

BASE = ["report", "--fixture", str(demo_fixture_path()), "--week", "2026-W37", "--lang", "en"]


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI("strict", responder=prdigest_answers) as fake:
        yield fake


def prdigest(
    *args: str, llm: FakeOpenAI | None = None, db: str, **env_vars: str
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PRDIGEST_DB=db, **env_vars)
    if llm is not None:
        env.update(PRDIGEST_LLM_BASE_URL=llm.url, PRDIGEST_LLM_MODEL="fake-model", PRDIGEST_LLM_API_KEY=KEY)
    return subprocess.run(
        [sys.executable, "-m", "prdigest.cli", *args], capture_output=True, text=True, env=env, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_report_with_the_llm_then_a_free_rerun(llm: FakeOpenAI, tmp_path) -> None:
    db = str(tmp_path / "llm.db")
    first = prdigest(*BASE, "--format", "json", llm=llm, db=db)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["engine"] == "llm" and report["stats"]["engines"] == {"llm": 30}
    assert report["llm_usage"]["model"] == "fake-model" and report["llm_usage"]["narrative"] == "llm"
    calls = llm.calls
    assert calls == 31  # one per PR, one for the narrative
    usage = report["llm_usage"]
    assert usage["calls"] == calls and usage["run_calls"] == calls and usage["input_tokens"] > 0
    assert {k: v["calls"] for k, v in usage["by_purpose"].items()} == {"analysis": 30, "narrative": 1}
    rerun = prdigest(*BASE, llm=llm, db=db)
    assert rerun.returncode == 0 and llm.calls == calls  # everything came from the cache
    # The footer says what the report cost when built, and that this run sent nothing.
    built = f"Model fake-model: {calls} calls built this report (analysis 30, narrative 1)"
    assert (
        built in rerun.stdout
        and f"{usage['input_tokens']} input / {usage['output_tokens']} output" in rerun.stdout
    )
    assert "0 of the calls in this run" in rerun.stdout and "30 analyses from the cache" in rerun.stdout


def test_without_the_llm_the_figures_are_the_same(llm: FakeOpenAI, tmp_path) -> None:
    with_llm = json.loads(prdigest(*BASE, "--format", "json", llm=llm, db=str(tmp_path / "a.db")).stdout)
    rules = json.loads(prdigest(*BASE, "--format", "json", db=str(tmp_path / "b.db")).stdout)
    assert rules["engine"] == "rules" and rules["llm_usage"] is None
    for key in ("merged_prs", "authors", "hot_files", "per_day", "additions", "deletions"):
        assert with_llm["stats"][key] == rules["stats"][key], key


def test_a_dead_llm_leaves_the_rules_report(tmp_path) -> None:
    with FakeOpenAI("strict", responder=prdigest_answers) as fake:
        dead = fake
    result = prdigest(*BASE, "--format", "json", llm=dead, db=str(tmp_path / "d.db"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["stats"]["engines"] == {"rules": 30} and report["llm_usage"]["fallback"] == 30
    assert "did not analyse 30 of 30 PRs; the rules engine did" in result.stderr


def test_why_the_llm_failed_is_on_stderr_and_in_the_log_at_info(tmp_path) -> None:
    with FakeOpenAI("strict", responder=lambda _: '{"summary": "}, {"}') as junk:
        quiet = prdigest(*BASE, llm=junk, db=str(tmp_path / "q.db"))
        told = prdigest(*BASE, llm=junk, db=str(tmp_path / "t.db"), PRDIGEST_LOG_LEVEL="info")
    assert quiet.returncode == told.returncode == 0, told.stderr
    # The model failed its first requests: the run stopped asking, and the reasons are counted.
    assert "did not analyse 30 of 30 PRs; the rules engine did (invalid " in quiet.stderr
    assert ", stopped " in quiet.stderr and "failed" in quiet.stdout
    # One log line per failed request, at info: shown when PRDIGEST_LOG_LEVEL asks for it.
    assert "on the json_schema rung" not in quiet.stderr
    lines = [line for line in told.stderr.splitlines() if line.startswith("INFO prdigest.llm: analyse_pr")]
    assert len(lines) >= 3 and all(line.endswith("invalid on the json_schema rung") for line in lines)
    assert "HTTP Request" not in told.stderr  # not the HTTP library's line per request: that is debug


def test_demo_never_calls_the_llm(llm: FakeOpenAI, tmp_path) -> None:
    result = prdigest("demo", "--no-chat", llm=llm, db=str(tmp_path / "demo.db"))
    assert result.returncode == 0 and llm.calls == 0


def test_ask_from_the_command_line(llm: FakeOpenAI, tmp_path) -> None:
    db = str(tmp_path / "ask.db")
    assert prdigest(*BASE, db=db).returncode == 0  # fill the cache, rules only
    rules = prdigest("ask", "sandbox", "shell", "--repo", "acme-ml/trainer", "--lang", "en", db=db)
    assert rules.returncode == 0 and "#4120" in rules.stdout
    # Without --lang a question is answered in its own language, whatever the report language.
    english = prdigest("ask", "what", "changed", "in", "the", "sandbox?", "--repo", "acme-ml/trainer", db=db)
    chinese = prdigest("ask", "沙箱", "sandbox", "改了什么？", "--repo", "acme-ml/trainer", db=db)
    assert english.returncode == chinese.returncode == 0
    assert detect_lang(english.stdout) == "en" and detect_lang(chinese.stdout) == "zh"
    answered = prdigest("ask", "who", "fixed", "the", "sandbox?", "--repo", "acme-ml/trainer", llm=llm, db=db)
    assert answered.returncode == 0 and llm.calls >= 1 and "#" in answered.stdout
