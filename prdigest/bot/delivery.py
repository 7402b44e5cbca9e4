"""The weekly job: sync, analyse, build the report, render, deliver — exactly once per subscription and week.

A delivery key ``prdigest:<subscription>:<ISO week>`` is claimed in SQLite before posting and
completed with the platform's message id after. A second run of the same week finds it and
posts nothing (``force`` redraws the posted card and its thread instead). A claim left by a
crash between posting and completing, or by a send that failed without saying whether the
card went out (a timeout, a 5xx: "maybe posted"), is kept, never released: whoever takes it
over first looks for the key in the chat (Slack: the message metadata; Lark: the card's last
line in the chat's history, since Lark honours the message ``uuid`` for an hour only) and
posts only when it is not there. A card found has its thread completed (the replies it
lacks, each found by its own key) before the delivery is recorded: a thread reply that
failed leaves the delivery uncertain as a failed card does. A live claim of another worker
is left alone (several replicas may run the same schedule).
"""

from __future__ import annotations

import html
import logging
import os
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from rich.console import Console

from prdigest.analysis.llm.patience import waiting_out_rate_limits
from prdigest.bot.pages import page_link
from prdigest.clock import utc_now
from prdigest.config import Settings
from prdigest.errors import PrdigestError
from prdigest.models import Report, Window, iso_week_label
from prdigest.periods import last_complete_week
from prdigest.pipeline.single import make_report
from prdigest.pipeline.team import make_team_report, team_repos
from prdigest.redact import scrub_value
from prdigest.render.markdown import render_markdown
from prdigest.sources.base import Source
from prdigest.sources.prepared import in_prepared_report, prepared_report
from prdigest.sources.registry import open_source
from prdigest.storage import Store
from prdigest.storage.deliveries import (
    Busy,
    Claim,
    claim,
    complete,
    get_delivery,
    owns,
    release,
    renew,
    uncertain,
)
from prdigest.storage.subscriptions import list_subscriptions
from prdigest.subscription import Subscription

log = logging.getLogger("prdigest.delivery")

# How long a claim protects a delivery in progress from other workers.
LEASE = timedelta(minutes=15)


class DeliveryError(PrdigestError):
    """A weekly report could not be delivered."""


class Deliverer(Protocol):
    """What the weekly job needs of a platform: a chat adapter as an `AdapterDeliverer`, or the console."""

    def deliver(
        self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str
    ) -> str: ...

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        """The card ``message_id`` of delivery ``key`` is out: post the thread replies it lacks."""
        ...

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None: ...

    def find_delivery(self, chat_id: str, key: str) -> str | None: ...


@dataclass
class Outcome:
    key: str
    status: Literal["posted", "already", "updated", "recovered", "skipped", "busy"]
    message_id: str = ""
    report: Report | None = None
    # For "busy": when the other worker's claim runs out (the week may be taken over then).
    retry_at: datetime | None = None

    def describe(self) -> str:
        return f"{self.key}: {self.status}" + (f" ({self.message_id})" if self.message_id else "")


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def delivery_key(sub: Subscription, window: Window) -> str:
    return f"prdigest:{sub.id}:{iso_week_label(window.since)}"


