"""The Slack adapter: Bolt listeners that hand chat to BotCore, and the weekly report's delivery.

Only the Slack modules import slack_bolt and slack_sdk: the connection (Socket Mode or
HTTP) and the listeners here, the event mapping in `slack_events`, the outbound client in
`slack_client`. Events come through Socket Mode (the default: an outbound websocket, no
public URL) or over HTTP (``wsgi_app()`` mounted on the web app at ``events_path``,
signatures checked with the signing secret). Every event is acked first: over HTTP, an
Events API event whose signature the SDK's verifier accepts is acked before Bolt reads it
(Bolt's ack of an event is an empty 200 whatever its listeners do; the dispatch costs about
1 ms, which a burst of 50 would otherwise queue before the last ack), in Socket Mode
Bolt acks events before their listeners run; slash commands and buttons ack at once. The
work goes to ``BotCore.submit``, which de-duplicates by event id, so a Slack retry of an
event already taken is acked and dropped. Answers go in the thread of the message that
asked.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from slack_bolt import Ack, App, BoltContext, BoltRequest
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_sdk.signature import SignatureVerifier

from prdigest.bot.adapters import LookupDenied, ReportUrl
from prdigest.bot.app import WORKING, BotCore, Inbound
from prdigest.bot.payloads import report_file_due, slack_payload
from prdigest.bot.slack.client import (
    FIND_DAYS,
    FIND_MESSAGES,
    REPORT_EVENT,
    TIMEOUT_S,
    SlackError,
    SlackOutbound,
    code,
    sdk_logger,
)
from prdigest.bot.slack.events import Body, action_inbound, command_inbound, event_inbound, strip_mention
from prdigest.bot.web import read_body
from prdigest.bot.web import respond as http_response
from prdigest.config import Settings
from prdigest.errors import ConfigError
from prdigest.handlers import Reply
from prdigest.handlers.request import Reading
from prdigest.models import Report
from prdigest.render.slack import render_slack_thread
from prdigest.storage.cards import remember_card

__all__ = ["REPORT_EVENT", "SlackBot", "SlackError", "strip_mention"]

log = logging.getLogger("prdigest.slack")

# Slack's error names for a token it refuses.
REFUSED_CODES = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
     "not_allowed_token_type"}
)  # fmt: skip
COMMAND = "/prdigest"
ACTION_PREFIX = "prdigest_"
LINK_ACTION = "prdigest_open_url"  # a link button: Slack opens the URL, we only ack
RECONNECT_S = 5.0
LISTENER_THREADS = 8
DISPATCH_THREADS = 2  # Bolt's reading of events acked already (its listeners run on LISTENER_THREADS)
# Work after a burst of acks: an event acked is read once no request came for QUIET_S (work started
# earlier takes the GIL from the acks still to come), or after MAX_DEFER_S.
QUIET_S = 0.005
MAX_DEFER_S = 0.25
# Where the bot may not post (a slash command in a channel it is not in): answer via response_url.
_NOT_A_MEMBER = {"not_in_channel", "channel_not_found"}


class SlackBot:
    """One Slack app, a `ChatAdapter`. ``core`` None: a delivery-only client (``prdigest deliver``),
    with no listeners."""

    events_path = "/slack/events"  # where `prdigest serve` mounts wsgi_app() in HTTP mode

    def __init__(self, settings: Settings, core: BotCore | None, *, report_url_for: ReportUrl | None = None):
        slack = settings.slack
        if slack.bot_token is None:
            raise ConfigError("Slack needs a bot token: set PRDIGEST_SLACK_BOT_TOKEN")
        self.settings = settings
        self.core = core
        self.report_url_for = report_url_for or (lambda report, chat_id, viewer: None)
        self.out = SlackOutbound(slack.bot_token.get_secret_value(), slack.api_url)
        self.client = self.out.client
        self._executor = ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="prdigest-slack")
        self._dispatcher = ThreadPoolExecutor(DISPATCH_THREADS, thread_name_prefix="prdigest-slack-dispatch")
        secret = slack.signing_secret.get_secret_value() if slack.signing_secret else ""
        self.app = App(
            client=self.client,
            # Never Bolt's SLACK_SIGNING_SECRET fallback; wsgi_app() refuses to serve without a secret.
            signing_secret=secret,
            token_verification_enabled=False,  # no network in the constructor; start() checks the token
            logger=sdk_logger("prdigest.slack.bolt"),
            listener_executor=self._executor,
            name="prdigest",
        )
        if core is not None:
            self._listen()
        self._socket: SocketModeHandler | None = None
        self._connector: threading.Thread | None = None
        self._stopping = threading.Event()

    # --- the connection ----------------------------------------------------------------

    def start(self) -> None:
        """Check the bot token (SlackError when Slack refuses it); in Socket Mode, connect in a
        daemon thread that retries until connected. In HTTP mode events come through ``wsgi_app()``."""
        self.out.auth_test()
        if self.settings.slack.mode != "socket" or self.core is None:
            return
        app_token = self.settings.slack.app_token
        if app_token is None:
            raise ConfigError("Slack Socket Mode needs an app-level token: set PRDIGEST_SLACK_APP_TOKEN")
        self._socket = SocketModeHandler(
            self.app, app_token=app_token.get_secret_value(), logger=sdk_logger("prdigest.slack.socket")
        )
        self._connector = threading.Thread(target=self._connect, name="prdigest-slack-connect", daemon=True)
        self._connector.start()

    def stop(self) -> None:
        """Close the Socket Mode connection and let running listeners finish."""
        self._stopping.set()
        if self._connector is not None:
            self._connector.join(TIMEOUT_S)
        if self._socket is not None:
            cast(Callable[[], None], self._socket.close)()  # the SDK leaves it unannotated
            self._socket = None
        self._dispatcher.shutdown(wait=True)  # events acked are read, their listeners started...
        self._executor.shutdown(wait=True)  # ...and finished

    def wsgi_app(self) -> AckFirst:
        """HTTP mode: the WSGI app to mount at ``events_path`` (events, slash commands, buttons)."""
        secret = self.settings.slack.signing_secret
        if secret is None:
            raise ConfigError("Slack HTTP mode needs the signing secret: set PRDIGEST_SLACK_SIGNING_SECRET")
        verifier = SignatureVerifier(secret.get_secret_value())
        return AckFirst(SlackRequestHandler(self.app, path=self.events_path), verifier, self._dispatcher)

    def _connect(self) -> None:
        assert self._socket is not None
        connect = cast(Callable[[], None], self._socket.connect)  # the SDK leaves it unannotated
        while not self._stopping.is_set():
            try:
                connect()
                log.info("Slack: connected in Socket Mode")
                return
            except Exception as exc:  # Slack unreachable at start: keep trying, the SDK reconnects later
                log.warning("Slack: Socket Mode could not connect (%s); retrying", code(exc))
                self._stopping.wait(RECONNECT_S)

    # --- the outbound client (ChatAdapter) ----------------------------------------------

    def post_reply(self, chat_id: str, thread: str | None, payload: dict[str, Any], key: str) -> str:
        return self.out.post(chat_id, thread, payload)

    def post_card(
        self, chat_id: str, thread: str | None, report: Report, report_url: str | None, key: str
    ) -> str:
        return self.out.post_card(chat_id, thread, report, report_url, key)

    def update_card(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        self.out.update_card(chat_id, message_id, report, report_url)  # the key stays in the metadata

    def post_file(
        self, chat_id: str, thread: str | None, card_id: str, report: Report, markdown: str, key: str
    ) -> None:
        """The file in the card's thread; a failed upload is logged (the card is out already)."""
        self.out.post_file(chat_id, thread or card_id, report, markdown)

    def find_delivery(
        self, chat_id: str, key: str, *, days: int = FIND_DAYS, limit: int = FIND_MESSAGES
    ) -> str | None:
        return self.out.find_delivery(chat_id, key, days=days, limit=limit)

    def thread_messages(self, report: Report, report_url: str | None) -> list[dict[str, Any]]:
        return render_slack_thread(report, report_url)

    def thread_replies(self, chat_id: str, card_id: str, key: str) -> dict[str, str]:
        return self.out.thread_replies(chat_id, card_id, key)

    def post_thread_reply(self, chat_id: str, card_id: str, message: dict[str, Any], key: str) -> str:
        return self.out.post_thread_reply(chat_id, card_id, message, key)

    def update_thread_reply(self, chat_id: str, message_id: str, message: dict[str, Any], key: str) -> None:
        self.out.update(chat_id, message_id, message)  # the key stays in the metadata

    # --- chat ------------------------------------------------------------------------

    def member_chats(self, user_id: str, chat_ids: Collection[str]) -> set[str] | None:
        """users.conversations of the user; None when Slack refuses it (the app lacks channels:read or
        groups:read: ``missing_scope``)."""
        try:
            return self.out.member_channels(user_id) & set(chat_ids)
        except SlackError as exc:
            log.warning("Slack: could not list the channels of %s: %s", user_id, exc)
            return None

    def mention(self, user: str) -> str:
        return f"<@{user}>"

    def user_by_email(self, email: str) -> str | None:
        try:
            return self.out.user_by_email(email)
        except SlackError as exc:
            if exc.code == "missing_scope":
                raise LookupDenied("Slack", "the users:read.email scope") from None
            raise

    def text_payload(self, text: str) -> dict[str, Any]:
        return {"text": text}

    def refused(self, exc: BaseException) -> bool:
        return getattr(exc, "code", None) in REFUSED_CODES

    def _listen(self) -> None:
        self.app.event("app_mention")(self._on_event)
        self.app.event("message")(self._on_message)
        self.app.command(COMMAND)(self._on_command)
        self.app.action(re.compile(f"^{ACTION_PREFIX}"))(self._on_action)

    def _on_message(self, body: Body, context: BoltContext, request: BoltRequest) -> None:
        event = body["event"]
        # Direct messages only; not bots (ours included), nor edits, joins and other subtypes.
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return
        self._on_event(body, context, request)

    def _on_event(self, body: Body, context: BoltContext, request: BoltRequest) -> None:
        self._submit(event_inbound(body, context.bot_user_id), request, notice=True)

    def _on_command(self, ack: Ack, body: Body, request: BoltRequest) -> None:
        assert self.core is not None, "listeners are registered only with a core"
        inbound = command_inbound(body, (body.get("text") or "").strip())
        reading = self.core.read(inbound)  # once: the ack speaks the answer's language
        ack(WORKING[reading.lang])  # shown to the asker only; it stands for the notice
        self._submit(inbound, request, response_url=body.get("response_url"), notice=False, reading=reading)

    def _on_action(self, ack: Ack, body: Body, action: Body, request: BoltRequest) -> None:
        ack()
        if action["action_id"] == LINK_ACTION:
            return
        inbound = action_inbound(body, action)
        self._submit(inbound, request, response_url=body.get("response_url"), notice=True)

    def _submit(
        self,
        inbound: Inbound,
        request: BoltRequest,
        *,
        notice: bool,
        response_url: str | None = None,
        reading: Reading | None = None,
    ) -> None:
        assert self.core is not None, "listeners are registered only with a core"
        retry = request.headers.get("x-slack-retry-num", [""])[0]
        if retry:  # Slack did not get an ack in time (or got an error) and sent it again
            reason = request.headers.get("x-slack-retry-reason", ["?"])[0]
            log.warning("Slack: event %s delivered again (retry %s: %s)", inbound.event_id, retry, reason)
        chat, thread, key = inbound.chat_id, inbound.thread_id, inbound.event_id

        def say(text: str) -> None:
            self.post_reply(chat, thread, self.text_payload(text), f"{key}:notice")

        respond = self._responder(chat, thread, key, response_url)
        self.core.submit(inbound, respond, say if notice else None, reading)

    def _responder(
        self, channel: str, thread: str | None, key: str, response_url: str | None
    ) -> Callable[[Reply], None]:
        def respond(reply: Reply) -> None:
            report_url = (
                self.report_url_for(reply.report, channel, reply.page_viewer)
                if reply.report is not None
                else None
            )
            payload = slack_payload(reply, report_url)
            try:
                ts = self.post_reply(channel, thread, payload, f"{key}:answer")
            except SlackError as exc:
                if response_url is None or exc.code not in _NOT_A_MEMBER:
                    raise
                self.out.respond_url(response_url, payload)
                return
            if reply.report is not None and self.core is not None:
                # The card, itself and as the latest of its thread, for the follow-ups there.
                for card in {ts, thread or ts}:
                    remember_card(self.core.services.store, "slack", channel, card, reply.report)
            if reply.report is not None and report_file_due(reply, report_url):
                self.post_file(channel, thread, ts, reply.report, reply.text, key)

        return respond


