"""The Slack adapter's event mapping: a message, a slash command or a button as an `Inbound`."""

from __future__ import annotations

import json
import re
from typing import Any

from prdigest.bot.app import Inbound

Body = dict[str, Any]


def event_inbound(body: Body, bot_user_id: str | None) -> Inbound:
    """A mention of the bot or a direct message; the answer goes in its thread."""
    event = body["event"]
    thread = event.get("thread_ts") or event["ts"]
    return Inbound(
        platform="slack",
        event_id=body["event_id"],
        chat_id=event["channel"],
        user_id=event.get("user", ""),
        text=strip_mention(event.get("text", ""), bot_user_id),
        thread_id=thread,
        card_id=event.get("thread_ts"),  # a message in a thread: what the thread is about
        direct=event.get("channel_type") == "im" or is_direct(event["channel"]),
    )


def command_inbound(body: Body, text: str) -> Inbound:
    """A slash command, its ``text`` stripped."""
    return Inbound(
        platform="slack",
        event_id=body["trigger_id"],
        chat_id=body["channel_id"],
        user_id=body["user_id"],
        text=text,
        direct=body.get("channel_name") == "directmessage" or is_direct(body["channel_id"]),
    )


def action_inbound(body: Body, action: Body) -> Inbound:
    """A button on one of the bot's messages; the answer goes in that message's thread."""
    container = body.get("container") or {}
    message = body.get("message") or {}
    card_ts = container.get("message_ts") or message.get("ts")
    channel = container.get("channel_id") or body["channel"]["id"]
    return Inbound(
        platform="slack",
        event_id=body["trigger_id"],
        chat_id=channel,
        direct=is_direct(channel),
        user_id=body["user"]["id"],
        action=action_value(action.get("value")),
        thread_id=message.get("thread_ts") or card_ts,
        message_id=card_ts,
    )


def is_direct(channel: str) -> bool:
    """Whether a channel id is a direct message's: Slack's begin with "D"."""
    return channel.startswith("D")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The message without mentions of the bot, and with Slack's three escapes undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def action_value(value: str | None) -> dict[str, Any]:
    """A button's ActionValue payload; an empty dict (BotCore answers with help) when it is not one."""
    try:
        parsed = json.loads(value or "")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
