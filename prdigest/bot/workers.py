"""`prdigest worker`: the weekly deliveries as procrastinate jobs on the PostgreSQL store, run by as many
worker processes as wanted, on any machine (with SQLite, `serve`'s own scheduler runs them: scheduler.py).

- ``dispatch``, each minute and when a worker starts: defers ``deliver`` for every subscription whose
  fire time passed within the grace period and whose week is not posted. The delivery key is the job's
  queueing lock (one job waiting per key) and its lock (one running). Every tick looks back over the
  whole grace period, so ticks missed while every worker was down are caught by the next.
- ``deliver``: `deliver_subscription`. Its claim, renewed while the report is built, its fences and its
  search of the chat for an earlier post make a job that runs twice, or is taken over from a worker that
  died, post one card. A failed run is retried with the scheduler's backoff (1 minute, doubled up to 30);
  one whose next try would fall past the grace period gives the week up (recorded, admins told).
- ``prepare``, daily at ``[schedule] prepare_at``: a job per subscribed repository, the repository its
  lock, syncs and analyses it ahead of its reports (pipeline/prepare.py).
- ``retry_stalled``, each minute: the jobs of a worker whose heartbeat stopped (killed, its host lost)
  run again on another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from prdigest.bot.delivery import Deliverer, deliver_subscription, delivery_key
from prdigest.bot.give_up import report_give_up
from prdigest.bot.scheduler import GRACE, last_fire, retry_wait
from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.metrics import count_delivery
from prdigest.models import iso_week_label
from prdigest.periods import last_complete_week
from prdigest.pipeline.prepare import prepare_repo, subscribed_repos
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.deliveries import get_delivery, give_up
from prdigest.storage.subscriptions import get_subscription, list_subscriptions

log = logging.getLogger("prdigest.worker")

DISPATCH_LOCK = "prdigest-dispatch"  # one dispatch waiting at a time, whichever worker runs it
DONE = ("posted", "skipped", "given_up")  # a week in one of these is not dispatched again


@dataclass
class Runtime:
    """What the tasks run with, in the worker process that runs them."""

    settings: Settings
    store: Store
    deliverers: dict[str, Deliverer]
    grace: timedelta = GRACE


@dataclass
class Jobs:
    """The procrastinate app and its tasks; ``runtime`` is set in the process that runs them."""

    app: Any
    dispatch: Any
    deliver: Any
    prepare: Any
    runtime: dict[str, Runtime]


def _backoff() -> Any:
    import procrastinate

    class Backoff(procrastinate.BaseRetryStrategy):
        """A failed delivery tried again after `retry_wait` (its give-up past the grace is the task's)."""

        def get_retry_decision(self, *, exception: BaseException, job: Any) -> Any:
            wait = retry_wait(job.attempts + 1)
            return procrastinate.RetryDecision(retry_in={"seconds": int(wait.total_seconds())})

    return Backoff


def build_jobs(settings: Settings) -> Jobs:
    """The procrastinate app of the settings' PostgreSQL store, its tasks registered (not yet opened)."""
    import procrastinate

    Backoff = _backoff()

    store_url = settings.storage.store
    connector = procrastinate.PsycopgConnector(
        kwargs=store_url.connect_kwargs(settings.storage.password),
        min_size=1,
        max_size=settings.workers.concurrency + 3,  # the jobs', the heartbeat's, the listener's
    )
    app: Any = procrastinate.App(connector=connector)  # Any: mypy 1.13 crashes on its typed decorators
    runtime: dict[str, Runtime] = {}
    workers = settings.workers

    def deliver_one(context: Any, subscription_id: int, fired: str) -> str:
        rt = runtime["rt"]
        sub = get_subscription(rt.store, subscription_id)
        if sub is None:
            return "unsubscribed"
        fired_at = datetime.fromisoformat(fired)
        try:
            outcome = deliver_subscription(
                rt.settings, rt.store, sub, rt.deliverers, now=fired_at, lease=rt.settings.workers.lease
            )
        except Exception:
            attempt = context.job.attempts + 1
            log.exception("weekly report of %s to %s:%s failed (attempt %d)",
                          sub.repo, sub.platform, sub.chat_id, attempt)  # fmt: skip
            count_delivery("failed")
            if utc_now() + retry_wait(attempt) - fired_at <= rt.grace:
                raise  # retried by the task's strategy
            week = last_complete_week(fired_at, sub.tz)
            key = delivery_key(sub, week)
            assert sub.id is not None
            give_up(rt.store, key, sub.id, iso_week_label(week.since))
            report_give_up(rt.settings, rt.deliverers.get(sub.platform), sub, key)
            return "given_up"
        count_delivery(outcome.status)
        log.info("delivery %s", outcome.describe())
        return outcome.status

    def dispatch_due(timestamp: int = 0) -> int:
        return len(due_deliveries(runtime["rt"], deliver))

    def prepare_one(repo: str) -> str:
        rt = runtime["rt"]
        done = prepare_repo(rt.settings, rt.store, repo, source_factory(rt.settings)(repo), utc_now())
        log.info("prepare %s", done.describe())
        return done.describe()

    def dispatch_prepares(timestamp: int = 0) -> int:
        return len(defer_prepares(runtime["rt"], prepare))

    async def retry_stalled(timestamp: int) -> int:
        manager = app.job_manager
        stalled = list(await manager.get_stalled_jobs(seconds_since_heartbeat=workers.stalled_after_seconds))
        for job in stalled:
            log.warning("job %s (%s) of a silent worker: run again", job.id, job.task_name)
            try:
                await manager.retry_job(job)
            except procrastinate.exceptions.UniqueViolation:
                # The next tick deferred the same delivery meanwhile (its queueing lock): that one runs,
                # once this one, which holds its lock, has ended.
                await manager.finish_job_by_id_async(
                    job.id, procrastinate.jobs.Status.FAILED, delete_job=False
                )
        return len(stalled)

    deliver = app.task(name="prdigest.deliver", queue="deliveries", pass_context=True, retry=Backoff())(
        deliver_one
    )
    dispatch = app.task(name="prdigest.dispatch", queue="dispatch", queueing_lock=DISPATCH_LOCK)(dispatch_due)
    app.periodic(cron=settings.workers.cron, periodic_id="dispatch")(dispatch)
    prepare = app.task(name="prdigest.prepare", queue="prepare")(prepare_one)
    if settings.schedule.prepares:
        hour, minute = settings.schedule.prepare_at.split(":")
        prepares = app.task(
            name="prdigest.dispatch_prepares", queue="dispatch", queueing_lock="prdigest-prepares"
        )
        app.periodic(cron=f"{int(minute)} {int(hour)} * * *", periodic_id="prepare")(
            prepares(dispatch_prepares)
        )
    stalled_task = app.task(name="prdigest.retry_stalled", queue="dispatch", queueing_lock="prdigest-stalled")
    app.periodic(cron=settings.workers.cron, periodic_id="retry_stalled")(stalled_task(retry_stalled))
    return Jobs(app, dispatch, deliver, prepare, runtime)


def due_deliveries(rt: Runtime, deliver: Any, now: datetime | None = None) -> list[str]:
    """Defer the deliveries due at ``now`` that are neither posted nor waiting; their keys."""
    from procrastinate.exceptions import AlreadyEnqueued

    now = now or utc_now()
    deferred = []
    for sub in list_subscriptions(rt.store):
        fired = last_fire(sub, now)
        if now - fired > rt.grace or sub.id is None:
            continue
        key = delivery_key(sub, last_complete_week(fired, sub.tz))
        done = get_delivery(rt.store, key)
        if done is not None and done.status in DONE:
            continue
        if done is not None and now - done.claimed_at < rt.settings.workers.lease:
            continue  # a live claim: its worker is on it (one that dies lets the lease run out)
        try:
            job = deliver.configure(lock=key, queueing_lock=key)
            job.defer(subscription_id=sub.id, fired=fired.isoformat())
        except AlreadyEnqueued:
            continue  # one is waiting already
        deferred.append(key)
    if deferred:
        log.info("dispatched %d deliveries: %s", len(deferred), ", ".join(deferred))
    return deferred


def defer_prepares(rt: Runtime, prepare: Any) -> list[str]:
    """Defer a prepare of every subscribed repository not already waiting; the repositories deferred. The
    repository is the job's lock: two workers never prepare one at once."""
    from procrastinate.exceptions import AlreadyEnqueued

    deferred = []
    for repo in subscribed_repos(rt.settings, rt.store):
        with contextlib.suppress(AlreadyEnqueued):  # one is waiting already
            prepare.configure(lock=f"prepare:{repo}", queueing_lock=f"prepare:{repo}").defer(repo=repo)
            deferred.append(repo)
    log.info("dispatched the prepare of %d repositories", len(deferred))
    return deferred


def run(settings: Settings, store: Store) -> None:
    """`prdigest worker`: post-only clients of the configured chat platforms, then jobs until SIGTERM."""
    from prdigest.bot.delivery import ConsoleDeliverer
    from prdigest.bot.platforms import chat_adapters
    from prdigest.bot.service import sync_config_subscriptions
    from prdigest.logs import adopt_library_loggers
    from prdigest.redact import secrets_of, use_secrets

    use_secrets(secrets_of(settings))  # masked in every card and log line
    sync_config_subscriptions(settings, store)  # the file's [[subscriptions]], as `serve` saves them
    deliverers: dict[str, Deliverer] = {"console": ConsoleDeliverer()}
    for platform, _, deliverer in chat_adapters(settings, None, None, store):
        deliverers[platform] = deliverer
    adopt_library_loggers()
    try:
        run_worker(settings, store, deliverers)
    finally:
        store.close()


def run_worker(settings: Settings, store: Store, deliverers: dict[str, Deliverer]) -> None:
    """Run jobs until SIGTERM or SIGINT (procrastinate's own handlers: running jobs finish first)."""
    from procrastinate.exceptions import AlreadyEnqueued

    jobs = build_jobs(settings)
    jobs.runtime["rt"] = Runtime(settings, store, deliverers)
    stalled = settings.workers.stalled_after_seconds
    with jobs.app.open():
        _apply_schema(jobs.app, store)
        with contextlib.suppress(AlreadyEnqueued):  # another worker's is waiting
            jobs.dispatch.defer()  # at start: the weeks due while no worker ran
    work_on(
        jobs.app,
        settings.workers.concurrency,
        queues=["dispatch", "deliveries", "prepare"],
        update_heartbeat_interval=stalled / 3,
        stalled_worker_timeout=stalled,
        delete_jobs="successful",
    )


def work_on(app: Any, concurrency: int, **options: Any) -> None:
    """procrastinate's `App.run_worker`, with ``concurrency`` threads for sync jobs: procrastinate runs
    them on the loop's default executor, whose min(32, cores + 4) threads would hold a 2-core worker to
    6 deliveries at a time whatever its concurrency."""

    async def work() -> None:
        # Two more than the jobs: the loop's own calls (getaddrinfo for a new connection) never wait.
        executor = ThreadPoolExecutor(concurrency + 2, thread_name_prefix="prdigest-job")
        asyncio.get_running_loop().set_default_executor(executor)
        async with app.open_async():
            await app.run_worker_async(concurrency=concurrency, **options)

    asyncio.run(work())


def _apply_schema(app: Any, store: Store) -> None:
    """procrastinate's tables, created by the first worker (under a lock: workers may start together)."""
    with store.writing() as tx:
        tx.lock("procrastinate schema")
        found = tx.one("select to_regclass('procrastinate_jobs') is not null as present")
        if found and found["present"]:
            return
        tx.run(app.schema_manager.get_schema())
