"""The command line: clean stdout, one-line errors, no chat SDK loaded for a report."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import commit, new_repo

from prdigest import __version__
from prdigest.bot.delivery import delivery_key
from prdigest.models import Window
from prdigest.storage import Store
from prdigest.storage.deliveries import claim
from prdigest.storage.subscriptions import get_subscription


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    path = new_repo(tmp_path / "repo")
    (path / "a.py").write_text("x = 1\n")
    commit(path, "feat: first (#1)", "2026-09-08T10:00:00+08:00", name="Ann", email="a@x")
    (path / "a.py").write_text("x = 2\n")
    commit(path, "fix: second (#2)", "2026-09-09T10:00:00+08:00", name="Ben", email="b@x")
    return path


def test_version(run_cli) -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"prdigest, version {__version__}"


def test_report_json_and_markdown(clone: Path, run_cli, tmp_path: Path) -> None:
    result = run_cli("report", "--git", str(clone), "--week", "2026-W37", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [p["number"] for p in report["prs"]] == [1, 2]
    assert report["stats"]["authors"] == {"Ann": 1, "Ben": 1}

    out = tmp_path / "week.md"
    result = run_cli("report", "--git", str(clone), "--week", "2026-W37", "--lang", "en", "--out", str(out))
    assert result.returncode == 0 and result.stdout == ""
    text = out.read_text()
    assert text.startswith("# local/repo weekly report · 2026 week 37 (09-07 to 09-13)")
    assert "- Merged PRs: 2 · Key PRs: 0" in text
    assert "Engine: rules 2; source: git" in text

    zh = run_cli("report", "--git", str(clone), "--week", "2026-W37")
    assert "合入 PR: 2" in zh.stdout


def test_report_from_the_cache_after_a_git_read(clone: Path, run_cli, clean_env: Path) -> None:
    assert run_cli("report", "--git", str(clone), "--repo", "acme/app", "--week", "2026-W37").returncode == 0
    cached = run_cli(
        "report", "--repo", "acme/app", "--since", "2026-09-09", "--until", "2026-09-09", "--format", "json"
    )
    assert cached.returncode == 0, cached.stderr
    assert [p["number"] for p in json.loads(cached.stdout)["prs"]] == [2]
    assert clean_env.exists()  # PRDIGEST_DB from the environment


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--git", "{tmp}", "--week", "2026-W37"], "is not a git repository"),
        (
            ["--git", "{clone}", "--since", "2026-02-30", "--until", "2026-03-01"],
            "bad --since date '2026-02-30'",
        ),
        (["--git", "{clone}", "--week", "2026-W37", "--tz", "Mars/Base"], "unknown timezone 'Mars/Base'"),
        (["--git", "{clone}", "--week", "2026-W37", "--db", "{tmp}/junk.db"], "cannot open the database"),
        (["--git", "{clone}", "--week", "2026-W37", "--config", "{tmp}/bad.toml"], "bad.toml: invalid TOML"),
        (["--repo", "nobody/here", "--week", "2026-W37"], "the cache holds no PRs of nobody/here"),
        (["--git", "{clone}", "--fixture", "{tmp}/f.json", "--week", "2026-W37"], "choose one source"),
        (["--git", "{clone}"], "choose the period"),
        (["--week", "2026-W37"], "name a source"),
    ],
)
def test_errors_are_one_clear_line(
    args: list[str], message: str, clone: Path, tmp_path: Path, run_cli
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "junk.db").write_bytes(b"not a database" * 200)
    (empty / "bad.toml").write_text("[report\n")
    args = [a.format(tmp=empty, clone=clone) for a in args]
    result = run_cli("report", *args)
    assert result.returncode != 0
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]


def test_report_loads_no_chat_or_llm_sdk(clone: Path, tmp_path: Path) -> None:
    code = f"""
import sys
from prdigest.cli.commands import cli
try:
    cli(["report", "--git", {str(clone)!r}, "--week", "2026-W37", "--format", "json",
         "--out", {str(tmp_path / "r.json")!r}])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
loaded = sorted(m for m in ("lark_oapi", "slack_bolt", "slack_sdk", "openai", "github", "apscheduler")
                if m in sys.modules)
print(",".join(loaded) or "none")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "none"
    assert json.loads((tmp_path / "r.json").read_text())["stats"]["merged_prs"] == 2


def test_report_as_page_and_platform_payloads(run_cli) -> None:
    from prdigest.sources.fixture import demo_fixture_path

    base = ["report", "--fixture", str(demo_fixture_path()), "--week", "2026-W37", "--lang", "en"]
    page = run_cli(*base, "--format", "html")
    assert (
        page.returncode == 0 and page.stdout.startswith("<!doctype html>") and 'id="pr-4124"' in page.stdout
    )
    cards = json.loads(run_cli(*base, "--format", "lark").stdout)
    assert len(cards) >= 2 and all(card["schema"] == "2.0" for card in cards)  # the card, then its thread
    assert "acme-ml/trainer" in cards[0]["header"]["title"]["content"] and "#4124" in json.dumps(cards[1:])
    messages = json.loads(run_cli(*base, "--format", "slack").stdout)
    assert len(messages) >= 2 and messages[0]["blocks"][0]["type"] == "header"
    assert all(len(m["blocks"]) <= 50 for m in messages) and "#4124" in json.dumps(messages[1:])


def test_deliver_exits_75_while_another_worker_holds_the_week(
    run_cli, tmp_path: Path, clean_env: Path
) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text('[[subscriptions]]\nplatform = "console"\nchat_id = "local"\nrepo = "acme/app"\n')
    # A first run saves the subscription from the config (the cache holds no PRs: it fails, not busy).
    first = run_cli("deliver", "--config", str(config), "--subscription", "1", "--week", "2026-W37")
    assert first.returncode not in (0, 75)
    store = Store(clean_env)
    sub = get_subscription(store, 1)
    assert sub is not None
    key = delivery_key(sub, Window.iso_week(2026, 38, sub.tz))
    claim(store, key, 1, "2026-W38", "another-host:1", timedelta(minutes=15))
    store.close()
    busy = run_cli("deliver", "--config", str(config), "--subscription", "1", "--week", "2026-W38")
    assert busy.returncode == 75, busy.stderr
    assert "busy" in busy.stdout and "another worker is delivering this week until" in busy.stderr
