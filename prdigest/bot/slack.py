"""The Slack adapter: Bolt listeners that hand chat to BotCore, and the weekly report's delivery.

The only module that imports slack_bolt. Events come through Socket Mode (the default: an
outbound websocket, no public URL) or over HTTP (``wsgi_app()`` mounted on the web app at
``/slack/events``, signatures checked with the signing secret). Every listener acks first:
Events API listeners are acked by Bolt before they run, slash commands and buttons ack
at once, and the work goes to ``BotCore.submit``, which de-duplicates by event id, so a
Slack retry of an event already taken is acked and dropped. Answers go in the thread
of the message that asked.

A weekly report carries its delivery key in the message metadata, so that after a crash
between posting and recording, ``find_delivery`` finds it in the channel's history
instead of posting it twice. Slack's errors become ``SlackError`` with Slack's error
code; tokens never reach a message or a log.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import Ack, App, BoltContext, BoltRequest
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler
from slack_sdk.web import SlackResponse
from slack_sdk.webhook import WebhookClient

from prdigest.bot.app import WORKING, BotCore, Inbound
from prdigest.bot.payloads import report_file_name, slack_payload
from prdigest.config import Settings
from prdigest.errors import ConfigError, PrdigestError
from prdigest.handlers import Reply
from prdigest.i18n import detect_lang
from prdigest.models import Report
from prdigest.redact import redact
from prdigest.render.markdown import title
from prdigest.render.slack import render_slack_message
from prdigest.storage.cards import remember_card

log = logging.getLogger("prdigest.slack")

Body = dict[str, Any]

EVENTS_PATH = "/slack/events"
COMMAND = "/prdigest"
ACTION_PREFIX = "prdigest_"
LINK_ACTION = "prdigest_open_url"  # a link button: Slack opens the URL, we only ack
REPORT_EVENT = "prdigest_report"  # the metadata event type of a weekly report
# find_delivery reads back this far: a crashed delivery is retried within hours, not weeks.
FIND_DAYS = 14
FIND_MESSAGES = 1000
HISTORY_PAGE = 200
TIMEOUT_S = 15
RECONNECT_S = 5.0
LISTENER_THREADS = 8
# Where the bot may not post (a slash command in a channel it is not in): answer via response_url.
_NOT_A_MEMBER = {"not_in_channel", "channel_not_found"}


class SlackError(PrdigestError):
    """A Slack API call failed; ``code`` is Slack's error code (or the connection error's kind)."""

    def __init__(self, method: str, code: str):
        super().__init__(f"Slack {method} failed: {code}")
        self.method = method
        self.code = code


class _Redact(logging.Filter):
    """Bolt logs request bodies (e.g. on a bad signature) and those carry Slack's legacy
    verification token: redact it, and any xox*/xapp token, before a record is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def _sdk_logger(name: str) -> logging.Logger:
    logger = logging.getLogger(name)
    if not logger.filters:
        logger.addFilter(_Redact())  # Bolt copies a base logger's filters to its own loggers
    return logger


