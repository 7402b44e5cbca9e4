"""A direct message sees the repositories of its asker's chats, as the platform says through its real SDK
(Slack users.conversations, Lark's chat member list) against the local fakes; without the permission,
none."""

from __future__ import annotations

import pytest
from conftest import subscribe
from fakes.lark_api import FakeLark, Sent
from fakes.slack_api import FakeSlack, direct_message
from test_bot_lark import ask
from test_bot_lark import fake as fake
from test_bot_lark import running as lark_running
from test_bot_lark import settings_for as lark_settings
from test_bot_slack import answers, new_ts, slack_settings
from test_bot_slack import running as slack_running
from test_bot_slack import svc as svc

from prdigest.bot.membership import Membership
from prdigest.handlers import Services
from prdigest.i18n import texts
from prdigest.storage import Store

pytestmark = pytest.mark.e2e  # the real SDKs against the local Slack and Lark

REPO = "acme-ml/trainer"  # the demo week's
OTHER = "acme-ml/other"  # subscribed in another chat the asker is not in


def test_a_slack_direct_message_sees_the_channels_the_asker_is_in(
    slack: FakeSlack, demo_store: Store, svc: Services
) -> None:
    subscribe(demo_store, "slack", "C0TEAM", REPO)
    subscribe(demo_store, "slack", "C0ELSE", OTHER)
    slack.members = {"C0TEAM": {"U0ALICE", "U0BOB"}, "C0ELSE": {"U0BOB"}, "C0NOSUB": {"U0MALLORY"}}
    with slack_running(slack, svc, "http") as chat:
        svc.settings = slack_settings(slack, "http")  # closed: who sees what is the platform's word
        svc.member_chats = Membership({"slack": chat.bot.member_chats})

        def dm(text: str, user: str) -> str:
            channel, ts = f"D0{user}", new_ts()
            chat.event(direct_message(text, channel=channel, ts=ts, user=user))
            return slack.wait_for(lambda: answers(slack, channel, ts))[0].all_text

        assert "#4107" in dm("top 3", "U0ALICE")  # the one repository of their chats: no name needed
        refused = dm(f"top 3 {OTHER}", "U0ALICE")
        assert refused == texts("en")["access_direct"].format(repo=OTHER)
        assert dm(f"top 3 {REPO}", "U0MALLORY") == texts("en")["access_direct"].format(repo=REPO)
    asked = slack.calls_of("users.conversations")
    assert {c.args["user"] for c in asked} == {"U0ALICE", "U0MALLORY"}
    assert len([c for c in asked if c.args["user"] == "U0ALICE"]) == 1  # remembered for the next message


def test_a_slack_app_without_channels_read_lets_a_direct_message_see_nothing(
    slack: FakeSlack, demo_store: Store, svc: Services
) -> None:
    subscribe(demo_store, "slack", "C0TEAM", REPO)
    slack.members = {"C0TEAM": {"U0ALICE"}}
    slack.scopes = {"chat:write"}
    with slack_running(slack, svc, "http") as chat:
        svc.settings = slack_settings(slack, "http")  # closed: who sees what is the platform's word
        svc.member_chats = Membership({"slack": chat.bot.member_chats})
        ts = new_ts()
        chat.event(direct_message(f"top 3 {REPO}", channel="D0ALICE", ts=ts, user="U0ALICE"))
        text = slack.wait_for(lambda: answers(slack, "D0ALICE", ts))[0].all_text
    assert text == texts("en")["access_unknown"].format(repo=REPO, platform="Slack")


def test_the_slack_channel_list_is_read_page_by_page(slack: FakeSlack) -> None:
    from prdigest.bot.slack.adapter import SlackBot

    slack.members = {f"C{i:04d}": {"U0ALICE"} for i in range(450)}
    bot = SlackBot(slack_settings(slack, "http"), None)
    assert bot.member_chats("U0ALICE", ["C0449", "C0000", "C9999"]) == {"C0449", "C0000"}
    assert len(slack.calls_of("users.conversations")) == 3  # 200 a page


def said(answer: Sent) -> str:
    """A Lark text message's text; a card's content as one string."""
    return str(answer.content.get("text", answer.text))


@pytest.fixture
def lark_store(demo_store: Store) -> Store:
    subscribe(demo_store, "lark", "oc_team", REPO)
    subscribe(demo_store, "lark", "oc_else", OTHER)
    return demo_store


def test_a_lark_direct_message_sees_the_groups_the_asker_is_in(fake: FakeLark, lark_store: Store) -> None:
    fake.members = {"oc_team": ["ou_alice", "ou_bob"], "oc_else": ["ou_bob"]}
    with lark_running("http", fake, lark_store) as rig:
        rig.svc.settings = lark_settings(fake, "http")  # closed: who sees what is the platform's word
        rig.svc.member_chats = Membership({"lark": rig.bot.member_chats})

        def dm(text: str, user: str) -> str:
            answer = ask(rig, text, user=user, chat_id=f"oc_p2p_{user}", chat_type="p2p", mention=None)
            return said(answer)

        assert "#4107" in dm("top 3", "ou_alice")
        assert dm(f"top 3 {OTHER}", "ou_alice") == texts("en")["access_direct"].format(repo=OTHER)
        assert "#4107" in dm(f"top 3 {REPO}", "ou_bob")
        assert dm(f"top 3 {REPO}", "ou_mallory") == texts("en")["access_direct"].format(repo=REPO)
        # In a group with no subscription, nobody but an admin sees the repository.
        group = said(ask(rig, f"top 3 {REPO}", user="ou_alice", chat_id="oc_strangers"))
        assert group == texts("en")["access_chat"].format(repo=REPO)


def test_a_lark_app_without_the_member_scope_lets_a_direct_message_see_nothing(
    fake: FakeLark,
    lark_store: Store,
) -> None:
    fake.members = {"oc_team": ["ou_alice"], "oc_else": []}
    fake.member_scope = False
    with lark_running("http", fake, lark_store) as rig:
        rig.svc.settings = lark_settings(fake, "http")
        rig.svc.member_chats = Membership({"lark": rig.bot.member_chats})
        text = said(
            ask(rig, f"top 3 {REPO}", user="ou_alice", chat_id="oc_p2p", chat_type="p2p", mention=None)
        )
    assert text == texts("en")["access_unknown"].format(repo=REPO, platform="Lark")


def test_the_lark_member_list_is_read_page_by_page(fake: FakeLark) -> None:
    from prdigest.bot.lark.adapter import LarkBot

    fake.members = {"oc_big": [f"ou_{i}" for i in range(250)], "oc_small": ["ou_x"]}
    bot = LarkBot(lark_settings(fake, "http"), None)
    assert bot.member_chats("ou_249", ["oc_big", "oc_small"]) == {"oc_big"}
    assert bot.member_chats("ou_x", ["oc_big", "oc_gone"]) == set()  # a chat the bot left: not the asker's
