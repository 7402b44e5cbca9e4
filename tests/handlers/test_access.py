"""Who sees which repository in chat: a chat its subscriptions', a direct message its asker's chats',
an admin every one; everything else refused in the asker's language before anything is read."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes.github_api import TOKEN, FakeGitHub, FakeRepo

from prdigest.bot.pages import page_link, report_pages
from prdigest.config import load_settings
from prdigest.errors import ConfigError
from prdigest.handlers import Context, Services, handle
from prdigest.handlers.access import covers
from prdigest.i18n import texts
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import delete_subscription, save_subscription
from prdigest.subscription import Subscription

TEAM_REPO = "acme/rocket"  # the one the Slack channel subscribes to
OTHER = "acme/engine"  # subscribed by a Lark group only
PRIVATE = "secret/vault"  # no chat subscribes to it
MONDAY = datetime(2026, 9, 14, 9, tzinfo=UTC)
MERGED = datetime(2026, 9, 9, 12, tzinfo=UTC)
ADMIN = "U0ADMIN"
CHANNEL = Context(platform="slack", chat_id="C0TEAM", user_id="U0ALICE")
LARK_GROUP = Context(platform="lark", chat_id="oc_engine", user_id="ou_bob")
STRANGERS = Context(platform="lark", chat_id="oc_strangers", user_id="ou_eve")  # no subscription
MEMBERS = {"C0TEAM": {"U0ALICE"}}  # Slack channel -> its members


class Members:
    """The platform's word on who is in which chat, counting what it was asked."""

    def __init__(self, known: dict[str, set[str]] | None) -> None:
        self.known = known  # None: the app lacks the permission
        self.asked: list[tuple[str, str]] = []

    def __call__(self, platform: str, user: str, chats: Collection[str]) -> set[str] | None:
        self.asked.append((platform, user))
        if self.known is None:
            return None
        return {c for c in chats if user in self.known.get(c, set())}


def fake_github(fake: FakeGitHub) -> None:
    for name in (TEAM_REPO, OTHER, PRIVATE):
        repo = fake.add_repo(FakeRepo(name, private=name == PRIVATE))
        repo.add(7, title=f"Seven of {name}", body=f"the body of {name}", merged_at=MERGED)


def services(
    fake: FakeGitHub,
    tmp_path: Path,
    extra: str = "",
    members: Members | None = None,
    env: dict[str, str] | None = None,
) -> Services:
    config = tmp_path / "prdigest.toml"
    config.write_text(f'[report]\ntimezone = "UTC"\nlanguage = "en"\n[admins]\nslack = ["{ADMIN}"]\n{extra}')
    settings = load_settings(
        config, env={"GITHUB_TOKEN": TOKEN, "PRDIGEST_GITHUB_URL": fake.url, **(env or {})}
    )
    store = Store(tmp_path / "cache.db")
    save_subscription(store, Subscription(platform="slack", chat_id="C0TEAM", repo=TEAM_REPO, tz="UTC"))
    save_subscription(store, Subscription(platform="lark", chat_id="oc_engine", repo=OTHER, tz="UTC"))
    return Services(
        settings=settings, store=store, source_for=source_factory(settings), clock=lambda: MONDAY,
        member_chats=members or Members(MEMBERS),
    )  # fmt: skip


def source_for(settings):
    from prdigest.sources.registry import source_factory

    return source_factory(settings)


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        fake_github(fake)
        yield fake


def dm(user: str, chat: str = "D0ALICE") -> Context:
    return Context(platform="slack", chat_id=chat, user_id=user, direct=True)


def refused(reply, key: str, repo: str, lang: str = "en", **kw: str) -> bool:
    return reply.kind == "refusal" and reply.text == texts(lang)[key].format(repo=repo, **kw)


