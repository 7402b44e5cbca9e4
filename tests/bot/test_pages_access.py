"""Report pages over HTTP: they expire; with page_access = "signed" only a chat's signed link opens one."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from conftest import subscribe
from pydantic import SecretStr

from prdigest.bot.pages import page_link, report_pages, signature
from prdigest.bot.web import SECURITY_HEADERS, WebApp
from prdigest.clock import utc_now
from prdigest.config import Settings, WebSettings
from prdigest.errors import ConfigError
from prdigest.pipeline.single import make_report
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.storage.deliveries import page_token

PUBLIC = "https://digest.example.com"
KEY = "a-signing-key-of-the-test"
SIGNED = WebSettings(page_access="signed", signing_key=SecretStr(KEY))


@pytest.fixture
def report_id(demo_store: Store) -> int:
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    report = make_report(
        Settings(), demo_store, None, source.window, repo=source.repo, lang="en", use_llm=False
    )
    assert report.id is not None
    # The chats its links are posted to subscribe to its repository.
    for platform, chat in (("slack", "C1"), ("slack", "C0SLACK"), ("lark", "oc_team_a")):
        subscribe(demo_store, platform, chat, source.repo)
    return report.id


class Pages:
    """The web app serving report pages on 127.0.0.1, its clock set by the test."""

    def __init__(self, store: Store, web: WebSettings) -> None:
        self.now = utc_now()
        self.app = WebApp()
        self.app.mount("/reports", report_pages(store, Settings(web=web), now=lambda: self.now))
        host, port = self.app.start("127.0.0.1", 0)
        self.base = f"http://{host}:{port}"

    def get(self, path: str) -> tuple[int, dict[str, str], str]:
        try:
            with urllib.request.urlopen(f"{self.base}{path}", timeout=5) as answer:
                return answer.status, dict(answer.headers), answer.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read().decode()


@pytest.fixture
def serve_pages(demo_store: Store) -> Iterator[object]:
    started: list[Pages] = []

    def start(web: WebSettings) -> Pages:
        pages = Pages(demo_store, web)
        started.append(pages)
        return pages

    yield start
    for pages in started:
        pages.app.stop()


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path


def assert_secure(headers: dict[str, str]) -> None:
    for name, value in SECURITY_HEADERS:
        assert headers[name] == value


# --- expiry -----------------------------------------------------------------------------------


def test_a_page_answers_410_once_older_than_its_ttl(demo_store: Store, report_id: int, serve_pages) -> None:
    pages = serve_pages(WebSettings(page_ttl_days=30))
    token = page_token(demo_store, report_id)
    status, headers, body = pages.get(f"/reports/{token}")
    assert status == 200 and 'id="pr-4124"' in body
    pages.now += timedelta(days=30) - timedelta(minutes=1)
    assert pages.get(f"/reports/{token}")[0] == 200
    pages.now += timedelta(minutes=2)
    status, headers, body = pages.get(f"/reports/{token}")
    assert status == 410
    assert headers["Content-Type"].startswith("text/plain") and "expired" in body and "30 days" in body
    assert_secure(headers)
    assert "4124" not in body  # nothing of the report
    # A link made now is fresh again: the page's age counts from its link.
    assert pages.get(f"/reports/{page_token(demo_store, report_id)}")[0] == 410  # the clock is 30 days on
    pages.now = utc_now()
    assert pages.get(f"/reports/{page_token(demo_store, report_id)}")[0] == 200


def test_unknown_tokens_stay_404(demo_store: Store, report_id: int, serve_pages) -> None:
    pages = serve_pages(WebSettings())
    pages.now += timedelta(days=365)  # expiry does not turn an unknown token into 410
    for path in ("/reports/nosuchtoken", f"/reports/{report_id}", "/reports/"):
        status, headers, _ = pages.get(path)
        assert status == 404
        assert_secure(headers)


def test_the_default_app_uses_the_default_ttl(demo_store: Store, report_id: int) -> None:
    seen: list[str] = []
    environ = {"PATH_INFO": f"/reports/{page_token(demo_store, report_id)}", "REQUEST_METHOD": "GET"}
    later = utc_now() + timedelta(days=91)
    app = report_pages(demo_store, Settings(), now=lambda: later)
    b"".join(app(environ, lambda status, headers: seen.append(status)))
    assert seen == ["410 Gone"]


# --- signed links -----------------------------------------------------------------------------


def test_a_signed_link_opens_in_its_chat_only(demo_store: Store, report_id: int, serve_pages, caplog) -> None:
    pages = serve_pages(SIGNED)
    settings = Settings(public_url=PUBLIC, web=SIGNED)
    link = page_link(settings, demo_store, report_id, "oc_team_a")
    assert link is not None and link.startswith(f"{PUBLIC}/reports/")
    query = parse_qs(urlsplit(link).query)
    assert query["chat"] == ["oc_team_a"]
    status, headers, body = pages.get(path_of(link))
    assert status == 200 and 'id="pr-4124"' in body
    token = urlsplit(link).path.removeprefix("/reports/")
    sig = query["sig"][0]
    other_sig = signature(KEY.encode(), token, "C0OTHER")
    wrong_key = signature(b"another key", token, "oc_team_a")

    def query_of(chat: str, sig: str) -> str:
        return urlencode({"chat": chat, "sig": sig})

    with caplog.at_level(logging.DEBUG):
        for refused in (
            f"/reports/{token}",  # no signature
            f"/reports/{token}?chat=oc_team_a",
            f"/reports/{token}?{query_of('C0OTHER', sig)}",  # team a's signature elsewhere
            f"/reports/{token}?{query_of('oc_team_a', other_sig)}",  # another chat's signature
            f"/reports/{token}?{query_of('oc_team_a', wrong_key)}",
            f"/reports/{page_token(demo_store, report_id)}?{query_of('oc_team_a', sig)}",
            f"/reports/nosuchtoken?{query_of('oc_team_a', sig)}",  # no hint the token is unknown
        ):
            status, headers, body = pages.get(refused)
            assert status == 403, refused
            assert headers["Content-Type"].startswith("text/plain") and "link" in body
            assert_secure(headers)
    logged = caplog.text
    assert token not in logged and sig not in logged and KEY not in logged
    # The chat's own link still expires.
    pages.now += timedelta(days=91)
    assert pages.get(path_of(link))[0] == 410


def test_signed_pages_need_a_key(demo_store: Store) -> None:
    unkeyed = WebSettings(page_access="signed")
    with pytest.raises(ConfigError, match="PRDIGEST_WEB_SIGNING_KEY"):
        report_pages(demo_store, Settings(web=unkeyed))
    with pytest.raises(ConfigError, match="PRDIGEST_WEB_SIGNING_KEY"):
        page_link(Settings(public_url=PUBLIC, web=unkeyed), demo_store, 1, "C1")


def test_plain_links_and_no_public_url(demo_store: Store, report_id: int, serve_pages) -> None:
    link = page_link(Settings(public_url=f"{PUBLIC}/"), demo_store, report_id, "C1")
    assert link is not None and "?" not in link and link.startswith(f"{PUBLIC}/reports/")
    assert serve_pages(WebSettings()).get(path_of(link))[0] == 200
    assert page_link(Settings(), demo_store, report_id, "C1") is None
    assert page_link(Settings(public_url=PUBLIC), demo_store, None, "C1") is None


def test_a_signed_link_reaches_the_card_buttons_as_it_was_signed(demo_store: Store, report_id: int) -> None:
    from prdigest.render.lark import render_lark_card
    from prdigest.render.slack import render_slack_message

    link = page_link(Settings(public_url=PUBLIC, web=SIGNED), demo_store, report_id, "C0SLACK")
    assert link is not None and "&sig=" in link
    report = demo_store.get_report(report_id)
    assert report is not None
    lark = json.dumps(render_lark_card(report, link))
    slack = json.dumps(render_slack_message(report, link))
    assert json.dumps(link) in lark and json.dumps(link) in slack  # not one "%26" in the query
