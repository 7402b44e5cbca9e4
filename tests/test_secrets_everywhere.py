"""No configured secret in any output: chat replies, CLI stderr, log lines (text and JSON), pages.

Each secret is planted where an operator saw one leak: in an upstream error (a GitHub that
echoes the request, its Authorization header included, and every secret it can think of), in
an exception's message, in a library's log line, in a thread's uncaught error.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import subscribe

from prdigest.bot.app import BotCore, Inbound
from prdigest.bot.pages import report_pages
from prdigest.cli.commands import cli
from prdigest.config import Settings, WebSettings, load_settings
from prdigest.errors import ConfigError, SourceError
from prdigest.handlers import Context, Reply, Services, handle
from prdigest.logs import setup_logging
from prdigest.pipeline.single import make_report
from prdigest.redact import redact, scrub, use_secrets
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.deliveries import page_token

SECRETS = {
    "GITHUB_TOKEN": "ghp_plantedGithubToken0123456789",
    "PRDIGEST_SLACK_BOT_TOKEN": "xoxb-planted-slack-bot-token",
    "PRDIGEST_SLACK_SIGNING_SECRET": "8f14e45fceea167a5a36dedd4bea2543",
    "PRDIGEST_LARK_APP_ID": "cli_planted",
    "PRDIGEST_LARK_APP_SECRET": "LarkPlantedAppSecretQ7",
    "PRDIGEST_LLM_API_KEY": "sk-plantedOpenAIkey0123456789",
}
VALUES = [v for k, v in SECRETS.items() if k != "PRDIGEST_LARK_APP_ID"]
# What a careless upstream says back: every secret, and credentials in URLs and headers.
LEAK = (
    " ".join(VALUES)
    + " https://bot:hunter2pass@api.example.com ?access_token=qqq123 Authorization: token abcd1234"
)
CONSOLE = Context(platform="console", chat_id="console", user_id="me")
REPO = "acme/rocket"


def assert_clean(text: str) -> None:
    for value in [*VALUES, "hunter2pass", "qqq123", "abcd1234"]:
        assert value not in text


class _Echo(BaseHTTPRequestHandler):
    """Answers everything with an error whose body quotes the request and the secrets."""

    status = 401

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps(
            {
                "message": f"Bad credentials: Authorization: {self.headers.get('Authorization')} {LEAK}",
                "errors": [{"message": LEAK, "type": "FORBIDDEN", "path": ["repository"]}],
            }
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(params=[401, 403, 422])
def echo(request: pytest.FixtureRequest) -> Iterator[str]:
    handler = type("Echo", (_Echo,), {"status": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def env(echo: str, tmp_path: Path) -> dict[str, str]:
    return {
        **SECRETS,
        "PRDIGEST_GITHUB_URL": echo,
        "PRDIGEST_DB": str(tmp_path / "s.db"),
        "PRDIGEST_LLM_MODEL": "m",
    }


@pytest.fixture
def logged() -> Iterator[dict[str, io.StringIO]]:
    """The log in both formats at once: a text handler and a JSON handler on the root logger."""
    settings = load_settings(env=SECRETS)
    streams = {"text": io.StringIO(), "json": io.StringIO()}
    text = setup_logging(settings, "text", streams["text"])
    as_json = setup_logging(settings, "json", streams["json"])
    logging.getLogger().handlers[:] = [text, as_json]
    hooks = sys.excepthook, threading.excepthook
    try:
        yield streams
    finally:
        logging.getLogger().handlers[:] = []
        sys.excepthook, threading.excepthook = hooks
        use_secrets([])


def test_a_github_error_quoting_the_secrets_reaches_no_chat_reply(env: dict[str, str], logged: Any) -> None:
    settings = load_settings(env=env)
    store = Store(settings.storage.db)
    from prdigest.sources.registry import source_factory

    svc = Services(settings=settings, store=store, default_repo=REPO, source_for=source_factory(settings))
    for message in (f"report {REPO} 2026-W37", "explain #5", f"risks {REPO} last week"):
        reply = handle(message, CONSOLE, svc)
        assert_clean(reply.model_dump_json())
        assert reply.kind in ("error", "text")
    posted: list[Reply] = []  # what a chat adapter is handed to post
    subscribe(store, "slack", "C1", REPO)
    core = BotCore(svc)
    event = Inbound(
        platform="slack", event_id="E1", chat_id="C1", user_id="U1", text=f"report {REPO} 2026-W37"
    )
    future = core.submit(event, posted.append)
    assert future is not None
    future.result(30)
    core.close()
    assert len(posted) == 1 and "GitHub" in posted[0].text
    assert_clean(posted[0].model_dump_json())
    store.close()
    for stream in logged.values():
        assert_clean(stream.getvalue())


def test_an_exception_or_a_pr_quoting_the_secrets_reaches_no_reply(tmp_path: Path, logged: Any) -> None:
    settings = load_settings(env={**SECRETS, "PRDIGEST_DB": str(tmp_path / "s.db")})
    store = Store(settings.storage.db)
    source = FixtureSource(demo_fixture_path())
    prs = [pr.model_copy(update={"title": f"{pr.title} {LEAK}"}) for pr in source.prs]
    store.upsert_prs(prs)

    def failing(repo: str) -> Any:
        raise SourceError(f"the server answered: {LEAK}")

    svc = Services(settings=settings, store=store, default_repo=source.repo, source_for=failing)
    for message in ("top 5 2026-W37", "report 2026-W37", "explain #4124", "report acme/other last week"):
        assert_clean(handle(message, CONSOLE, svc).model_dump_json())

    # From the cache alone, twice: the second reply shares the memo's report, scrubbed once as built.
    svc.source_for = lambda repo: None
    for _ in range(2):
        reply = handle("risks 2026-W37", CONSOLE, svc)
        assert reply.report is not None and reply.report.stats.merged_prs == len(prs)
        assert_clean(reply.model_dump_json())

    def broken(repo: str) -> Any:
        raise RuntimeError(f"bug with {LEAK}")

    svc.source_for = broken
    assert_clean(handle("report acme/other last week", CONSOLE, svc).model_dump_json())
    store.close()
    text, as_json = logged["text"].getvalue(), logged["json"].getvalue()
    assert "RuntimeError: bug with ***" in text  # the traceback is logged, its secrets masked
    assert_clean(text)
    assert_clean(as_json)
    assert all(json.loads(line) for line in as_json.splitlines())


SUBSCRIPTION = """
[[subscriptions]]
platform = "console"
chat_id = "local"
repo = "acme/rocket"
day = "fri"
time = "17:00"
"""


def test_no_secret_on_the_cli_stderr(env: dict[str, str], tmp_path: Path) -> None:
    runner = CliRunner()
    config = tmp_path / "prdigest.toml"
    config.write_text(SUBSCRIPTION)
    for args in (
        ["sync", "--repo", REPO, "--week", "2026-W37"],
        ["report", "--repo", REPO, "--week", "2026-W37"],
        ["deliver", "--config", str(config), "--subscription", "1", "--week", "2026-W37"],
    ):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code == 1, result.output
        assert "GitHub" in result.stderr
        assert_clean(result.stderr + result.stdout)
    use_secrets([])


def test_uncaught_errors_and_library_lines_on_stderr_are_redacted(tmp_path: Path) -> None:
    """A subprocess, as an operator runs it: a library's warning and an uncaught error, through the CLI's
    logging and `serve`'s (JSON), never print a secret."""
    code = f"""
import logging, threading
from prdigest.config import load_settings
from prdigest.logs import cli_logging
load_settings()
cli_logging()
logging.getLogger("slack_sdk").warning("request failed: %s", {LEAK!r})
t = threading.Thread(target=lambda: 1 / 0 if False else (_ for _ in ()).throw(RuntimeError({LEAK!r})))
t.start(); t.join()
raise RuntimeError({LEAK!r})
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**SECRETS, "PATH": ""}, timeout=60
    )
    assert done.returncode == 1
    assert "WARNING slack_sdk: request failed: ***" in done.stderr
    assert (
        "uncaught RuntimeError in thread" in done.stderr
        and "uncaught RuntimeError in the main" in done.stderr
    )
    assert_clean(done.stderr + done.stdout)


def test_json_format_from_the_environment_covers_threads_and_lark(tmp_path: Path) -> None:
    code = f"""
