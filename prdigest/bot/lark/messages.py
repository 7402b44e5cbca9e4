"""Lark message content as plain text, mentions, signed-request headers and message uuids: pure
functions of Lark's JSON, apart from the adapter so that they need no SDK client to test."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prdigest.bot.lark.sdk import MentionEvent

UUID_MAX = 50  # Lark's limit on a message's uuid


def message_text(message_type: str, content: str) -> str | None:
    """The plain text of a text or post (rich text) message; None for other kinds."""
    try:
        body = json.loads(content)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    if message_type == "text":
        text = body.get("text")
        return text if isinstance(text, str) else None
    if message_type == "post":
        return post_text(body)
    return None


def post_text(body: dict[str, Any]) -> str:
    """Rich text as lines of plain text. A received post is {"title", "content": [[element]]};
    a sent one may nest that under a locale ("zh_cn": {...})."""
    if "content" not in body and body:
        body = next((v for v in body.values() if isinstance(v, dict)), {})
    lines = [body["title"]] if body.get("title") else []
    for paragraph in body.get("content") or []:
        lines.append("".join(_element_text(e) for e in paragraph if isinstance(e, dict)))
    return "\n".join(lines)


def _element_text(element: dict[str, Any]) -> str:
    tag = element.get("tag")
    if tag in ("text", "a", "code_block", "md"):
        return str(element.get("text", ""))
    if tag == "at":  # the mention's placeholder key ("@_user_1"), resolved with the others
        return str(element.get("user_id") or f"@{element.get('user_name', '')}")
    return ""


def resolve_mentions(text: str, mentions: list[MentionEvent], bot_open_id: str) -> str:
    """Drop the bot's mention and name everyone else: Lark writes mentions as keys ("@_user_1")."""
    for mention in sorted(mentions, key=lambda m: -len(m.key or "")):  # "@_user_10" before "@_user_1"
        if mention.key:
            name = "" if open_id(mention) == bot_open_id else f"@{mention.name or ''}"
            text = text.replace(mention.key, name)
    return text.strip()


def lark_headers(environ: dict[str, Any]) -> dict[str, str]:
    """WSGI's HTTP_X_LARK_SIGNATURE as X-Lark-Signature: the SDK looks header names up case-sensitively."""
    headers = {
        "-".join(part.capitalize() for part in name[5:].split("_")): value
        for name, value in environ.items()
        if name.startswith("HTTP_")
    }
    if environ.get("CONTENT_TYPE"):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    return headers


def idempotency_key(key: str) -> str:
    """`key` as a message uuid: as it is when short enough, else a digest of it."""
    return key if len(key) <= UUID_MAX else hashlib.sha256(key.encode()).hexdigest()[:UUID_MAX]


def open_id(mention: MentionEvent) -> str | None:
    return mention.id.open_id if mention.id else None