def deliver_subscription(
    settings: Settings,
    store: Store,
    sub: Subscription,
    deliverers: dict[str, Deliverer],
    *,
    now: datetime | None = None,
    window: Window | None = None,
    force: bool = False,
    worker: str | None = None,
    lease: timedelta | None = None,
) -> Outcome:
    """Deliver the subscription's report of ``window`` (default: the last complete week before ``now``, the
    fire time of a scheduled run); its claim holds for ``lease`` unrenewed (default `LEASE`)."""
    lease = lease or LEASE
    if sub.id is None:
        raise DeliveryError("the subscription is not saved yet")
    window = window or last_complete_week(now or utc_now(), sub.tz)
    key = delivery_key(sub, window)
    deliverer = deliverers.get(sub.platform)
    if deliverer is None:
        raise DeliveryError(f"subscription {sub.id} posts to {sub.platform}, which is not configured")
    done = get_delivery(store, key)
    if done is not None and done.status in ("posted", "skipped"):
        if not force or done.status == "skipped":
            return Outcome(key, "already", done.message_id)
        report, report_url = _build(settings, store, sub, window)
        deliverer.update_report(sub.chat_id, done.message_id, report, report_url, key)
        return Outcome(key, "updated", done.message_id, report)
    try:
        claimed = claim(store, key, sub.id, iso_week_label(window.since), worker or worker_id(), lease)
    except Busy as busy:
        if busy.row.status != "claimed":
            return Outcome(key, "already", busy.row.message_id)
        return Outcome(key, "busy", retry_at=busy.row.claimed_at + lease)
    # A scheduled run (``now``: its fire time) may wait out the LLM's rate limit until its deadline.
    patience = (now + settings.schedule.deadline - utc_now()).total_seconds() if now else 0.0
    # A prepared deployment's scheduled report reads the diffs its LLM evidence needs from the cache.
    prepared = prepared_report(store) if now and settings.schedule.prepares else nullcontext()
    with heartbeat(store, key, claimed.fence, lease / 3), waiting_out_rate_limits(patience), prepared:
        return _deliver_claimed(settings, store, sub, window, deliverer, key, claimed)


def _deliver_claimed(
    settings: Settings,
    store: Store,
    sub: Subscription,
    window: Window,
    deliverer: Deliverer,
    key: str,
    claimed: Claim,
) -> Outcome:
    """The delivery of a claimed key: find an earlier run's post, or build and post; the claim's fence
    is checked before the post and when it is recorded, so a worker that lost its claim posts nothing."""
    before, fence = claimed.before, claimed.fence
    assert sub.id is not None
    try:
        if before is not None:  # not a fresh claim (a crash, a takeover, a failed send): find first
            found = deliverer.find_delivery(sub.chat_id, key)
            if found:
                report, report_url = _build(settings, store, sub, window)
                deliverer.complete_thread(sub.chat_id, found, report, report_url, key)
                complete(store, key, "posted", found, report.id, fence)
                return Outcome(key, "recovered", found, report)
        report, report_url = _build(settings, store, sub, window)
        if sub.silent_when_empty and report.stats.merged_prs == 0:
            complete(store, key, "skipped", "", None, fence)
            return Outcome(key, "skipped", "", report)
        if not owns(store, key, fence):  # the build outlasted the lease and another worker took over
            log.warning("delivery %s: the claim was taken over while the report was built; not posting", key)
            return Outcome(key, "busy")
    except BaseException:
        if before is None:
            release(store, key, fence)  # nothing was sent: the next run claims afresh
        else:
            uncertain(store, key, fence)  # still not known whether an earlier run's post went out
        raise
    try:
        message_id = deliverer.deliver(sub.chat_id, report, key, report_url, render_markdown(report))
    except BaseException:
        # Maybe posted (a timeout, a 5xx, a lost answer): the claim stays, open to the next run,
        # which looks in the chat before it posts.
        uncertain(store, key, fence)
        raise
    complete(store, key, "posted", message_id, report.id, fence)
    return Outcome(key, "posted", message_id, report)


def redraw_delivered(
    settings: Settings,
    store: Store,
    deliverers: dict[str, Deliverer],
    chat: tuple[str, str],
    repo: str,
    window: Window,
) -> list[Outcome]:
    """The weekly cards of ``window``'s week posted in ``chat`` (platform, chat id) that report ``repo``
    (a team's too), built again and redrawn in place: after a button changed what they say."""
    outcomes = []
    for sub in list_subscriptions(store, *chat):
        done = get_delivery(store, delivery_key(sub, window))
        if done is None or done.status != "posted" or repo not in (sub.repo, *team_repos(settings, sub)):
            continue
        outcomes.append(deliver_subscription(settings, store, sub, deliverers, window=window, force=True))
    return outcomes