import io, logging, sys, threading
from prdigest.config import load_settings
from prdigest.logs import setup_logging
settings = load_settings()
setup_logging(settings)
from lark_oapi.core.log import logger   # lark-oapi's own handler prints to stdout
from prdigest.logs import adopt_library_loggers
adopt_library_loggers()
logger.error("forged request: %s", {LEAK!r})
logging.getLogger("prdigest.test").debug("debug is on")
def work():
    raise ValueError({LEAK!r})
t = threading.Thread(target=work, name="worker-1")
t.start(); t.join()
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        env={**SECRETS, "PATH": "", "PRDIGEST_LOG_FORMAT": "JSON", "PRDIGEST_LOG_LEVEL": "debug"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # nothing printed past the log
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    by_logger = {line["logger"]: line for line in lines}
    assert by_logger["Lark"]["message"].startswith("forged request: ***")
    assert by_logger["prdigest.test"]["level"] == "debug"
    thread = by_logger["prdigest.uncaught"]
    assert "worker-1" in thread["message"] and "ValueError: ***" in thread["error"]
    assert_clean(done.stderr)


def test_no_secret_on_a_report_page(tmp_path: Path) -> None:
    settings = load_settings(env={**SECRETS, "PRDIGEST_DB": str(tmp_path / "s.db")})
    store = Store(settings.storage.db)
    source = FixtureSource(demo_fixture_path())
    report = make_report(settings, store, source, source.window, lang="en")
    planted = report.model_copy(
        update={"prs": [p.model_copy(update={"title": f"{p.title} {LEAK}"}) for p in report.prs]}
    )
    report_id = store.save_report(planted.model_copy(update={"id": None}))
    seen: list[str] = []
    environ = {"PATH_INFO": f"/reports/{page_token(store, report_id)}", "REQUEST_METHOD": "GET"}
    app = report_pages(store, Settings(web=WebSettings()))
    page = b"".join(app(environ, lambda status, headers: seen.append(status)))
    assert seen == ["200 OK"] and b"<html" in page.lower()
    assert_clean(page.decode())
    store.close()
    use_secrets([])


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("PRDIGEST_GITHUB_URL", "https://bot:pa55word@github.example.com/api"),
        ("PRDIGEST_GITHUB_URL", "https://ghp_abcdefabcdefabcdefabcdef@github.example.com"),
        ("PRDIGEST_SLACK_API_URL", "https://slack.example.com/api/?token=xoxb-1234"),
        ("PRDIGEST_LARK_DOMAIN", "https://open.feishu.cn?access_token=t-123456"),
        ("PRDIGEST_PUBLIC_URL", "https://digest.example.com/?key=k123456"),
        ("PRDIGEST_LLM_BASE_URL", "https://u:p4ss@llm.example.com/v1"),
    ],
)
def test_urls_with_credentials_are_refused_by_key(key: str, value: str) -> None:
    name = {
        "PRDIGEST_GITHUB_URL": "github.url",
        "PRDIGEST_SLACK_API_URL": "slack.api_url",
        "PRDIGEST_LARK_DOMAIN": "lark.domain",
        "PRDIGEST_PUBLIC_URL": "public_url",
        "PRDIGEST_LLM_BASE_URL": "llm.base_url",
    }[key]
    with pytest.raises(ConfigError) as info:
        load_settings(env={key: value, "PRDIGEST_LLM_MODEL": "m"})
    message = str(info.value)
    assert name in message and "credentials" in message
    for part in ("pa55word", "abcdefabcdef", "xoxb-1234", "t-123456", "k123456", "p4ss"):
        assert part not in message


