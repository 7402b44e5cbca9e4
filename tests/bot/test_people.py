"""GitHub logins as chat users: the [[people]] id first, else the platform's user found by email through
the real slack_sdk and lark-oapi clients against the local fakes (kept a day in the cache), else a
plain name; a missing permission said once, any failure never failing the report, and no id that is
not one ever reaching a mention."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fakes.lark_api import FakeLark
from fakes.slack_api import FakeSlack

from prdigest.bot import people
from prdigest.bot.adapters import ChatAdapter, LookupDenied
from prdigest.bot.lark.adapter import LarkBot
from prdigest.bot.lark.contact import BATCH_GET_ID, _batch_get_id
from prdigest.bot.people import mentions
from prdigest.bot.slack.adapter import SlackBot
from prdigest.config import Settings, check_settings, load_settings
from prdigest.config.models import PersonSettings
from prdigest.storage import Store
from prdigest.storage.chat_users import looked_up, remember

NOW = datetime(2026, 9, 14, 1, 30, tzinfo=UTC)
PEOPLE = """\
[[people]]
github = "jdoe"
email = "jane@acme.example"
slack = "U0JDOE"
lark = "ou_jdoe01"

[[people]]
github = "mlee"
email = ["m.lee@old.example", "mlee@acme.example"]

[[people]]
github = "ghost"
email = "ghost@acme.example"
"""


@dataclass
class Chat:
    """One platform's adapter over its fake, and what the test needs of the fake."""

    name: str
    adapter: ChatAdapter
    settings: Settings
    add_user: Callable[[str, str], None]  # email, the id the platform answers
    requests: Callable[[], int]  # look-ups by email that reached the platform
    deny: Callable[[], None]  # the app loses the permission to look users up by email
    fail: Callable[[], None]  # the next look-up fails for another reason
    ids: dict[str, str]  # a user id per person the test names


def _settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    path = tmp_path / "prdigest.toml"
    path.write_text(PEOPLE)
    return load_settings(path, env=env)


@pytest.fixture(params=["slack", "lark"])
def chat(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Chat]:
    if request.param == "slack":
        with FakeSlack() as slack:
            env = {"PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token, "PRDIGEST_SLACK_API_URL": slack.url}
            settings = _settings(tmp_path, env)
            yield Chat(
                "slack", SlackBot(settings, None), settings, slack.users.__setitem__,
                lambda: len(slack.calls_of("users.lookupByEmail")),
                lambda: slack.scopes.discard("users:read.email"),
                lambda: slack.fail("users.lookupByEmail", "internal_error"),
                {"jdoe": "U0JDOE", "mlee": "U0MLEE", "owner": "W0OWNER"},
            )  # fmt: skip
    else:
        with FakeLark() as lark:
            settings = _settings(tmp_path, lark.env())

            def deny() -> None:
                lark.contact_scope = False

            yield Chat(
                "lark", LarkBot(settings, None), settings, lark.users.__setitem__,
                lambda: len(lark.lookups), deny,
                lambda: lark.fail_next("batch_get_id", 99992402, "field validation failed"),
                {"jdoe": "ou_jdoe01", "mlee": "ou_mlee02", "owner": "ou_owner03"},
            )  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_denials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a new process as far as the permission's warning goes."""
    monkeypatch.setattr(people, "_DENIALS", people._Denials())


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "prdigest.people"]


def test_the_configured_id_first_then_the_user_of_an_email_else_a_plain_name(
    chat: Chat, store: Store
) -> None:
    chat.add_user("MLee@acme.example", chat.ids["mlee"])  # the second of mlee's emails; any capitals
    chat.add_user("owner@acme.example", chat.ids["owner"])
    logins = ["JDoe", "mlee", "ghost", "stranger", "acme/reviewers", "owner@acme.example", "jdoe"]
    found = mentions(chat.settings, store, chat.adapter, chat.name, logins, NOW)
    mention = chat.adapter.mention
    assert found == {
        "JDoe": mention(chat.ids["jdoe"]),  # logins in any capitals: the configured id, nothing asked
        "jdoe": mention(chat.ids["jdoe"]),
        "mlee": mention(chat.ids["mlee"]),
        "owner@acme.example": mention(chat.ids["owner"]),  # a CODEOWNERS email, looked up as it is
    }  # ghost (no such user), stranger (no [[people]] entry, no email) and the team stay plain
    assert found["mlee"] == ("<@U0MLEE>" if chat.name == "slack" else '<at user_id="ou_mlee02"></at>')
    # mlee's two emails, ghost's and the owner's; never jdoe's (configured), a stranger's or a team's.
    assert chat.requests() == 4


