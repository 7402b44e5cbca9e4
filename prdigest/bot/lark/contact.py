"""Lark's contact API, for one call: a user's open_id by email (contact v3 users batch_get_id).

The request is lark-oapi's ``client.contact.v3.user.batch_get_id(BatchGetIdUserRequest)``, built as a
`BaseRequest` and sent through `LarkApi.request` (the SDK's token and transport): importing the SDK's
contact service runs its package's ``__init__``, about 300 modules, for one URL.
"""

from __future__ import annotations

import json
from typing import Any

from prdigest.bot.lark.client import LarkOutbound
from prdigest.bot.lark.sdk import APPLICATION_JSON, CONTENT_TYPE, AccessTokenType, BaseRequest, HttpMethod

BATCH_GET_ID = "/open-apis/contact/v3/users/batch_get_id"
# Lark's code for an app without the API's permission (contact:user.id:readonly, "obtain user ID via
# email or mobile number"): "Access denied. One of the following scopes is required: [...]".
NO_PERMISSION = frozenset({99991672})
PERMISSION = "the contact:user.id:readonly permission"


def open_id_by_email(out: LarkOutbound, email: str) -> str | None:
    """The open_id of the tenant's user with this email; None when Lark names none (it answers without
    an id for an email it does not know, a user who left, or one outside the app's contact range).
    A LarkError when Lark refuses (``NO_PERMISSION`` without the permission)."""
    request = _batch_get_id([email])
    answer = out.call("find a user by email", lambda: out.client.request(request), expected=NO_PERMISSION)
    data = json.loads(answer.raw.content).get("data") or {}
    for user in data.get("user_list") or []:
        if str(user.get("email", "")).casefold() == email.casefold() and user.get("user_id"):
            return str(user["user_id"])
    return None


def _batch_get_id(emails: list[str]) -> Any:
    return (
        BaseRequest.builder()
        .http_method(HttpMethod.POST)
        .uri(BATCH_GET_ID)
        .token_types({AccessTokenType.TENANT})
        .queries([("user_id_type", "open_id")])
        .headers({CONTENT_TYPE: f"{APPLICATION_JSON}; charset=utf-8"})
        .body({"emails": emails})
        .build()
    )
