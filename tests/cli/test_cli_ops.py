"""The operator's commands: `prdigest subscriptions`."""

from __future__ import annotations

import json
from pathlib import Path

from prdigest.storage import Store
from prdigest.storage.subscriptions import save_subscription
from prdigest.subscription import Subscription


def test_subscriptions_lists_the_config_files_and_chats_with_their_ids(
    run_cli, tmp_path: Path, clean_env: Path
) -> None:
    store = Store(clean_env)
    save_subscription(store, Subscription(platform="slack", chat_id="C1", repo="acme/web", created_by="U7"))
    store.close()
    config = tmp_path / "prdigest.toml"
    config.write_text(
        '[[subscriptions]]\nplatform = "console"\nchat_id = "local"\nrepo = "acme/app"\nday = "fri"\n'
    )

    listed = run_cli("subscriptions", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    subs = [json.loads(line) for line in listed.stdout.splitlines()]
    assert {(s["id"], s["repo"], s["platform"], s["created_by"]) for s in subs} == {
        (1, "acme/web", "slack", "U7"),
        (2, "acme/app", "console", "config"),
    }
    table = run_cli("subscriptions", "--config", str(config))
    assert table.returncode == 0 and "acme/app" in table.stdout and "slack:C1" in table.stdout
    assert "fri 09:30 Asia/Shanghai" in table.stdout


def test_no_subscriptions_says_how_to_add_one(run_cli) -> None:
    empty = run_cli("subscriptions")
    assert empty.returncode == 0 and "no subscriptions" in empty.stdout and "subscribe" in empty.stdout


def test_subscriptions_say_which_source_a_delivery_reads(
    run_cli, tmp_path: Path, clean_env: Path, monkeypatch
) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    config = tmp_path / "prdigest.toml"
    config.write_text(
        f'[[repos]]\nname = "acme/app"\ngit = "{clone}"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "local"\nrepo = "acme/app"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "local"\nrepo = "acme/web"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "team"\nrepos = ["acme/app", "acme/web"]\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "org"\nowner = "acme"\n'
    )
    listed = run_cli("subscriptions", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    reads = {s["repo"]: s["reads"] for s in map(json.loads, listed.stdout.splitlines())}
    assert reads == {
        "acme/app": f"git {clone}",
        "acme/web": "cache (no GitHub token)",
        "acme/app,acme/web": f"acme/app: git {clone}; acme/web: cache (no GitHub token)",
        "org:acme": "each repository's own source",
    }
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    table = run_cli("subscriptions", "--config", str(config))
    assert table.returncode == 0, table.stderr
    rows = {
        repo: line
        for line in table.stdout.splitlines()
        for repo in ("acme/app", "acme/web")
        if f" {repo} " in line
    }
    assert "git" in rows["acme/app"] and "github" not in rows["acme/app"]
    assert "github" in rows["acme/web"]


def test_prepare_reads_and_analyses_each_subscribed_repository_and_names_the_one_it_cannot(
    run_cli, tmp_path: Path, clean_env: Path
) -> None:
    from conftest import commit, new_repo

    clone = new_repo(tmp_path / "clone")
    for n, day in ((1, 8), (2, 10)):  # two merges of the week before "now"
        (clone / f"mod{n}.py").write_text(f"x = {n}\n")
        commit(clone, f"feat: module {n} (#{n})", f"2026-09-{day:02d}T10:00:00+00:00")
    config = tmp_path / "prdigest.toml"
    config.write_text(
        f'[[repos]]\nname = "acme/app"\ngit = "{clone}"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "local"\nrepo = "acme/app"\n'
    )
    now = {"PRDIGEST_NOW": "2026-09-12T02:00:00+00:00"}
    done = run_cli("prepare", "--config", str(config), env=now)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "acme/app: 2 PRs ready, 0 analysed by the LLM"
    named = run_cli("prepare", "--config", str(config), "--repo", "acme/app", "--repo", "acme/gone", env=now)
    assert named.returncode == 1  # a repository no source gives: named, the others prepared
    assert named.stdout.splitlines() == [
        "acme/app: 2 PRs ready, 0 analysed by the LLM",
        "acme/gone: not prepared: no source gives acme/gone (a [[repos]] git clone, or a GitHub token)",
    ]
    bad = run_cli("prepare", "--repo", "bad name")
    assert bad.returncode == 2 and "'bad name' is not OWNER/NAME" in bad.stderr


def test_prepare_without_subscriptions_says_so(run_cli) -> None:
    empty = run_cli("prepare")
    assert empty.returncode == 0 and "no repository to prepare" in empty.stdout