def test_an_owners_email_of_a_configured_person_uses_the_configured_id(chat: Chat, store: Store) -> None:
    found = mentions(chat.settings, store, chat.adapter, chat.name, ["JANE@acme.example"], NOW)
    assert found == {"JANE@acme.example": chat.adapter.mention(chat.ids["jdoe"])}
    assert chat.requests() == 0


def test_answers_are_kept_a_day_then_asked_again(chat: Chat, store: Store) -> None:
    chat.add_user("mlee@acme.example", chat.ids["mlee"])
    first = mentions(chat.settings, store, chat.adapter, chat.name, ["mlee", "ghost"], NOW)
    assert first == {"mlee": chat.adapter.mention(chat.ids["mlee"])}
    asked = chat.requests()
    assert asked == 3  # m.lee@old (none), mlee@acme (found), ghost (none)
    assert looked_up(store, chat.name, "GHOST@acme.example", NOW) is not None  # "no such user" is kept too
    within = NOW + timedelta(hours=23, minutes=59)
    assert mentions(chat.settings, store, chat.adapter, chat.name, ["mlee", "ghost"], within) == first
    assert chat.requests() == asked  # from the cache: no request
    chat.add_user("ghost@acme.example", chat.ids["owner"])  # ghost joins the chat
    later = NOW + timedelta(days=1)
    again = mentions(chat.settings, store, chat.adapter, chat.name, ["mlee", "ghost"], later)
    assert again == {"mlee": first["mlee"], "ghost": chat.adapter.mention(chat.ids["owner"])}
    assert chat.requests() == asked + 3