@pytest.mark.parametrize("message", [f"risks {TEAM_REPO}", f"explain #7 {TEAM_REPO}", f"top {TEAM_REPO}"])
def test_a_chat_subscribed_to_another_repository_is_refused_and_nothing_is_read(
    github: FakeGitHub, tmp_path: Path, message: str
) -> None:
    svc = services(github, tmp_path)
    reply = handle(message, LARK_GROUP, svc)
    assert refused(reply, "access_chat", TEAM_REPO)
    assert github.requests == 0  # not a byte of the other team's repository was read
    assert svc.store.count_prs(TEAM_REPO) == 0


def test_the_same_command_in_the_subscribing_chat_is_answered(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path)
    reply = handle(f"explain #7 {TEAM_REPO}", CHANNEL, svc)
    assert reply.kind == "explain" and f"Seven of {TEAM_REPO}" in reply.text
    assert handle("risks", CHANNEL, svc).kind != "refusal"  # its only subscription, unnamed


def test_a_chat_with_no_subscription_sees_nothing_in_its_language(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path)
    assert refused(handle(f"risks {OTHER}", STRANGERS, svc), "access_chat", OTHER)
    assert refused(handle(f"风险 {OTHER}", STRANGERS, svc), "access_chat", OTHER, lang="zh")
    assert handle("risks", STRANGERS, svc).text == texts("en")["no_repo"]  # nothing to default to
    assert github.requests == 0


def test_a_direct_message_sees_the_repositories_of_the_askers_chats(
    github: FakeGitHub, tmp_path: Path
) -> None:
    members = Members(MEMBERS)
    svc = services(github, tmp_path, members=members)
    reply = handle(f"explain #7 {TEAM_REPO}", dm("U0ALICE"), svc)
    assert reply.kind == "explain"
    # Their one visible repository needs no name.
    assert handle("explain #7", dm("U0ALICE"), svc).title == reply.title
    assert refused(handle(f"explain #7 {OTHER}", dm("U0ALICE"), svc), "access_direct", OTHER)
    assert ("slack", "U0ALICE") in members.asked
    # The Lark group is another platform's: a Slack DM never sees it, whoever is in it.
    assert all(platform == "slack" for platform, _ in members.asked)


def test_a_direct_message_of_someone_in_no_subscribed_chat_is_refused(
    github: FakeGitHub, tmp_path: Path
) -> None:
    svc = services(github, tmp_path)
    assert refused(
        handle(f"risks {TEAM_REPO}", dm("U0MALLORY", "D0MALLORY"), svc), "access_direct", TEAM_REPO
    )
    assert github.requests == 0


def test_without_the_platforms_word_a_direct_message_sees_nothing(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path, members=Members(None))
    reply = handle(f"risks {TEAM_REPO}", dm("U0ALICE"), svc)
    assert refused(reply, "access_unknown", TEAM_REPO, platform="Slack")
    assert github.requests == 0


def test_a_private_repository_is_never_read_for_a_non_admin(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path)
    for ctx in (dm("U0ALICE"), CHANNEL, STRANGERS):
        reply = handle(f"explain #7 {PRIVATE}", ctx, svc)
        assert reply.kind == "refusal" and "the body of" not in reply.text
    assert github.requests == 0 and svc.store.count_prs(PRIVATE) == 0
    # An admin reads it, with the bot's token.
    reply = handle(f"explain #7 {PRIVATE}", dm(ADMIN, "D0ADMIN"), svc)
    assert reply.kind == "explain" and f"the body of {PRIVATE}" in reply.text


def test_an_admin_sees_every_repository_anywhere(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path)
    admin_here = CHANNEL.model_copy(update={"user_id": ADMIN})
    assert handle(f"explain #7 {OTHER}", admin_here, svc).kind == "explain"
    preview = handle(f"preview {PRIVATE}", admin_here, svc)
    assert preview.kind == "text" and PRIVATE in preview.text


