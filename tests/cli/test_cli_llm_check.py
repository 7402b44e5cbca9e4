"""`prdigest llm check` against the fake OpenAI server: one request per rung, the verdict, the context
length where the server says it, the rung remembered; no model and no server are one clear line."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakes.openai_api import KEY, FakeOpenAI, Reply, weak_answers

from prdigest.storage import Store, llm_log

OK = '{"ok": true}'


def check(run_cli: Callable[..., Any], url: str, db: Path) -> Any:
    env = {"PRDIGEST_LLM_BASE_URL": url, "PRDIGEST_LLM_MODEL": "fake-model", "PRDIGEST_LLM_API_KEY": KEY}
    return run_cli("llm", "check", "--db", str(db), env=env, timeout=60)


def remembered(db: Path, url: str) -> str | None:
    store = Store(db)
    try:
        return llm_log.known_rung(store, url, "fake-model")
    finally:
        store.close()


def rows(stdout: str) -> dict[str, str]:
    """The table's rows: the way of asking, then the rest of its line."""
    out = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 3:
            out[cells[0]] = f"{cells[1]} {cells[2]}"
    return out


def test_a_refused_schema_steps_down_to_json_object(run_cli, tmp_path: Path) -> None:
    props = {"default_generation_settings": {"n_ctx": 4096}}
    with FakeOpenAI("json_object", responder=lambda _: OK, props=props) as fake:
        result = check(run_cli, fake.url, tmp_path / "c.db")
        url = fake.url
    assert result.returncode == 0, result.stderr
    table = rows(result.stdout)
    assert table["json_schema"].startswith("rejected HTTP 400: This response_format type is unavailable")
    assert table["json_object"] == "ok accepted, answered JSON"
    assert table["tools (chat routing)"].startswith("ignored no tool called")
    assert "context length: 4096 tokens (/props)" in result.stdout
    assert "verdict: reports ask on the json_object rung" in result.stdout
    assert remembered(tmp_path / "c.db", url) == "json_object"  # reports start there


def test_a_weak_server_refuses_with_a_500_asked_once(run_cli, tmp_path: Path) -> None:
    with FakeOpenAI("weak", responder=weak_answers, model_fields={"meta": {"n_ctx_train": 8192}}) as fake:
        result = check(run_cli, fake.url, tmp_path / "w.db")
    assert result.returncode == 0, result.stderr
    table = rows(result.stdout)
    assert table["json_schema"].startswith("rejected HTTP 500: 1 validation error: body.response_format")
    # A refusal is the answer sought: the SDK's retries of a 500 are not spent on it.
    assert [r.format for r in fake.requests] == ["json_schema", "json_object", None, None]
    assert table["json_object"] == "ok accepted, answered JSON"
    assert table["plain prompt"] == "ok accepted, but the answer holds no JSON object: '}, {'"
    assert "context length: 8192 tokens (/v1/models n_ctx_train)" in result.stdout
    assert "chat is routed by the rules (the model calls no tool)" in result.stdout


def test_tools_and_vllm_context(run_cli, tmp_path: Path) -> None:
    def answer(request: Any) -> Reply | str:
        return Reply(tool_calls=(("report", "{}"),)) if "tools" in request.body else OK

    with FakeOpenAI("strict", responder=answer, model_fields={"max_model_len": 32768}) as fake:
        result = check(run_cli, fake.url, tmp_path / "s.db")
    assert result.returncode == 0, result.stderr
    assert rows(result.stdout)["tools (chat routing)"] == "ok called report"
    assert "context length: 32768 tokens (/v1/models max_model_len)" in result.stdout
    assert "ask on the json_schema rung; chat is routed by the model" in result.stdout


def test_no_rung_works_is_unusable(run_cli, tmp_path: Path) -> None:
    with FakeOpenAI("strict") as fake:  # answers every request with a 500 that names no format
        result = check(run_cli, fake.url, tmp_path / "u.db")
        url = fake.url
    assert result.returncode == 1
    assert "verdict: unusable" in result.stdout and "context length: unknown" in result.stdout
    assert remembered(tmp_path / "u.db", url) is None


def test_no_model_is_one_line_and_exit_2(run_cli, tmp_path: Path) -> None:
    result = run_cli("llm", "check", "--db", str(tmp_path / "n.db"))
    assert result.returncode == 2
    assert result.stdout.strip().splitlines() == [
        "no LLM configured ([llm] model or PRDIGEST_LLM_MODEL): the rules engine writes reports"
    ]


def test_an_unreachable_server_is_said_without_a_traceback(run_cli, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = check(run_cli, f"http://127.0.0.1:{port}/v1", tmp_path / "x.db")
    assert result.returncode == 1
    assert "the server cannot be reached" in result.stdout
    assert rows(result.stdout)["json_schema"].startswith("unavailable")
    assert "json_object" not in rows(result.stdout)  # nothing more asked of a server that is not there
    assert "Traceback" not in result.stderr + result.stdout


def test_a_refused_key_is_said(run_cli, tmp_path: Path) -> None:
    with FakeOpenAI("strict", responder=lambda _: OK, key="another-key") as fake:
        result = check(run_cli, fake.url, tmp_path / "k.db")
    assert result.returncode == 1 and fake.calls == 1
    assert rows(result.stdout)["json_schema"] == "unavailable HTTP 401: Incorrect API key provided."
    assert "refuses the key or the model" in result.stdout