@contextmanager
def heartbeat(store: Store, key: str, fence: int, every: timedelta) -> Iterator[None]:
    """Renew claim ``fence``'s lease every ``every`` while the block runs (a build may outlast the
    lease); a daemon thread, stopped when the block ends."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every.total_seconds()):
            try:
                if not renew(store, key, fence):
                    return  # taken over or completed: nothing left to renew
            except PrdigestError as exc:  # a busy database: the next beat tries again
                log.warning("delivery %s: the lease could not be renewed: %s", key, exc)

    thread = threading.Thread(target=beat, name=f"prdigest-lease-{key}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def _build(settings: Settings, store: Store, sub: Subscription, window: Window) -> tuple[Report, str | None]:
    """The subscription's report (a team's: its repositories' in one), saved, and the address of its page
    when there is a public URL. A prepared deployment's scheduled report (``prepared_report``) reads only the
    days the cache lacks: the prepare synced the rest, and a repository reported in two languages, or in
    two teams, is read once."""
    refresh = not in_prepared_report()
    if sub.is_team:
        report = make_team_report(settings, store, sub, window, save=True, refresh=refresh)
    else:
        source = subscription_source(settings, sub)
        report = make_report(
            settings, store, source, window, repo=sub.repo, lang=sub.lang, save=True, subscription=sub,
            refresh=refresh,
        )  # fmt: skip
    # Scrubbed as every other output is: PR text and warnings may quote a configured secret.
    report = scrub_value(report)
    for shown in (report, *report.parts):
        shown.card_prs = sub.top_n  # what the card lists, never what the figures count
    return report, page_link(settings, store, report.id, sub.chat_id)


def subscription_source(settings: Settings, sub: Subscription) -> Source | None:
    """The clone the subscription names, else the repository's configured source (or none: the cache)."""
    return open_source(settings, sub.git_path, None, sub.repo)


def subscription_source_words(settings: Settings, sub: Subscription) -> str:
    """What a delivery of ``sub`` reads, in words, without opening it: "git <clone>", "github", or
    "cache" when a GitHub repository has no token to read it with; a team's, repository by repository."""
    if sub.owner is not None:
        return "each repository's own source"
    if sub.repos:
        return "; ".join(f"{repo}: {_source_words(settings, None, repo)}" for repo in sub.repos)
    return _source_words(settings, sub.git_path, sub.repo)


def _source_words(settings: Settings, git_path: str | None, repo: str) -> str:
    clone = git_path or settings.repo(repo).git
    if clone:
        return f"git {clone}"
    return "github" if settings.github.authenticated else "cache (no GitHub token)"


class ConsoleDeliverer:
    """Console subscriptions, for trying schedules out locally: what a chat is sent, printed: the card,
    the report as Markdown when it has no page, then the card's thread replies."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console()

    def deliver(self, chat_id: str, report: Report, key: str, report_url: str | None, markdown: str) -> str:
        from rich.markdown import Markdown

        from prdigest.render.slack import render_slack_message

        self._panel(render_slack_message(report, report_url), key)
        if report_url is None:
            self.console.print(Markdown(markdown))
        self.complete_thread(chat_id, f"console:{key}", report, report_url, key)
        return f"console:{key}"

    def complete_thread(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        from prdigest.render.slack import render_slack_thread

        thread = render_slack_thread(report, report_url)
        for index, message in enumerate(thread, 1):
            self._panel(message, f"{key} · {index}/{len(thread)}")

    def _panel(self, message: dict[str, Any], title: str) -> None:
        from rich.panel import Panel
        from rich.text import Text

        self.console.print(Panel(Text(slack_plain(message)), title=title))

    def update_report(
        self, chat_id: str, message_id: str, report: Report, report_url: str | None, key: str
    ) -> None:
        self.deliver(chat_id, report, key, report_url, render_markdown(report))

    def find_delivery(self, chat_id: str, key: str) -> str | None:
        return None


_SLACK_LINK = re.compile(r"<([^<>|]+)\|([^<>]+)>")


def slack_plain(message: dict[str, Any]) -> str:
    """A Slack message's visible text (header, sections, fields, context), each link as its label."""
    texts: list[str] = []
    for block in message.get("blocks", []):
        parts = [block.get("text"), *block.get("fields", []), *block.get("elements", [])]
        texts += [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return html.unescape(_SLACK_LINK.sub(r"\2", "\n".join(texts)))
