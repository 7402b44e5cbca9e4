"""preview: the four weeks a subscription would have posted, in one message; nothing posted or written."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from click.testing import CliRunner
from conftest import commit, demo_services, demo_source, new_repo

from prdigest.cli.ops import preview
from prdigest.config import load_settings
from prdigest.handlers import Context, handle
from prdigest.storage import Store

DEMO = demo_source()


def _rows(store: Store) -> dict[str, int]:
    with store.reading() as tx:
        return {t: tx.count(t) for t in ("subscriptions", "deliveries", "reports")}


def test_preview_replies_with_four_weeks_and_writes_nothing(demo_store: Store) -> None:
    before = _rows(demo_store)
    anyone = Context(platform="slack", chat_id="C9", user_id="U-not-an-admin")
    reply = handle(f"preview {DEMO.repo}", anyone, demo_services(load_settings(env={}), demo_store))
    assert reply.kind == "text" and reply.repo == DEMO.repo
    weeks = [line for line in reply.text.splitlines() if line.startswith("- 2026-W")]
    assert [w.split(":")[0] for w in weeks] == ["- 2026-W34", "- 2026-W35", "- 2026-W36", "- 2026-W37"]
    assert "30 merged" in weeks[-1] and "high risk" in weeks[-1]
    assert all("quiet week" in w and "0 merged" in w for w in weeks[:3])  # the cache holds only the demo week
    assert "The latest week, 2026-W37" in reply.text
    assert _rows(demo_store) == before == {"subscriptions": 0, "deliveries": 0, "reports": 0}


def test_preview_in_chinese_and_without_a_repository(demo_store: Store) -> None:
    svc = demo_services(load_settings(env={}), demo_store)
    ctx = Context(platform="lark", chat_id="oc_1", user_id="ou_1")
    zh = handle(f"预览 {DEMO.repo}", ctx, svc)
    assert zh.lang == "zh" and "2026-W37：合并 30 个" in zh.text and "平静的一周" in zh.text
    assert "预览 owner/name" in handle("预览", ctx, svc).text


def test_the_cli_previews_a_clone(tmp_path: Path, now: datetime) -> None:
    clone = new_repo(tmp_path / "clone")
    # Oldest first, as a real history is: a parent younger than its child would end git's --since walk.
    for days, title in ((16, "feat: a parser (#1)"), (9, "fix: the parser's edge case (#2)")):
        (clone / f"f{days}.py").write_text("x = 1\n")
        commit(clone, title, (now - timedelta(days=days)).isoformat())
    db = tmp_path / "preview.db"
    result = CliRunner().invoke(preview, ["acme/tool", "--git", str(clone), "--db", str(db), "--lang", "en"])
    assert result.exit_code == 0, result.output
    weeks = [line for line in result.output.splitlines() if line.startswith("- ")][:4]
    assert len(weeks) == 4 and sum("1 merged" in w for w in weeks) == 2
    store = Store(db)
    try:
        assert _rows(store) == {"subscriptions": 0, "deliveries": 0, "reports": 0}
    finally:
        store.close()
    # As on another day: the four weeks before it (a week label names each).
    args = ["acme/tool", "--git", str(clone), "--db", str(db), "--lang", "en", "--today", "2026-09-16"]
    dated = CliRunner().invoke(preview, args)
    labels = [line.split(":")[0] for line in dated.output.splitlines() if line.startswith("- ")][:4]
    assert dated.exit_code == 0 and labels == ["- 2026-W34", "- 2026-W35", "- 2026-W36", "- 2026-W37"]
    wrong = CliRunner().invoke(preview, [*args[:-1], "2026-13-01"])
    assert wrong.exit_code != 0 and "2026-13-01" in str(wrong.exception)
    bad = CliRunner().invoke(preview, ["not-a-repo", "--db", str(db)])
    assert bad.exit_code != 0 and "OWNER/NAME" in str(bad.exception)  # the cli's group prints it
