"""A thin event dispatcher for the two events prdigest takes from Lark, in place of lark-oapi's.

The SDK's `EventDispatcherHandler` offers a ``register_*`` method per event of every service,
so its module imports every service's event processors (about 7,000 modules, 120 MB). This one
knows prdigest's two: a received message (``im.message.receive_v1``) and a button on a card
(the ``card.action.trigger`` callback). It keeps the SDK's steps and answers (lark-oapi 1.7.5's
``EventDispatcherHandler.do``): decrypt, check the verification token, answer url_verification,
check the signature, unmarshal into the SDK's models, call the SDK's processor for the event.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Callable
from typing import Any

from prdigest.bot.lark.sdk import (
    APPLICATION_JSON,
    JSON,
    LARK_REQUEST_NONCE,
    LARK_REQUEST_SIGNATURE,
    LARK_REQUEST_TIMESTAMP,
    URL_VERIFICATION,
    UTF_8,
    AccessDeniedException,
    AESCipher,
    EventContext,
    EventException,
    InvalidArgsException,
    NoAuthorizationException,
    P2CardActionTrigger,
    P2CardActionTriggerProcessor,
    P2CardActionTriggerResponse,
    P2ImMessageReceiveV1,
    P2ImMessageReceiveV1Processor,
    RawRequest,
    RawResponse,
)

log = logging.getLogger("prdigest.lark")

MESSAGE_RECEIVE = "p2.im.message.receive_v1"
CARD_ACTION = "p2.card.action.trigger"


class EventDispatcher:
    """Events posted over HTTP (`do`) or pushed on the long connection (`_do_without_validation`).

    ``encrypt_key`` and ``verification_token`` empty: that check is off, as in the SDK."""

    def __init__(
        self,
        encrypt_key: str,
        verification_token: str,
        on_message: Callable[[P2ImMessageReceiveV1], None],
        on_card_action: Callable[[P2CardActionTrigger], P2CardActionTriggerResponse],
    ):
        self._encrypt_key = encrypt_key
        self._verification_token = verification_token
        self._events = {MESSAGE_RECEIVE: P2ImMessageReceiveV1Processor(on_message)}
        self._callbacks = {CARD_ACTION: P2CardActionTriggerProcessor(on_card_action)}

    def do(self, request: RawRequest) -> RawResponse:
        """A request Lark posted: its answer. Any failure is a 500, so that Lark delivers it again."""
        response = RawResponse()
        response.status_code = 200
        response.set_content_type(f"{APPLICATION_JSON}; charset=utf-8")
        try:
            if request.body is None:
                raise InvalidArgsException("request body is null")
            plaintext = self._decrypt(request.body)
            context = _context(plaintext)
            self._check_token(context)
            if context.type == URL_VERIFICATION:
                response.content = _json({"challenge": context.challenge})
                return response
            self._check_signature(request)
            result = self._dispatch(context, plaintext)
            response.content = _json({"msg": "success"}) if result is None else JSON.marshal(result).encode()
        except Exception as exc:
            if isinstance(exc, AccessDeniedException | NoAuthorizationException):  # forged, or misconfigured
                log.warning("Lark: refused an event posted to %s: %s", request.uri, exc)
            else:
                log.exception("Lark: an event posted to %s failed: %s", request.uri, exc)
            response.status_code = 500
            response.content = _json({"msg": str(exc)})
        return response

    def _do_without_validation(self, payload: bytes) -> Any:
        """An event on the long connection, which authenticated it: the callback's answer, if any.
        (The name and the signature are what `lark_oapi.ws.client.Client` calls.)"""
        plaintext = payload.decode(UTF_8)
        return self._dispatch(_context(plaintext), plaintext)

    do_without_validation = _do_without_validation  # the name lark-oapi before 1.7 calls

    def _dispatch(self, context: Any, plaintext: str) -> Any:
        key = f"{context.schema}.{context.type}"
        callback = self._callbacks.get(key)
        if callback is not None:
            answer = callback.do(JSON.unmarshal(plaintext, callback.type()))
            return answer if answer is not None else P2CardActionTriggerResponse()
        event = self._events.get(key)
        if event is None:
            raise EventException(f"processor not found, type: {context.type}")
        event.do(JSON.unmarshal(plaintext, event.type()))
        return None

    def _decrypt(self, body: bytes) -> str:
        encrypted = json.loads(body).get("encrypt")
        if not encrypted:
            return body.decode(UTF_8)
        if not self._encrypt_key:
            raise NoAuthorizationException("encrypt_key not found")
        return str(AESCipher(self._encrypt_key).decrypt_str(encrypted))

    def _check_token(self, context: Any) -> None:
        """As the SDK: with an encrypt key, the token is checked when the event carries one (and always
        for url_verification); without one, always. No token configured: a token sent must be empty."""
        expected = self._verification_token
        if not expected:
            if context.token is not None and context.token != expected:
                raise AccessDeniedException("invalid verification_token")
            return
        if self._encrypt_key and context.type != URL_VERIFICATION and context.token is None:
            return
        token = context.token
        if not (isinstance(token, str) and token and hmac.compare_digest(expected.encode(), token.encode())):
            raise AccessDeniedException("invalid verification_token")

    def _check_signature(self, request: RawRequest) -> None:
        """sha256(timestamp + nonce + encrypt_key + body), checked only when an encrypt key is set."""
        if not self._encrypt_key:
            return
        headers = request.headers
        timestamp = headers.get(LARK_REQUEST_TIMESTAMP) or ""
        nonce = headers.get(LARK_REQUEST_NONCE) or ""
        signature = headers.get(LARK_REQUEST_SIGNATURE) or ""
        digest = hashlib.sha256((timestamp + nonce + self._encrypt_key).encode() + (request.body or b""))
        if not hmac.compare_digest(signature.encode(), digest.hexdigest().encode()):
            raise AccessDeniedException("signature verification failed")


def _context(plaintext: str) -> Any:
    """The envelope of an event: schema 2.0 ("p2", its type in the header) or 1.0 ("p1")."""
    context = JSON.unmarshal(plaintext, EventContext)
    if context.schema:
        context.schema = "p2"
        context.type = context.header.event_type
        context.token = context.header.token
    elif context.uuid:
        context.schema = "p1"
        context.type = context.event.get("type")
    return context


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
