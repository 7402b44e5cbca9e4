"""A weekly report that could not be delivered within its grace period: logged, and told to the
chat's admins (``[admins]`` in the settings) in the subscription's chat, when the platform's
adapter can post there at all (mentioned and posted as the adapter writes them)."""

from __future__ import annotations

import logging
from typing import Any

from prdigest.bot.adapters import ChatAdapter
from prdigest.config import Settings
from prdigest.metrics import count_delivery
from prdigest.subscription import Subscription

log = logging.getLogger("prdigest.scheduler")


def notice(settings: Settings, adapter: ChatAdapter, sub: Subscription, key: str) -> str:
    """The text for the chat: who is asked to look, and what was not delivered."""
    admins = list(getattr(settings.admins, sub.platform, None) or [])
    who = " ".join(adapter.mention(user) for user in admins)
    text = (
        f"The weekly report of {sub.repo} ({key}) could not be delivered within its grace period; "
        "it will not be retried. The service log has the error."
    )
    return f"{who} {text}".strip()


def report_give_up(settings: Settings, deliverer: Any, sub: Subscription, key: str) -> None:
    """Log the lost week and tell the chat's admins (best effort: a failure here is only logged)."""
    log.error(
        "weekly report %s of %s to %s:%s not delivered within its grace period; giving up",
        key, sub.repo, sub.platform, sub.chat_id,
        extra={"subscription": sub.id, "status": "given_up"},
    )  # fmt: skip
    count_delivery("given_up")
    adapter: ChatAdapter | None = getattr(deliverer, "adapter", None)
    if adapter is None:
        return  # the console, or a platform without a way to reach its admins: the log only
    payload = adapter.text_payload(notice(settings, adapter, sub, key))
    try:
        adapter.post_reply(sub.chat_id, None, payload, f"{key}:given-up")
    except Exception as exc:  # the chat is what failed in the first place
        log.error("could not tell the admins of %s:%s: %s", sub.platform, sub.chat_id, type(exc).__name__)
