"""Logs: one JSON object per line with timings, and never a configured secret."""

from __future__ import annotations

import io
import json
import logging
import re
import sys
import threading
from pathlib import Path

import pytest
from conftest import subscribe

from prdigest.bot.app import BotCore, Inbound
from prdigest.config import load_settings
from prdigest.errors import ConfigError
from prdigest.handlers import Services
from prdigest.logs import JsonFormatter, secrets_of, setup_logging
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store

ENV = {
    "GITHUB_TOKEN": "ghp_secretgithubtoken123",
    "PRDIGEST_SLACK_BOT_TOKEN": "xoxb-secret-slack-token",
    "PRDIGEST_LARK_APP_SECRET": "lark-app-secret-value",
    "PRDIGEST_LLM_API_KEY": "sk-secret-llm-key",
    "PRDIGEST_LLM_MODEL": "m",
}


def test_every_configured_secret_is_found() -> None:
    assert set(secrets_of(load_settings(env=ENV))) == {v for k, v in ENV.items() if k != "PRDIGEST_LLM_MODEL"}


def test_json_lines_with_timings_and_no_secret(tmp_path: Path) -> None:
    settings = load_settings(env=ENV)
    stream = io.StringIO()
    handler = setup_logging(settings, "json", stream)
    try:
        store = Store(tmp_path / "logs.db")
        store.upsert_prs(FixtureSource(demo_fixture_path()).prs)
        subscribe(store, "slack", "C1", "acme-ml/trainer")
        core = BotCore(Services(settings=settings, store=store))
        event = Inbound(platform="slack", event_id="E1", chat_id="C1", user_id="U1", text="top 3 2026-W37")
        future = core.submit(event, lambda reply: None)
        assert future is not None
        future.result(10)
        core.close()
        log = logging.getLogger("prdigest.test")
        log.warning("request with Authorization: Bearer %s failed", "xoxb-secret-slack-token")
        try:
            raise RuntimeError("token ghp_secretgithubtoken123 rejected")
        except RuntimeError:
            log.exception("sync failed")
        store.close()
    finally:
        logging.getLogger().removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    answered = next(entry for entry in lines if entry.get("command") == "top")
    assert re.fullmatch(r"slack command top in C1: ok in \d+ ms", answered["message"]), answered
    assert answered["reply"] == "prs" and answered["ms"] >= 0 and answered["chat"] == "C1"
    assert answered["outcome"] == "ok" and answered["level"] == "info"
    text = stream.getvalue()
    for secret in secrets_of(settings):
        assert secret not in text
    assert "Bearer ***" in text and "token *** rejected" in text


def test_level_and_format_from_the_environment() -> None:
    settings = load_settings(env={"PRDIGEST_LOG_LEVEL": "WARNING", "PRDIGEST_LOG_FORMAT": "json"})
    assert (settings.log.level, settings.log.format) == ("warning", "json")
    assert (load_settings(env={}).log.level, load_settings(env={}).log.format) == ("info", "text")
    with pytest.raises(ConfigError, match=r"log\.level"):
        load_settings(env={"PRDIGEST_LOG_LEVEL": "loud"})
    stream = io.StringIO()
    hooks = sys.excepthook, threading.excepthook
    setup_logging(settings, stream=stream)
    try:
        logging.getLogger("prdigest.test").info("not shown")
        logging.getLogger("prdigest.test").warning("shown")
        text_handler = setup_logging(settings, "text", stream)  # --log-format wins over the environment
        assert not isinstance(text_handler.formatter, JsonFormatter)
    finally:
        logging.getLogger().handlers[:] = []
        sys.excepthook, threading.excepthook = hooks
    assert [json.loads(line)["message"] for line in stream.getvalue().splitlines()] == ["shown"]
