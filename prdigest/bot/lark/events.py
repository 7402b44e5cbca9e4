"""The Lark adapter's event mapping: a received message or a button's callback as an `Inbound`."""

from __future__ import annotations

from collections.abc import Callable

from prdigest.bot.app import Inbound
from prdigest.bot.lark.messages import message_text, open_id, resolve_mentions
from prdigest.bot.lark.sdk import P2CardActionTrigger, P2ImMessageReceiveV1


def message_inbound(data: P2ImMessageReceiveV1, bot_open_id: Callable[[], str]) -> Inbound | None:
    """A direct message, or a group message that mentions the bot; None for anything else."""
    event = data.event
    message, sender = event.message, event.sender
    if sender is None or sender.sender_type != "user" or sender.sender_id is None:
        return None  # never answer a bot, this one included
    text = message_text(message.message_type or "", message.content or "")
    if text is None:
        return None
    mentions = message.mentions or []
    if message.chat_type != "p2p" and not any(open_id(m) == bot_open_id() for m in mentions):
        return None
    return Inbound(
        platform="lark",
        event_id=data.header.event_id,
        chat_id=message.chat_id,
        user_id=sender.sender_id.open_id or "",
        text=resolve_mentions(text, mentions, bot_open_id()),
        thread_id=message.message_id,
        card_id=message.root_id or None,  # a message in a thread: the thread's first message
        direct=message.chat_type == "p2p",
    )


def action_inbound(data: P2CardActionTrigger) -> Inbound | None:
    """A button on one of the bot's cards; None for a callback that is not one."""
    event = data.event
    value = event.action.value if event.action else None
    context = event.context
    if not isinstance(value, dict) or context is None or not context.open_message_id:
        return None
    event_id = data.header.event_id if data.header and data.header.event_id else event.token
    card_id = context.open_message_id
    return Inbound(
        platform="lark",
        event_id=event_id,
        chat_id=context.open_chat_id or "",
        user_id=event.operator.open_id if event.operator else "",
        action=value,
        thread_id=card_id,
        message_id=card_id,
    )
