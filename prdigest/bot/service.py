"""`prdigest serve`: the chat adapters, the weekly scheduler and the web app in one process.

A platform that cannot be reached (or refuses its credentials) at start is connected in the
background (connector.py) while the rest runs; /readyz says what is not ready, /metrics counts.
SIGTERM (or Ctrl-C) stops it cleanly: no new work is taken, running deliveries finish
(or leave their key claimable), the cache is closed after everything that writes to it.
"""

from __future__ import annotations

import logging
import signal
import threading

from prdigest.bot.adapters import ChatAdapter
from prdigest.bot.app import BotCore
from prdigest.bot.connector import Connector
from prdigest.bot.delivery import ConsoleDeliverer, Deliverer, redraw_delivered
from prdigest.bot.membership import Lookup, Membership
from prdigest.bot.pages import report_pages
from prdigest.bot.readiness import Readiness, database_check, last_delivery_check, scheduler_check
from prdigest.bot.scheduler import WeeklyScheduler
from prdigest.bot.web import WebApp
from prdigest.config import Settings
from prdigest.handlers import Services
from prdigest.logs import adopt_library_loggers
from prdigest.metrics import Metrics, use
from prdigest.models import Window
from prdigest.redact import secrets_of, use_secrets
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import list_subscriptions, save_subscription
from prdigest.subscription import Subscription

log = logging.getLogger("prdigest.serve")


def sync_config_subscriptions(settings: Settings, store: Store) -> list[Subscription]:
    """The file's [[subscriptions]] into the table (updated in place; chat's own are kept)."""
    saved = []
    known = {(s.platform, s.chat_id, s.repo): s for s in list_subscriptions(store)}
    for sub in settings.subscriptions:
        old = known.get((sub.platform, sub.chat_id, sub.repo))
        saved.append(save_subscription(store, sub.model_copy(update={
            "created_by": sub.created_by or "config", "created_at": old.created_at if old else None,
            # Rules muted from chat outlive a restart; the file's own list, when it has one, wins.
            "muted": sub.muted or (old.muted if old else []),
        })))  # fmt: skip
    return saved


class Service:
    """``scheduler=False`` (`serve --no-scheduler`): chat and pages only, the weekly deliveries left to
    `prdigest worker` processes (bot/workers.py)."""

    def __init__(self, settings: Settings, store: Store, scheduler: bool = True):
        use_secrets(secrets_of(settings))  # masked in every reply, page and log line
        self.settings = settings
        self.store = store
        self.metrics = Metrics()
        use(self.metrics)  # this service's registry: counted into from now on, shown at /metrics
        self.web = WebApp()
        self.web.mount("/reports", report_pages(store, settings))
        self.web.mount("/metrics", self.metrics.wsgi_app)
        self.services = Services(settings=settings, store=store, source_for=source_factory(settings))
        self.core = BotCore(self.services)
        self.adapters: list[ChatAdapter] = []
        self.connectors: list[Connector] = []
        self.deliverers: dict[str, Deliverer] = {"console": ConsoleDeliverer()}
        self._add_adapters()
        adopt_library_loggers()  # the SDKs are loaded now: their own handlers give way to prdigest's
        self.scheduler = WeeklyScheduler(settings, store, self.deliverers) if scheduler else None
        if self.scheduler is not None:  # the workers read the subscriptions at each dispatch
            self.services.on_subscriptions_changed = self.scheduler.rebuild
        self.services.redraw = self._redraw
        checks = {"database": database_check(store), **{c.name: c.readiness for c in self.connectors}}
        if self.scheduler is not None:
            sched = self.scheduler
            checks["scheduler"] = scheduler_check(lambda: sched.running)
            checks["deliveries"] = last_delivery_check(store, sched.failing)
        self.readiness = Readiness(checks)
        self.web.mount("/readyz", self.readiness.wsgi_app)

    def _redraw(self, platform: str, chat_id: str, repo: str, window: Window) -> None:
        """A weekly card a button changed, redrawn; a failure is logged, the button's answer stands."""
        try:
            redraw_delivered(self.settings, self.store, self.deliverers, (platform, chat_id), repo, window)
        except Exception:
            log.exception("could not redraw the weekly card of %s in %s:%s", repo, platform, chat_id)

    def _add_adapters(self) -> None:
        from prdigest.bot.platforms import chat_adapters

        lookups: dict[str, Lookup] = {}
        for platform, adapter, deliverer in chat_adapters(self.settings, self.core, self.web, self.store):
            self.adapters.append(adapter)
            self.connectors.append(Connector(platform, adapter))
            self.deliverers[platform] = deliverer
            lookups[platform] = adapter.member_chats
        self.services.member_chats = Membership(lookups)

    def start(self) -> tuple[str, int]:
        sync_config_subscriptions(self.settings, self.store)
        address = self.web.start(self.settings.web.host, self.settings.web.port)
        for connector in self.connectors:  # in the background: a platform down holds up nothing else
            connector.start()
        if self.scheduler is not None:
            self.scheduler.start()
            threading.Thread(target=self.scheduler.catch_up, name="prdigest-catch-up", daemon=True).start()
        log.info("serving on http://%s:%s with %s", *address, ", ".join(self.deliverers))
        return address

    def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown()
        for connector in self.connectors:
            connector.stop()
        self.core.close()
        self.web.stop()

    def run_forever(self) -> None:
        """Start, then wait for SIGTERM or SIGINT and stop cleanly.

        The handlers are in place before anything starts: a signal that comes while the service starts
        (a quick restart) stops it once it has started, instead of killing it half-way."""
        asked = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: asked.set())
        self.start()
        asked.wait()
        self.stop()
