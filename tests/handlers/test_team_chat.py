"""Team subscriptions from chat and the config file: `subscribe owner/a owner/b`, `subscribe org:owner`,
unsubscribe by the same words, and `report` in a team's chat answering the team digest."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import demo_services
from test_team_digest import NOW, REPOS, build_clone, team_settings

from prdigest.config import check_settings, load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import list_subscriptions

USER = Context(platform="lark", chat_id="oc_team", user_id="ou_user")
ADMIN = Context(platform="lark", chat_id="oc_team", user_id="ou_admin")
ADMINS = '\n[admins]\nlark = ["ou_admin"]\n'


@pytest.fixture
def svc(demo_store: Store, tmp_path: Path) -> Services:
    """A chat whose config file lists one repository of owner "o" (no clone: read from the cache)."""
    config = tmp_path / "prdigest.toml"
    config.write_text('[[repos]]\nname = "o/a"\n' + ADMINS)
    return demo_services(load_settings(config, env={}), demo_store)


def test_an_admin_subscribes_the_chat_to_a_team_and_unsubscribes_it(svc: Services) -> None:
    refused = handle("subscribe o/a o/b o/c", USER, svc)
    assert refused.kind == "refusal" and list_subscriptions(svc.store) == []

    saved = handle("subscribe o/a o/b o/c fri 17:00 en", ADMIN, svc)
    assert saved.kind == "subscriptions" and "o/a, o/b, o/c (one digest)" in saved.text
    (sub,) = list_subscriptions(svc.store, "lark", "oc_team")
    assert (sub.repo, sub.repos, sub.is_team, sub.day, sub.time) == (
        "o/a,o/b,o/c", ["o/a", "o/b", "o/c"], True, "fri", "17:00",
    )  # fmt: skip
    assert "o/a, o/b, o/c (one digest): every Friday at 17:00" in handle("subscriptions", USER, svc).text
    again = handle("subscribe o/a o/b o/c fri 17:00 en", ADMIN, svc)  # the same team: updated, not doubled
    assert again.kind == "subscriptions" and len(list_subscriptions(svc.store)) == 1

    assert handle("unsubscribe o/a o/b o/c", USER, svc).kind == "refusal"
    assert "Unsubscribed from o/a, o/b, o/c" in handle("unsubscribe o/c o/a o/b", ADMIN, svc).text
    assert list_subscriptions(svc.store) == []


def test_an_admin_subscribes_the_chat_to_every_repository_of_an_owner(svc: Services) -> None:
    assert handle("subscribe org:o", USER, svc).kind == "refusal"
    saved = handle("订阅 org:o 周一 10:00", ADMIN, svc)
    assert saved.kind == "subscriptions" and "o 的所有仓库" in saved.text
    (sub,) = list_subscriptions(svc.store, "lark", "oc_team")
    assert (sub.repo, sub.owner, sub.time, sub.lang) == ("org:o", "o", "10:00", "zh")
    assert "every repository of o" in handle("subscriptions", USER, svc).text
    # An owner no repository is known of (none configured, no token to list them) is refused now.
    unknown = handle("subscribe org:nobody", ADMIN, svc)
    assert "No repository of nobody is known" in unknown.text and len(list_subscriptions(svc.store)) == 1
    assert "Unsubscribed from every repository of o" in handle("unsubscribe org:o", ADMIN, svc).text
    assert list_subscriptions(svc.store) == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("subscribe o/a o/a/b", "'o/a/b' is not a repository"),
        ("subscribe https://github.com/o/a", "is not a repository"),
        ("subscribe o/a O/A", "O/A is named twice"),
        ("subscribe o/a org:o", "not both"),
        ("subscribe org:a/b", "'org:a/b' is not a repository"),
        ("订阅 o/a o/a", "o/a 写了两次"),
    ],
)
def test_a_bad_or_repeated_repository_gets_a_clear_reply_and_saves_nothing(
    svc: Services, text: str, fragment: str
) -> None:
    reply = handle(text, ADMIN, svc)
    assert reply.kind == "error" and fragment in reply.text
    assert list_subscriptions(svc.store) == []


def test_report_in_a_team_chat_answers_the_team_digest(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("team-chat")
    clones = {
        name: build_clone(root / name.split("/")[1], size)
        for name, size in zip(REPOS, (4, 7, 2), strict=True)
    }
    settings = team_settings(tmp_path, clones, ADMINS)
    store = Store(tmp_path / "chat.db")
    svc = Services(settings=settings, store=store, source_for=source_factory(settings), clock=lambda: NOW)
    handle("subscribe acme/api acme/web acme/ops en", ADMIN, svc)

    reply = handle("report", USER, svc)
    assert reply.kind == "report" and reply.report is not None
    assert [p.repo for p in reply.report.parts] == list(REPOS) and reply.report.stats.merged_prs == 25
    assert str(reply.report.window.since) == "2026-09-07"  # the last complete week, in the team's timezone
    assert reply.report.id is not None and store.get_report(reply.report.id) is not None
    # A one-repository command names one of the team's, else is told to.
    which = handle("risks", USER, svc)
    assert which.kind == "text" and "name one repository, e.g. `risks acme/api`" in which.text
    one = handle("top acme/web", USER, svc)
    assert one.kind == "prs" and one.repo == "acme/web"
    handle("subscribe acme/api", ADMIN, svc)  # one repository's report beside the team's
    assert handle("report", USER, svc).report.parts != []  # the chat's one team digest
    assert handle("report acme/api", USER, svc).report.parts == []
    store.close()


def test_a_config_file_with_team_subscriptions_loads_and_is_checked(tmp_path: Path) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(
        '[[repos]]\nname = "o/a"\ngit = "."\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "c"\nrepos = ["o/a", "o/b"]\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "c"\nowner = "o"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "c"\nowner = "p"\n\n'
        '[[subscriptions]]\nplatform = "console"\nchat_id = "c"\nrepos = ["o/a", "O/A", "bad"]\n'
    )
    settings = load_settings(config, env={})
    team, owner, other, odd = settings.subscriptions
    assert (team.repo, team.is_team, owner.repo, owner.owner) == ("o/a,o/b", True, "org:o", "o")
    assert (other.repo, odd.repos) == ("org:p", ["o/a", "O/A", "bad"])
    assert check_settings(settings) == [
        "subscriptions.0: o/b is read from GitHub, but no GitHub token is set",
        "subscriptions.2: no repository of p is in [[repos]], and no GitHub token is set to list them",
        "subscriptions.3: O/A is named twice",
        "subscriptions.3: 'bad' is not OWNER/NAME",
    ]
    with_token = load_settings(config, env={"GITHUB_TOKEN": "ghp_x"})
    assert check_settings(with_token) == [
        "subscriptions.3: O/A is named twice",
        "subscriptions.3: 'bad' is not OWNER/NAME",
    ]
