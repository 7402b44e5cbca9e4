"""What every chat adapter shares: the Inbound event, de-duplication, and work after the ack.

An adapter turns a platform event into an `Inbound`, calls `BotCore.submit` (which
returns at once, so the platform gets its ack within its deadline), and gives it a
`respond` callback that posts the Reply. The work runs in two lanes of bounded pools
(cached answers apart from LLM calls and source reads); when a request is not answered a
few seconds after its submission, queued or running, the adapter's `notice` callback says
"working on it".
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from prdigest.bot.delivery import worker_id
from prdigest.handlers import Context, Reply, Services
from prdigest.handlers.commands import Intent
from prdigest.handlers.context import Thread
from prdigest.handlers.dispatch import answer
from prdigest.handlers.lanes import SLOW, Lane, lane_of
from prdigest.handlers.request import Reading, Request, read
from prdigest.i18n import texts
from prdigest.models import Platform, Window
from prdigest.render.views import ActionValue
from prdigest.storage.cards import card_of
from prdigest.storage.direct_chats import is_direct, remember_direct
from prdigest.storage.events import answered, claim_event

log = logging.getLogger("prdigest.bot")

WORKERS = 4  # the slow lane: LLM calls, source reads, long reports
FAST_WORKERS = 4  # the fast lane: every request's claim and lane, then answers from the cache
SEEN_EVENTS = 10_000  # event ids remembered in memory; retries come within minutes
WARM_KEYS = 1_024
NOTICE_AFTER_S = 3.0
WORKING = {"zh": "正在处理，请稍候……", "en": "Working on it…"}


class Inbound(BaseModel):
    """One chat event, whatever the platform."""

    platform: Platform
    event_id: str  # the platform's id of this delivery's event: the de-duplication key
    chat_id: str
    user_id: str
    text: str | None = None  # a message or a slash command's text
    action: dict[str, Any] | None = None  # a button's value (an ActionValue payload)
    thread_id: str | None = None  # where the answer goes: a Slack thread_ts, a Lark message id
    card_id: str | None = None  # the bot's card a message answers in the thread of, if any
    message_id: str | None = None  # the card a button sits on, to update it
    direct: bool = False  # a direct message (a Lark button cannot tell: its chat is looked up)


KEY_PRS_SHOWN = 10


def _chat(inbound: Inbound) -> tuple[str, str]:
    return inbound.platform, inbound.chat_id


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
    if action.action == "open":  # what is open now, whichever week the card is of
        return Intent("open", lang=lang, repo=repo)
    if action.action in (
        "ack",
        "snooze",
    ):  # an open PR (its number) or a risk (its label), of the card's week
        return Intent(
            action.action, lang=lang, repo=repo, window=window, pr=action.number, args=action.label or ""
        )
    span = action.until - action.since + timedelta(days=1)  # "another week": the one before
    before = Window(since=action.since - span, until=action.until - span, tz=action.tz)
    return Intent("report", lang=lang, repo=repo, window=before)


@dataclass
class _Job:
    """One request from its submission to its answer: the message is read once, as it is submitted (its
    language is the notice's and the answer's); its context once, in the fast lane."""

    inbound: Inbound
    reading: Reading
    respond: Callable[[Reply], None]
    notice: Callable[[str], None] | None
    done: Future[None] = field(default_factory=Future)
    notice_timer: _Timer | None = None
    fence: int = 0  # this worker's claim of the event


class BotCore:
    """Chat work in two lanes of bounded pools. Every request starts in the fast lane, which claims
    the event and decides its lane (`handlers.lanes`); cached answers run there at once, LLM calls,
    source reads and long reports go on to the slow lane, so they never hold up a cached answer.
    The "working on it" notice counts from the submission: a request waiting in a queue gets it too."""

    def __init__(
        self,
        services: Services,
        workers: int = WORKERS,
        notice_after: float = NOTICE_AFTER_S,
        fast_workers: int = FAST_WORKERS,
    ):
        self.services = services
        self.notice_after = notice_after
        self._fast = ThreadPoolExecutor(max_workers=fast_workers, thread_name_prefix="prdigest-chat-fast")
        self._slow = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prdigest-chat-slow")
        self._clock = _NoticeClock()
        self._lock = threading.Lock()
        # Event ids seen by this process: a retry is dropped at once, without a database write on the
        # ack path; the claim in the database (in the fast lane) still makes it once across restarts.
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._warm: OrderedDict[Hashable, None] = OrderedDict()  # see handlers.lanes.Lane.warms

    def close(self) -> None:
        """Finish every request taken: the fast lane first, as it hands requests to the slow one."""
        self._fast.shutdown(wait=True)
        self._slow.shutdown(wait=True)
        self._clock.stop()

    def submit(
        self,
        inbound: Inbound,
        respond: Callable[[Reply], None],
        notice: Callable[[str], None] | None = None,
        reading: Reading | None = None,
    ) -> Future[None] | None:
        """Queue the work and return at once: a future done once the answer is posted; None when this
        process has seen the event already. ``reading``: the event as the adapter read it already (to
        ack it in its language), else read here."""
        key = (inbound.platform, inbound.event_id)
        with self._lock:
            if key in self._seen:
                log.info("%s event %s delivered again: ignored", *key)
                return None
            self._seen[key] = None
            if len(self._seen) > SEEN_EVENTS:
                self._seen.popitem(last=False)
        job = _Job(inbound, reading or self.read(inbound), respond, notice)
        if notice is not None:
            job.notice_timer = self._clock.after(self.notice_after, lambda: self._notify(job))
        try:
            self._fast.submit(self._triage, job)
        except RuntimeError:  # closed: no work, no notice
            if job.notice_timer is not None:
                job.notice_timer.cancel()
            raise
        return job.done

    def read(self, inbound: Inbound) -> Reading:
        """What the event asks, read by the rules: a button's Intent, or the message's text."""
        if inbound.action is None:
            return read(inbound.text or "")
        try:
            return read(action_intent(inbound.action))
        except ValidationError:
            log.warning("a button with an unknown value: %r", inbound.action)
            return read(Intent("help"))

    def context(self, inbound: Inbound) -> Context:
        store = self.services.store
        card = card_of(store, inbound.platform, inbound.chat_id, inbound.card_id)
        return Context(
            platform=inbound.platform,
            chat_id=inbound.chat_id,
            user_id=inbound.user_id,
            # A button says nothing of its chat: a direct message's first message did (remembered).
            direct=inbound.direct or (inbound.action is not None and is_direct(store, *_chat(inbound))),
            thread=Thread.model_validate(card) if card else None,
        )

    def request(self, inbound: Inbound, reading: Reading | None = None) -> Request:
        return Request(reading or self.read(inbound), self.context(inbound))

    def answer(self, req: Request) -> Reply:
        return answer(req, self.services)

    def lane(self, req: Request) -> Lane:
        try:
            with self._lock:
                warm = set(self._warm)
            return lane_of(req, self.services, warm)
        except Exception:  # the handler will say what is wrong; it may take its time
            log.exception("could not tell the lane of a %s event", req.ctx.platform)
            return SLOW

    def _triage(self, job: _Job) -> None:
        inbound = job.inbound
        try:
            if inbound.direct:  # for the buttons of the cards answered there
                remember_direct(self.services.store, *_chat(inbound))
            fence = claim_event(self.services.store, inbound.platform, inbound.event_id, worker_id())
            if fence is None:
                log.info("%s event %s was taken already: ignored", inbound.platform, inbound.event_id)
                if job.notice_timer is not None:
                    job.notice_timer.cancel()
                job.done.set_result(None)
                return
            job.fence = fence
            req = self.request(inbound, job.reading)
            lane = self.lane(req)
        except BaseException as exc:
            if job.notice_timer is not None:
                job.notice_timer.cancel()
            job.done.set_exception(exc)
            raise
        if lane.slow:
            self._slow.submit(self._run, job, req, lane)
        else:
            self._run(job, req, lane)

    def _run(self, job: _Job, req: Request, lane: Lane) -> None:
        inbound = job.inbound
        try:
            try:
                self._work(job, req, lane)
            finally:  # a handler that failed would fail again on the platform's retry
                if not answered(self.services.store, inbound.platform, inbound.event_id, job.fence):
                    log.warning("%s event %s was taken over by another worker while answered here",
                                inbound.platform, inbound.event_id)  # fmt: skip
        except BaseException as exc:
            job.done.set_exception(exc)
            raise
        job.done.set_result(None)

    def _notify(self, job: _Job) -> None:
        assert job.notice is not None
        _safely(job.notice, WORKING[job.reading.lang])  # the answer's language

    def _work(self, job: _Job, req: Request, lane: Lane) -> None:
        inbound = job.inbound
        started = time.perf_counter()
        try:
            reply = self.answer(req)
        finally:
            if job.notice_timer is not None:
                job.notice_timer.cancel()
        if lane.warms is not None and _warmed(reply):
            with self._lock:
                self._warm[lane.warms] = None
                if len(self._warm) > WARM_KEYS:
                    self._warm.popitem(last=False)
        log.debug(  # the command's own line is the handlers' (its name, chat, outcome and time)
            "%s %s answered", inbound.platform, "button" if inbound.action else "message",
            extra={"platform": inbound.platform, "chat": inbound.chat_id, "event": inbound.event_id,
                   "reply": reply.kind, "lane": "slow" if lane.slow else "fast",
                   "ms": round((time.perf_counter() - started) * 1000, 1)},
        )  # fmt: skip
        respond = job.respond
        try:
            respond(reply)
        except Exception:  # the platform refused the answer: say so in the log, and try a short apology
            log.exception("%s: could not post the answer to %s", inbound.platform, inbound.chat_id)
            _safely(respond, Reply(kind="error", lang=reply.lang, text=texts(reply.lang)["error_apology"]))


class _Timer:
    def __init__(self, at: float, fn: Callable[[], None]):
        self.at, self.fn, self.cancelled = at, fn, False

    def cancel(self) -> None:
        self.cancelled = True


class _NoticeClock:
    """One daemon thread for every request's notice timer (not a thread per request on the ack path);
    a notice is one short post, made from this thread."""

    def __init__(self) -> None:
        self._timers: list[tuple[float, int, _Timer]] = []
        self._count = itertools.count()
        self._changed = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def after(self, delay: float, fn: Callable[[], None]) -> _Timer:
        timer = _Timer(time.monotonic() + delay, fn)
        with self._changed:
            heapq.heappush(self._timers, (timer.at, next(self._count), timer))
            if self._thread is None and not self._stopping:
                self._thread = threading.Thread(target=self._loop, name="prdigest-chat-notices", daemon=True)
                self._thread.start()
            self._changed.notify()
        return timer

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        while True:
            with self._changed:
                while not self._stopping and (not self._timers or self._timers[0][0] > time.monotonic()):
                    wait = self._timers[0][0] - time.monotonic() if self._timers else None
                    self._changed.wait(wait)
                if self._stopping:
                    return
                timer = heapq.heappop(self._timers)[2]
            if not timer.cancelled:
                timer.fn()


def _warmed(reply: Reply) -> bool:
    """Whether the LLM's caches now hold what the reply needed: not when the LLM fell short (it is tried
    again next time, which must not happen in the fast lane)."""
    if reply.kind == "error":
        return False
    usage = reply.report.llm_usage if reply.report is not None else None
    return usage is None or (usage.narrative == "llm" and usage.fallback == 0)


def _safely(fn: Callable[..., None], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        log.exception("a chat callback failed")