def test_urls_with_credentials_in_the_file_are_refused_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[report]\nlang = "en"\n\n[github]\nurl = "https://x:secretpw@github.example.com"\n')
    with pytest.raises(ConfigError, match=r"prdigest.toml:5: github.url: the URL holds credentials") as info:
        load_settings(path, env={})
    assert "secretpw" not in str(info.value)


def test_plain_urls_are_accepted() -> None:
    settings = load_settings(
        env={
            "PRDIGEST_GITHUB_URL": "https://ghe.example.com/api/v3",
            "PRDIGEST_PUBLIC_URL": "https://d.example.com",
        }
    )
    assert settings.github.url == "https://ghe.example.com/api/v3"
    use_secrets([])


@pytest.mark.parametrize(
    "text",
    [
        "GET /x?access_token=abc123def&page=2",
        "https://api.example.com/v1?key=abc123def",
        "curl -H 'Authorization: token abc123def'",
        "headers={'Authorization': 'Basic abc123def'}",
        "Authorization: Bearer abc123def",
        "https://user:abc123def@host/",
    ],
)
def test_redact_covers_query_credentials_and_authorization_headers(text: str) -> None:
    assert "abc123def" not in redact(text) and "[REDACTED]" in redact(text)


def test_scrub_masks_the_configured_secrets() -> None:
    use_secrets(["LarkPlantedAppSecretQ7"])
    try:
        assert scrub("secret LarkPlantedAppSecretQ7 here") == "secret *** here"
    finally:
        use_secrets([])


def test_a_long_upstream_answer_is_summarised() -> None:
    from prdigest.sources.github.errors import GitHubError, json_object

    use_secrets(VALUES)
    error = GitHubError("GitHub answered 500: " + "stack frame\n" * 500)
    assert len(str(error)) <= 400 and "\n" not in str(error)
    body = json_object(
        json.dumps({"message": "x" * 5000, "errors": [{"message": LEAK, "path": ["a", 1]}] * 9})
    )
    assert len(body["message"]) <= 160 and len(body["errors"]) == 3 and body["errors"][0]["path"] == ["a", 1]
    assert_clean(json.dumps(body))
    use_secrets([])
