"""One weekly cron job per subscription, in its own timezone, and the daily prepare of every subscribed
repository (APScheduler; the only module importing it).

Jobs are rebuilt from the subscriptions at start and whenever chat changes them. A run reports
the last complete ISO week before its fire time. A run missed by less than the grace period
(a restart, a busy machine) still happens: at start, and through APScheduler's misfire grace;
the delivery key makes every extra run a no-op. A run that fails (the chat API down, rate
limited, a send that timed out) is retried by a one-off job with exponential backoff while
the service runs, until the grace period ends; then the week is given up, logged and told to
the chat's admins (give_up.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from time import perf_counter
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from prdigest.bot.delivery import Deliverer, Outcome, deliver_subscription, delivery_key
from prdigest.bot.give_up import report_give_up
from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.metrics import count_delivery
from prdigest.periods import last_complete_week
from prdigest.pipeline.prepare import Prepared, prepare_all
from prdigest.storage import Store
from prdigest.storage.subscriptions import get_subscription, list_subscriptions
from prdigest.subscription import WEEKDAYS, Subscription

log = logging.getLogger("prdigest.scheduler")

GRACE = timedelta(hours=6)
JOB_PREFIX = "weekly-"
PREPARE_JOB = "prepare"
RETRY_PREFIX = "retry-"
RETRY_FIRST = timedelta(minutes=1)  # the first retry of a failed run; doubled each time
RETRY_MAX = timedelta(minutes=30)  # the longest wait between two retries


def retry_wait(attempt: int) -> timedelta:
    """How long a weekly run that failed ``attempt`` times waits before its next try."""
    wait: timedelta = min(RETRY_MAX, RETRY_FIRST * 2 ** (attempt - 1))
    return wait


def trigger_for(sub: Subscription) -> CronTrigger:
    hour, minute = (int(part) for part in sub.time.split(":"))
    # Named weekdays: APScheduler numbers them from Monday = 0, unlike crontab.
    return CronTrigger(day_of_week=sub.day, hour=hour, minute=minute, timezone=ZoneInfo(sub.tz))


def last_fire(sub: Subscription, now: datetime) -> datetime:
    """The most recent scheduled time of the subscription at or before ``now``."""
    zone = ZoneInfo(sub.tz)
    local = now.astimezone(zone)
    hour, minute = (int(part) for part in sub.time.split(":"))
    days_back = (local.weekday() - WEEKDAYS.index(sub.day)) % 7
    fire = datetime.combine(local.date() - timedelta(days=days_back), time(hour, minute), zone)
    # Compare instants, not wall clocks: aware datetimes of one zone compare by wall clock,
    # which is wrong across a daylight-saving change.
    return fire if fire.timestamp() <= now.timestamp() else fire - timedelta(days=7)


class WeeklyScheduler:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        deliverers: dict[str, Deliverer],
        *,
        grace: timedelta = GRACE,
        clock: Callable[[], datetime] = utc_now,
    ):
        self.settings = settings
        self.store = store
        self.deliverers = deliverers
        self.grace = grace
        self.clock = clock
        self._lock = threading.Lock()
        self._failing: dict[int | None, str] = {}  # subscription -> the key of the week its last run failed
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            job_defaults={
                "misfire_grace_time": int(grace.total_seconds()),
                "coalesce": True,
                "max_instances": 1,
            },
        )

    def start(self, paused: bool = False) -> None:
        self.rebuild()
        self._scheduler.start(paused=paused)

    def shutdown(self) -> None:
        """Stop firing; a delivery already running finishes (or leaves its key claimable)."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running)

    def failing(self) -> list[str]:
        """The delivery keys whose last run failed (retried, or given up until a later run succeeds)."""
        with self._lock:
            return sorted(self._failing.values())

    def rebuild(self) -> None:
        """One job per subscription, replacing the old set (called when chat changes them)."""
        with self._lock:
            subs = list_subscriptions(self.store)
            wanted = {f"{JOB_PREFIX}{s.id}" for s in subs}
            for job in self._scheduler.get_jobs():
                if job.id.startswith(JOB_PREFIX) and job.id not in wanted:
                    job.remove()
            if self.settings.schedule.prepares:
                hour, minute = (int(part) for part in self.settings.schedule.prepare_at.split(":"))
                self._scheduler.add_job(
                    self.prepare, CronTrigger(hour=hour, minute=minute, timezone=UTC), id=PREPARE_JOB,
                    replace_existing=True, name="prepare every subscribed repository",
                )  # fmt: skip
            for sub in subs:
                self._scheduler.add_job(
                    self.run,
                    trigger_for(sub),
                    id=f"{JOB_PREFIX}{sub.id}",
                    args=[sub.id],
                    replace_existing=True,
                    name=f"{sub.repo} -> {sub.platform}:{sub.chat_id}",
                )

    def next_run(self, sub_id: int) -> datetime | None:
        job = self._scheduler.get_job(f"{JOB_PREFIX}{sub_id}")
        return job.next_run_time if job else None

    def catch_up(self) -> list[Outcome]:
        """Deliver the weeks whose time passed less than the grace period ago and are not yet delivered."""
        now = self.clock()
        outcomes = []
        for sub in list_subscriptions(self.store):
            fired = last_fire(sub, now)
            if now - fired <= self.grace:
                outcome = self._deliver(sub, fired)
                if outcome is not None:
                    outcomes.append(outcome)
        return outcomes

    def prepare(self) -> list[Prepared]:
        """Sync and analyse every subscribed repository ahead of its reports (pipeline/prepare.py)."""
        return prepare_all(self.settings, self.store, self.clock())

    def run(self, sub_id: int) -> Outcome | None:
        sub = get_subscription(self.store, sub_id)
        if sub is None:  # removed since the job was scheduled
            return None
        # The week of the time it was due, not of the time the job woke: one woken late past midnight
        # into Monday would otherwise report the week after the one the catch-up reports.
        return self._deliver(sub, last_fire(sub, self.clock()))

    def retry_job(self, sub: Subscription, fired: datetime) -> tuple[datetime, Callable[[], object]] | None:
        """The latest retry of the week of ``fired`` (when it runs, and the run itself), if any."""
        jobs = self._retries(sub, fired)
        if not jobs:
            return None
        job = max(jobs, key=lambda job: int(job.id.rpartition("#")[2]))
        return job.trigger.run_date, lambda: job.func(*job.args)

    def _retries(self, sub: Subscription, fired: datetime) -> list[Any]:
        prefix = f"{RETRY_PREFIX}{self._key(sub, fired)}#"
        return [job for job in self._scheduler.get_jobs() if job.id.startswith(prefix)]

    @staticmethod
    def _key(sub: Subscription, fired: datetime) -> str:
        return delivery_key(sub, last_complete_week(fired, sub.tz))

    def _retry_later(self, sub: Subscription, fired: datetime, attempt: int) -> None:
        """Retry a failed run with backoff while the grace period lasts; after it, give up."""
        at = self.clock() + retry_wait(attempt)
        if at - fired > self.grace:
            for job in self._retries(sub, fired):
                job.remove()
            report_give_up(self.settings, self.deliverers.get(sub.platform), sub, self._key(sub, fired))
            return
        if self._scheduler.running:
            # One id per attempt: the job that runs now is removed by APScheduler once fired,
            # which must not take the next attempt's job with it.
            self._scheduler.add_job(
                self._deliver, "date", run_date=at, args=[sub, fired, attempt],
                id=f"{RETRY_PREFIX}{self._key(sub, fired)}#{attempt}", replace_existing=True,
                misfire_grace_time=None,
            )  # fmt: skip

    def _deliver(self, sub: Subscription, fired: datetime, attempt: int = 0) -> Outcome | None:
        started = perf_counter()
        fields = {"subscription": sub.id, "repo": sub.repo, "platform": sub.platform, "chat": sub.chat_id}
        try:
            outcome = deliver_subscription(self.settings, self.store, sub, self.deliverers, now=fired)
        except Exception:
            log.exception(
                "weekly report of %s to %s:%s failed (attempt %d)",
                sub.repo, sub.platform, sub.chat_id, attempt + 1, extra=fields,
            )  # fmt: skip
            count_delivery("failed")
            with self._lock:
                self._failing[sub.id] = self._key(sub, fired)
            self._retry_later(sub, fired, attempt + 1)
            return None
        count_delivery(outcome.status)
        with self._lock:
            self._failing.pop(sub.id, None)
        ms = round((perf_counter() - started) * 1000, 1)
        log.info(
            "weekly report %s to %s:%s in %.0f ms",
            outcome.describe(),
            sub.platform,
            sub.chat_id,
            ms,
            extra={**fields, "status": outcome.status, "ms": ms},
        )
        if (
            outcome.retry_at is not None
            and outcome.retry_at - fired <= self.grace
            and self._scheduler.running
        ):
            # Another worker holds the week, maybe one that died before a restart: look again
            # when its claim runs out, so the week is not lost until next week's fire.
            self._scheduler.add_job(
                self._deliver, "date", run_date=outcome.retry_at + timedelta(seconds=5), args=[sub, fired],
                id=f"{RETRY_PREFIX}{outcome.key}", replace_existing=True,
            )  # fmt: skip
        return outcome