class SlackBot:
    """One Slack app. ``core`` None: a delivery-only client (``prdigest deliver``), with no listeners."""

    def __init__(
        self,
        settings: Settings,
        core: BotCore | None,
        *,
        report_url_for: Callable[[Report], str | None] | None = None,
    ):
        slack = settings.slack
        if slack.bot_token is None:
            raise ConfigError("Slack needs a bot token: set PRDIGEST_SLACK_BOT_TOKEN")
        self.settings = settings
        self.core = core
        self.report_url_for = report_url_for or (lambda report: None)
        self.client = WebClient(
            token=slack.bot_token.get_secret_value(),
            base_url=slack.api_url if slack.api_url.endswith("/") else slack.api_url + "/",
            timeout=TIMEOUT_S,
            logger=_sdk_logger("prdigest.slack.sdk"),
            retry_handlers=[ConnectionErrorRetryHandler(), RateLimitErrorRetryHandler(max_retry_count=2)],
        )
        self._executor = ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="prdigest-slack")
        secret = slack.signing_secret.get_secret_value() if slack.signing_secret else ""
        self.app = App(
            client=self.client,
            # Never Bolt's SLACK_SIGNING_SECRET fallback; wsgi_app() refuses to serve without a secret.
            signing_secret=secret,
            token_verification_enabled=False,  # no network in the constructor; start() checks the token
            logger=_sdk_logger("prdigest.slack.bolt"),
            listener_executor=self._executor,
            name="prdigest",
        )
        if core is not None:
            self._listen()
        self._socket: SocketModeHandler | None = None
        self._connector: threading.Thread | None = None
        self._stopping = threading.Event()

    # --- running ---------------------------------------------------------------------

    def start(self) -> None:
        """Check the bot token (SlackError when Slack refuses it); in Socket Mode, connect in a
        daemon thread that retries until connected. In HTTP mode events come through ``wsgi_app()``."""
        self._api("auth.test", self.client.auth_test)
        if self.settings.slack.mode != "socket" or self.core is None:
            return
        app_token = self.settings.slack.app_token
        if app_token is None:
            raise ConfigError("Slack Socket Mode needs an app-level token: set PRDIGEST_SLACK_APP_TOKEN")
        self._socket = SocketModeHandler(
            self.app, app_token=app_token.get_secret_value(), logger=_sdk_logger("prdigest.slack.socket")
        )
        self._connector = threading.Thread(target=self._connect, name="prdigest-slack-connect", daemon=True)
        self._connector.start()

    def stop(self) -> None:
        """Close the Socket Mode connection and let running listeners finish."""
        self._stopping.set()
        if self._connector is not None:
            self._connector.join(TIMEOUT_S)
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self._executor.shutdown(wait=True)

    def wsgi_app(self) -> SlackRequestHandler:
        """HTTP mode: the WSGI app to mount at ``EVENTS_PATH`` (events, slash commands, buttons)."""
        if self.settings.slack.signing_secret is None:
            raise ConfigError("Slack HTTP mode needs the signing secret: set PRDIGEST_SLACK_SIGNING_SECRET")
        return SlackRequestHandler(self.app, path=EVENTS_PATH)

    def _connect(self) -> None:
        assert self._socket is not None
        while not self._stopping.is_set():
            try:
                self._socket.connect()
                log.info("Slack: connected in Socket Mode")
                return
            except Exception as exc:  # Slack unreachable at start: keep trying, the SDK reconnects later
                log.warning("Slack: Socket Mode could not connect (%s); retrying", _code(exc))
                self._stopping.wait(RECONNECT_S)

    # --- chat ------------------------------------------------------------------------

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
        event = body["event"]
        thread = event.get("thread_ts") or event["ts"]
        inbound = Inbound(
            platform="slack",
            event_id=body["event_id"],
            chat_id=event["channel"],
            user_id=event.get("user", ""),
            text=strip_mention(event.get("text", ""), context.bot_user_id),
            thread_id=thread,
            card_id=event.get("thread_ts"),  # a message in a thread: what the thread is about
        )
        self._submit(inbound, request, notice=True)

    def _on_command(self, ack: Ack, body: Body, request: BoltRequest) -> None:
        text = (body.get("text") or "").strip()
        ack(WORKING[detect_lang(text)])  # shown to the asker only; it stands for the notice
        inbound = Inbound(
            platform="slack",
            event_id=body["trigger_id"],
            chat_id=body["channel_id"],
            user_id=body["user_id"],
            text=text,
        )
        self._submit(inbound, request, response_url=body.get("response_url"), notice=False)

    def _on_action(self, ack: Ack, body: Body, action: Body, request: BoltRequest) -> None:
        ack()
        if action["action_id"] == LINK_ACTION:
            return
        container = body.get("container") or {}
        message = body.get("message") or {}
        card_ts = container.get("message_ts") or message.get("ts")
        inbound = Inbound(
            platform="slack",
            event_id=body["trigger_id"],
            chat_id=container.get("channel_id") or body["channel"]["id"],
            user_id=body["user"]["id"],
            action=_action_value(action.get("value")),
            thread_id=message.get("thread_ts") or card_ts,
            message_id=card_ts,
        )
        self._submit(inbound, request, response_url=body.get("response_url"), notice=True)

    def _submit(
        self, inbound: Inbound, request: BoltRequest, *, notice: bool, response_url: str | None = None
    ) -> None:
        assert self.core is not None, "listeners are registered only with a core"
        retry = request.headers.get("x-slack-retry-num", [""])[0]
        if retry:  # Slack did not get an ack in time (or got an error) and sent it again
            reason = request.headers.get("x-slack-retry-reason", ["?"])[0]
            log.warning("Slack: event %s delivered again (retry %s: %s)", inbound.event_id, retry, reason)
        chat, thread = inbound.chat_id, inbound.thread_id
        self.core.submit(
            inbound,
            self._responder(chat, thread, response_url),
            (lambda text: self._post(chat, thread, {"text": text})) if notice else None,
        )

    def _responder(
        self, channel: str, thread: str | None, response_url: str | None
    ) -> Callable[[Reply], None]:
        def respond(reply: Reply) -> None:
            report_url = self.report_url_for(reply.report) if reply.report is not None else None
            payload = slack_payload(reply, report_url)
            try:
                ts = self._post(channel, thread, payload)
            except SlackError as exc:
                if response_url is None or exc.code not in _NOT_A_MEMBER:
                    raise
                self._respond_url(response_url, payload)
                return
            if reply.report is not None and self.core is not None:
                # The card, itself and as the latest of its thread, for the follow-ups there.
                for card in {ts, thread or ts}:
                    remember_card(self.core.services.store, "slack", channel, card, reply.report)
            if reply.kind == "report" and reply.report is not None and report_url is None:
                self._upload_report(channel, thread or ts, reply.report, reply.text)

        return respond

    def _respond_url(self, url: str, payload: dict[str, Any]) -> None:
        webhook = WebhookClient(url, timeout=TIMEOUT_S, logger=_sdk_logger("prdigest.slack.sdk"))
        try:
            response = webhook.send(
                text=payload["text"], blocks=payload.get("blocks"), response_type="in_channel"
            )
        except (SlackClientError, OSError) as exc:
            raise SlackError("response_url", _code(exc)) from None
        if response.status_code != 200:
            raise SlackError("response_url", f"http_{response.status_code}")

    # --- the weekly report --------------------------------------------------------------

    def deliver(self, channel: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        """Post the weekly report, tagged with its delivery key; without a page URL, the full report
        follows in the thread as a Markdown file. Returns the message ts."""
        message = render_slack_message(report, report_url)
        metadata = {"event_type": REPORT_EVENT, "event_payload": {"key": key}}
        ts = self._post(channel, None, message, metadata=metadata)
        if report_url is None:
            self._upload_report(channel, ts, report, markdown)
        return ts

    def find_delivery(
        self, channel: str, key: str, *, days: int = FIND_DAYS, limit: int = FIND_MESSAGES
    ) -> str | None:
        """The ts of the report posted with ``key`` among the channel's last ``limit`` messages
        of the last ``days`` days; None when there is none."""
        oldest = f"{time.time() - days * 86400:.6f}"
        cursor, seen = None, 0
        while seen < limit:
            page = self._api(
                "conversations.history",
                self.client.conversations_history,
                channel=channel,
                include_all_metadata=True,
                oldest=oldest,
                limit=min(HISTORY_PAGE, limit - seen),
                cursor=cursor,
            )
            messages = page.get("messages") or []
            found = next((m["ts"] for m in messages if _delivery_key(m) == key), None)
            if found is not None:
                return found
            seen += len(messages)
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor or not messages:
                break
        return None

    def update_report(self, channel: str, ts: str, report: Report, report_url: str | None) -> None:
        """A forced re-run: the posted report, redrawn in place."""
        message = render_slack_message(report, report_url)
        text, blocks = message["text"], message["blocks"]
        self._api("chat.update", self.client.chat_update, channel=channel, ts=ts, text=text, blocks=blocks)

    def _upload_report(self, channel: str, thread: str, report: Report, markdown: str) -> None:
        # The card is out already: a failed upload is logged, not raised, so it is not posted twice.
        try:
            self._api(
                "files.upload",
                self.client.files_upload_v2,
                channel=channel,
                thread_ts=thread,
                content=markdown,
                filename=report_file_name(report),
                title=title(report),
            )
        except SlackError as exc:
            log.error("Slack: the report for %s is posted but its file is not: %s", channel, exc)

    # --- the Web API -------------------------------------------------------------------

    def _post(self, channel: str, thread: str | None, payload: dict[str, Any], **extra: Any) -> str:
        response = self._api(
            "chat.postMessage",
            self.client.chat_postMessage,
            channel=channel,
            thread_ts=thread,
            **payload,
            **extra,
        )
        return str(response["ts"])

    @staticmethod
    def _api(method: str, call: Callable[..., SlackResponse], **kwargs: Any) -> SlackResponse:
        try:
            return call(**kwargs)
        except (SlackClientError, OSError) as exc:
            raise SlackError(method, _code(exc)) from None


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The message without mentions of the bot, and with Slack's three escapes undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def _action_value(value: str | None) -> dict[str, Any]:
    """A button's ActionValue payload; an empty dict (BotCore answers with help) when it is not one."""
    try:
        parsed = json.loads(value or "")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _delivery_key(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != REPORT_EVENT:
        return None
    return (metadata.get("event_payload") or {}).get("key")


def _code(exc: BaseException) -> str:
    """Slack's error code, else the kind of failure: never the exception's text, which may quote a request."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or f"http_{exc.response.status_code}")
    return type(exc).__name__
