"""The report pages of the web app: /reports/<token>, the full HTML of a delivered report.

A page's address holds a random token, never the report's id. A page answers ``410 Gone``
``[web] page_ttl_days`` after its link was made (when the report was posted or answered in chat).

``[web] page_access``:

* ``"link"``: anyone with a page's link reads it.
* ``"signed"``: a page is served only through a link signed for the chat it was posted to,
  ``/reports/<token>?chat=<chat id>&sig=<signature>``: an HMAC-SHA256 of the token and the chat id
  with ``PRDIGEST_WEB_SIGNING_KEY``, URL-safe base64. A token alone, or a signature made for
  another chat, answers 403; changing the key withdraws every link. It applies to every page:
  prdigest cannot tell which repositories are private (a clone's visibility is unknown to it).

Either way a page follows ``[access]`` (handlers/access.py): one answered in a chat on the strength of
its subscriptions opens only while they cover the report's repository (403 after an unsubscribe); one
granted to its asker (an admin, a direct message's asker) opens by its link alone.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode

from prdigest.clock import utc_now
from prdigest.config import Settings, WebSettings
from prdigest.errors import ConfigError
from prdigest.handlers.access import covers
from prdigest.storage import Store
from prdigest.storage.deliveries import ReportPage, Viewer, page_token, report_page
from prdigest.storage.subscriptions import list_subscriptions

log = logging.getLogger("prdigest.web")

Clock = Callable[[], datetime]


def report_pages(store: Store, settings: Settings, now: Clock = utc_now) -> Callable[..., Iterable[bytes]]:
    """/reports/<token>: the full HTML page of a delivered report, as ``[web]`` says (expiry, link
    signatures) and ``[access]``: a page made for a chat's subscriptions opens while they cover its
    repository."""
    web = settings.web
    key = signing_key(web)  # "signed" without a key fails here, when the app is made
    ttl = timedelta(days=web.page_ttl_days)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        from prdigest.bot.web import respond  # waitress: loaded to serve, not for page_link
        from prdigest.redact import scrub, scrub_value
        from prdigest.render.html import render_html

        token = environ.get("PATH_INFO", "").removeprefix("/reports/").strip("/")
        query = parse_qs(environ.get("QUERY_STRING", ""))
        if key is not None and not _signed(key, token, query):
            log.info("refused a report page: its link is not signed for a chat")  # no token, no signature
            return _text(
                start_response, "403 Forbidden", "this page opens only from the link posted in its chat"
            )
        page = report_page(store, token) if token else None
        report = store.get_report(page.report_id) if page is not None else None
        if page is None or report is None:
            return _text(start_response, "404 Not Found", "no such report")
        signed_for = query["chat"][0] if key is not None else None
        if not _open_to(store, settings, page, report.repo, signed_for):
            log.info("refused a report page: its link's chat does not subscribe to %s", report.repo)
            message = (
                "this page is not open to this link's chat: it does not subscribe to the report's repository"
            )
            return _text(start_response, "403 Forbidden", message)
        if now() - page.created_at > ttl:
            return _text(
                start_response,
                "410 Gone",
                f"this report page has expired: pages are kept {web.page_ttl_days} days",
            )
        html = scrub(render_html(scrub_value(report))).encode()  # its texts, then the page they make
        return respond(start_response, "200 OK", html, "text/html; charset=utf-8")

    return app


def page_link(
    settings: Settings, store: Store, report_id: int | None, chat_id: str, viewer: Viewer = "chat"
) -> str | None:
    """The address of a report's page as posted to ``chat_id``, signed when ``page_access`` is "signed";
    None without a public URL or a saved report. Each call makes a new link (its own expiry). ``viewer``:
    what granted the answer, the chat's subscriptions or the asker (storage/deliveries.py)."""
    if not settings.public_url or report_id is None:
        return None
    key = signing_key(settings.web)
    token = page_token(store, report_id, chat_id, viewer)
    url = f"{settings.public_url.rstrip('/')}/reports/{token}"
    if key is None:
        return url
    return f"{url}?{urlencode({'chat': chat_id, 'sig': signature(key, token, chat_id)})}"


def signing_key(web: WebSettings) -> bytes | None:
    """The key that signs page links; None when pages need no signature."""
    if web.page_access != "signed":
        return None
    if web.signing_key is None or not web.signing_key.get_secret_value():
        raise ConfigError('web.page_access = "signed" needs a signing key: set PRDIGEST_WEB_SIGNING_KEY')
    return web.signing_key.get_secret_value().encode()


def signature(key: bytes, token: str, chat_id: str) -> str:
    """HMAC-SHA256 of the page token and the chat id, URL-safe base64 without padding."""
    # The token is URL-safe base64 (no newline): "token\nchat" names one pair only.
    digest = hmac.new(key, f"{token}\n{chat_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _open_to(store: Store, settings: Settings, page: ReportPage, repo: str, signed_for: str | None) -> bool:
    """Whether the page's chat may still read it: its own link (when signed), granted to the asker or
    covered by its subscriptions."""
    if page.chat_id is None:  # made before pages named their chat
        return True
    if signed_for is not None and signed_for != page.chat_id:
        return False
    if settings.access.open or page.viewer == "asker":
        return True
    return any(covers(s, repo) for s in list_subscriptions(store, chat_id=page.chat_id))


def _signed(key: bytes, token: str, query: dict[str, list[str]]) -> bool:
    chat, sig = query.get("chat", []), query.get("sig", [])
    if len(chat) != 1 or len(sig) != 1:
        return False
    return hmac.compare_digest(signature(key, token, chat[0]).encode(), sig[0].encode())


def _text(start_response: Callable[..., Any], status: str, message: str) -> Iterable[bytes]:
    from prdigest.bot.web import respond

    return respond(start_response, status, f"{message}\n".encode(), "text/plain; charset=utf-8")
