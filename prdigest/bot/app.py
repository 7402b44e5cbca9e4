"""What every chat adapter shares: the Inbound event, de-duplication, and work after the ack.

An adapter turns a platform event into an `Inbound`, calls `BotCore.submit` (which
returns at once, so the platform gets its ack within its deadline), and gives it a
`respond` callback that posts the Reply. The work runs in a bounded pool; when it takes
longer than a few seconds the adapter's `notice` callback says "working on it".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from prdigest.handlers import Context, Reply, Services, handle
from prdigest.handlers.commands import Intent, clean
from prdigest.handlers.context import Thread
from prdigest.i18n import detect_lang, texts
from prdigest.models import Window
from prdigest.render.views import ActionValue
from prdigest.storage.cards import card_of
from prdigest.storage.events import claim_event

log = logging.getLogger("prdigest.bot")

WORKERS = 4
NOTICE_AFTER_S = 3.0
WORKING = {"zh": "正在处理，请稍候……", "en": "Working on it…"}


class Inbound(BaseModel):
    """One chat event, whatever the platform."""

    platform: Literal["lark", "slack"]
    event_id: str  # the platform's id of this delivery's event: the de-duplication key
    chat_id: str
    user_id: str
    text: str | None = None  # a message or a slash command's text
    action: dict[str, Any] | None = None  # a button's value (an ActionValue payload)
    thread_id: str | None = None  # where the answer goes: a Slack thread_ts, a Lark message id
    card_id: str | None = None  # the bot's card a message answers in the thread of, if any
    message_id: str | None = None  # the card a button sits on, to update it


KEY_PRS_SHOWN = 10


def action_intent(value: dict[str, Any]) -> Intent:
    """A button as the Intent it stands for, its card's window (timezone included) and language kept."""
    action = ActionValue.model_validate(value)
    window = Window(since=action.since, until=action.until, tz=action.tz)
    lang, repo = action.lang, action.repo
    if action.action == "risks":
        return Intent("risks", lang=lang, repo=repo, window=window)
    if action.action == "key_prs":
        return Intent("top", n=KEY_PRS_SHOWN, lang=lang, repo=repo, window=window)
    if action.action == "explain":
        return Intent("explain", pr=action.number, lang=lang, repo=repo, window=window)
    span = action.until - action.since + timedelta(days=1)  # "another week": the one before
    before = Window(since=action.since - span, until=action.until - span, tz=action.tz)
    return Intent("report", lang=lang, repo=repo, window=before)


class BotCore:
    def __init__(self, services: Services, workers: int = WORKERS, notice_after: float = NOTICE_AFTER_S):
        self.services = services
        self.notice_after = notice_after
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prdigest-chat")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    def submit(
        self,
        inbound: Inbound,
        respond: Callable[[Reply], None],
        notice: Callable[[str], None] | None = None,
    ) -> Future[None] | None:
        """Queue the work and return at once; None when this event was already taken."""
        if not claim_event(self.services.store, inbound.platform, inbound.event_id):
            log.info("%s event %s delivered again: ignored", inbound.platform, inbound.event_id)
            return None
        return self._pool.submit(self._work, inbound, respond, notice)

    def message(self, inbound: Inbound) -> str | Intent:
        """What the event asks: a button's Intent, or the message's text."""
        if inbound.action is None:
            return inbound.text or ""
        try:
            return action_intent(inbound.action)
        except ValidationError:
            log.warning("a button with an unknown value: %r", inbound.action)
            return Intent("help")

    def answer(self, inbound: Inbound) -> Reply:
        card = card_of(self.services.store, inbound.platform, inbound.chat_id, inbound.card_id)
        ctx = Context(
            platform=inbound.platform,
            chat_id=inbound.chat_id,
            user_id=inbound.user_id,
            thread=Thread.model_validate(card) if card else None,
        )
        return handle(self.message(inbound), ctx, self.services)

    def _work(
        self, inbound: Inbound, respond: Callable[[Reply], None], notice: Callable[[str], None] | None
    ) -> None:
        timer = None
        if notice is not None:
            message = self.message(inbound)
            # The notice speaks the answer's language: the message's, or the button's card's.
            lang = message.lang if isinstance(message, Intent) else detect_lang(clean(message))
            timer = threading.Timer(self.notice_after, _safely, args=(notice, WORKING[lang]))
            timer.daemon = True
            timer.start()
        started = time.perf_counter()
        try:
            reply = self.answer(inbound)
        finally:
            if timer is not None:
                timer.cancel()
        log.info(
            "%s %s answered", inbound.platform, "button" if inbound.action else "message",
            extra={"platform": inbound.platform, "chat": inbound.chat_id, "event": inbound.event_id,
                   "reply": reply.kind, "ms": round((time.perf_counter() - started) * 1000, 1)},
        )  # fmt: skip
        try:
            respond(reply)
        except Exception:  # the platform refused the answer: say so in the log, and try a short apology
            log.exception("%s: could not post the answer to %s", inbound.platform, inbound.chat_id)
            _safely(respond, Reply(kind="error", lang=reply.lang, text=texts(reply.lang)["error_apology"]))


def _safely(fn: Callable[..., None], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        log.exception("a chat callback failed")