class AckFirst:
    """Bolt's WSGI handler, with Events API events acked before Bolt reads them.

    An ``event_callback`` whose signature (and timestamp) the SDK's verifier accepts gets its empty
    200 at once, and Bolt dispatches it on ``dispatcher`` (checking it again, as it does every
    request). Anything else (URL verification, slash commands, buttons, a bad signature) is Bolt's
    to answer, as it was: their acks carry a body.
    """

    def __init__(
        self, bolt: SlackRequestHandler, verifier: SignatureVerifier, dispatcher: ThreadPoolExecutor
    ):
        self.bolt = bolt
        self.verifier = verifier
        self.dispatcher = dispatcher
        self._lock = threading.Lock()
        self._in_flight = 0
        self._last = 0.0  # when the last request came or went

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with self._lock:
            self._in_flight += 1
            self._last = time.monotonic()
        try:
            return self._answer(environ, start_response)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._last = time.monotonic()

    def _answer(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.bolt.path:
            return self.bolt(environ, start_response)
        body = read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)  # for Bolt, when it answers
        environ["CONTENT_LENGTH"] = str(len(body))
        if not self._acks_first(environ, body):
            return self.bolt(environ, start_response)
        http = WsgiHttpRequest(environ)
        try:  # Bolt's request (it parses the body again) is built after the ack too
            self.dispatcher.submit(self._dispatch, body, http.query_string, http.get_headers())
        except RuntimeError:  # stopping: no ack, and Slack sends the event again
            return http_response(start_response, "503 Service Unavailable", b"", "text/plain;charset=utf-8")
        return http_response(start_response, "200 OK", b"", "text/plain;charset=utf-8")

    def _acks_first(self, environ: dict[str, Any], body: bytes) -> bool:
        if (
            not (environ.get("CONTENT_TYPE") or "").startswith("application/json")
            or b"event_callback" not in body
        ):
            return False
        timestamp, signature = (
            environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"),
            environ.get("HTTP_X_SLACK_SIGNATURE"),
        )
        try:
            if not self.verifier.is_valid(body, timestamp, signature):
                return False
            parsed = json.loads(body)
        except ValueError:  # a timestamp or a body that is not one: Bolt says what is wrong
            return False
        return isinstance(parsed, dict) and parsed.get("type") == "event_callback"

    def _dispatch(self, body: bytes, query: str, headers: dict[str, str | Sequence[str]]) -> None:
        deadline = time.monotonic() + MAX_DEFER_S
        while (now := time.monotonic()) < deadline:
            with self._lock:
                quiet = now - self._last if self._in_flight == 0 else 0.0
            if quiet >= QUIET_S:
                break
            time.sleep(QUIET_S - quiet)
        try:
            response = self.bolt.app.dispatch(
                BoltRequest(body=body.decode("utf-8"), query=query, headers=headers)
            )
        except Exception:
            log.exception("Slack: Bolt failed on an event acked already")
            return
        if response.status != 200:
            log.warning("Slack: Bolt answered %s to an event acked already", response.status)