def test_preview_of_an_unsubscribed_repository_is_an_admin_command(
    github: FakeGitHub, tmp_path: Path
) -> None:
    svc = services(github, tmp_path)
    reply = handle(f"preview {PRIVATE}", CHANNEL, svc)
    assert reply.kind == "refusal" and reply.text == texts("en")["access_preview"].format(repo=PRIVATE)
    assert github.requests == 0
    assert handle(f"preview {TEAM_REPO}", CHANNEL, svc).kind == "text"  # its own: anyone may look


def test_open_access_restores_every_chat_seeing_every_repository(github: FakeGitHub, tmp_path: Path) -> None:
    svc = services(github, tmp_path, "[access]\nopen = true\n")
    assert handle(f"explain #7 {TEAM_REPO}", STRANGERS, svc).kind == "explain"
    assert handle(f"preview {PRIVATE}", STRANGERS, svc).kind == "text"


def test_a_team_subscription_covers_its_repositories_and_an_owners_every_one() -> None:
    team = Subscription(platform="slack", chat_id="C", repos=["acme/a", "acme/b"])
    owner = Subscription(platform="slack", chat_id="C", owner="Acme")
    assert covers(team, "acme/a") and covers(team, team.repo) and not covers(team, "acme/c")
    assert covers(owner, "acme/anything") and covers(owner, "ACME/x") and covers(owner, "org:Acme")
    assert not covers(owner, "acmecorp/x") and not covers(owner, "other/acme")


def test_a_page_opens_only_for_a_chat_that_sees_its_repository(github: FakeGitHub, tmp_path: Path) -> None:
    extra = "[web]\npage_access = 'signed'\n"
    svc = services(github, tmp_path, extra, env={"PRDIGEST_WEB_SIGNING_KEY": "a-key-for-tests"})
    settings = svc.settings.model_copy(update={"public_url": "https://prdigest.example.com"})
    reply = handle(f"report {TEAM_REPO}", CHANNEL, svc)  # saved: a page to link to
    assert reply.report is not None and reply.report.id is not None
    report_id = reply.report.id
    app = report_pages(svc.store, settings)

    def status(link: str | None) -> str:
        assert link is not None
        path, _, query = link.removeprefix("https://prdigest.example.com").partition("?")
        seen: list[str] = []
        environ = {"PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": "GET"}
        b"".join(app(environ, lambda status, headers: seen.append(status)))
        return seen[0]

    own = page_link(settings, svc.store, report_id, "C0TEAM")
    assert status(own).startswith("200")
    # A link signed for a chat that does not subscribe to the report's repository.
    assert status(page_link(settings, svc.store, report_id, "oc_engine")).startswith("403")
    # Granted to its asker (an admin's answer, a direct message): the link alone opens it.
    assert status(page_link(settings, svc.store, report_id, "D0ADMIN", "asker")).startswith("200")
    # The chat unsubscribes: its link closes.
    assert delete_subscription(svc.store, "slack", "C0TEAM", TEAM_REPO)
    assert status(own).startswith("403")


def test_an_answer_outside_the_chats_subscriptions_is_granted_to_its_asker(
    github: FakeGitHub, tmp_path: Path
) -> None:
    svc = services(github, tmp_path)
    assert handle(f"report {TEAM_REPO}", CHANNEL, svc).page_viewer == "chat"
    admin_elsewhere = LARK_GROUP.model_copy(update={"user_id": ADMIN, "platform": "slack"})
    # No public URL, no page to link: the answer is not checked against the chat's subscriptions.
    assert handle(f"report {TEAM_REPO}", admin_elsewhere, svc).page_viewer == "chat"
    svc.settings = svc.settings.model_copy(update={"public_url": "https://prdigest.example.com"})
    assert handle(f"report {TEAM_REPO}", admin_elsewhere, svc).page_viewer == "asker"


@pytest.mark.parametrize("value", ['"maybe"', "2", "[]"])
def test_a_bad_access_setting_is_named(tmp_path: Path, value: str) -> None:
    config = tmp_path / "prdigest.toml"
    config.write_text(f"[access]\nopen = {value}\n")
    with pytest.raises(ConfigError, match=r"access\.open"):
        load_settings(config, env={})