def test_a_missing_permission_is_said_once_and_names_stay_plain(
    chat: Chat, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    chat.add_user("mlee@acme.example", chat.ids["mlee"])
    chat.deny()
    with pytest.raises(LookupDenied, match="users:read.email" if chat.name == "slack" else "contact:user.id"):
        chat.adapter.user_by_email("mlee@acme.example")
    caplog.clear()
    logins = ["jdoe", "mlee", "ghost"]
    for hours in (0, 1, 2):  # three reports
        found = mentions(chat.settings, store, chat.adapter, chat.name, logins, NOW + timedelta(hours=hours))
        assert found == {"jdoe": chat.adapter.mention(chat.ids["jdoe"])}  # configured ids still work
    assert chat.requests() == 2  # the direct call above, then the first report's first look-up only
    (line,) = said(caplog)
    assert "find users by email" in line and "stay plain" in line
    assert all(r.name != "prdigest.lark" for r in caplog.records)  # the client did not say it again
    assert looked_up(store, chat.name, "m.lee@old.example", NOW) is None  # a refusal is not an answer
    # A day later it is asked again (the permission may have been granted), and not said again.
    mentions(chat.settings, store, chat.adapter, chat.name, logins, NOW + timedelta(days=1))
    assert chat.requests() == 3 and len(said(caplog)) == 1


def test_any_other_failure_is_a_warning_the_report_goes_on_and_nothing_is_kept(
    chat: Chat, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    chat.add_user("mlee@acme.example", chat.ids["mlee"])
    chat.fail()
    found = mentions(chat.settings, store, chat.adapter, chat.name, ["mlee", "ghost", "jdoe"], NOW)
    assert found == {"jdoe": chat.adapter.mention(chat.ids["jdoe"])}
    assert chat.requests() == 1  # the rest of this report is not held up by a failing API
    (line,) = said(caplog)
    assert "could not find a user by email" in line
    assert looked_up(store, chat.name, "m.lee@old.example", NOW) is None
    # The next report asks again, and finds them.
    found = mentions(chat.settings, store, chat.adapter, chat.name, ["mlee"], NOW + timedelta(minutes=5))
    assert found == {"mlee": chat.adapter.mention(chat.ids["mlee"])}


HOSTILE = {
    "slack": ["U1> <!channel", "all", "C0CHANNEL", "u0lower"],
    "lark": ["all", 'ou_1"></at><at user_id="all'],
}


def test_an_id_that_is_not_one_never_reaches_a_mention(
    chat: Chat, store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    for n, bad in enumerate(HOSTILE[chat.name]):
        chat.add_user(f"evil{n}@acme.example", bad)
    evil = [f"evil{n}@acme.example" for n in range(len(HOSTILE[chat.name]))]
    assert mentions(chat.settings, store, chat.adapter, chat.name, evil, NOW) == {}
    assert len(said(caplog)) == len(evil) and all("not one" in line for line in said(caplog))
    assert all(looked_up(store, chat.name, email, NOW) is None for email in evil)  # not kept
    # One in the cache (written by an older version, or by hand) is not used either: it is asked again.
    remember(store, chat.name, "mlee@acme.example", HOSTILE[chat.name][0], NOW)
    chat.add_user("mlee@acme.example", chat.ids["mlee"])
    found = mentions(chat.settings, store, chat.adapter, chat.name, ["mlee"], NOW)
    assert found == {"mlee": chat.adapter.mention(chat.ids["mlee"])}
    # One in settings made without validation is not used; in a config file it is no entry at all.
    sneaky = PersonSettings.model_construct(github="eve", email=[], slack=HOSTILE["slack"][0], lark="all")
    settings = chat.settings.model_copy(update={"people": [*chat.settings.people, sneaky]})
    assert mentions(settings, store, chat.adapter, chat.name, ["eve"], NOW) == {}


def test_a_hostile_id_in_the_config_file_skips_the_entry(
    tmp_path: Path, store: Store, slack: FakeSlack
) -> None:
    path = tmp_path / "hostile.toml"
    path.write_text(
        f'{PEOPLE}\n[[people]]\ngithub = "eve"\nemail = "eve@acme.example"\nslack = "U1> <!channel"\n'
    )
    settings = load_settings(
        path, env={"PRDIGEST_SLACK_BOT_TOKEN": slack.bot_token, "PRDIGEST_SLACK_API_URL": slack.url}
    )
    assert [p.github for p in settings.people] == ["jdoe", "mlee", "ghost"]
    assert check_settings(settings)[0].startswith("people.3 (github 'eve'): skipped: slack: 'U1> <!channel'")
    slack.users["eve@acme.example"] = "U0EVE"
    assert mentions(settings, store, SlackBot(settings, None), "slack", ["eve"], NOW) == {}  # no entry: plain


def test_the_platforms_answer_for_an_unknown_email_is_none(chat: Chat) -> None:
    assert chat.adapter.user_by_email("nobody@acme.example") is None
    chat.add_user("someone@acme.example", chat.ids["owner"])
    assert chat.adapter.user_by_email("someone@acme.example") == chat.ids["owner"]


def test_the_lark_request_is_the_sdks_batch_get_id() -> None:
    # The SDK's own request for this call, built by its builder (the contact service loads only here).
    from lark_oapi.api.contact.v3.model.batch_get_id_user_request import BatchGetIdUserRequest
    from lark_oapi.api.contact.v3.model.batch_get_id_user_request_body import BatchGetIdUserRequestBody

    body = BatchGetIdUserRequestBody.builder().emails(["a@x.io"]).build()
    sdk = BatchGetIdUserRequest.builder().user_id_type("open_id").request_body(body).build()
    ours = _batch_get_id(["a@x.io"])
    assert (ours.http_method, ours.uri, ours.token_types, ours.queries) == (
        sdk.http_method, sdk.uri, sdk.token_types, sdk.queries
    )  # fmt: skip
    assert ours.uri == BATCH_GET_ID and ours.body == {"emails": ["a@x.io"]} == {"emails": body.emails}
