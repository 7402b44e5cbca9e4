"""prdigest imports lark-oapi's modules one by one (prdigest/bot/lark/sdk.py) and dispatches events
itself (lark_dispatch.py): these tests fail when the SDK's layout or its dispatcher's behaviour moves
under them, e.g. after an upgrade past the version range pinned in pyproject.toml."""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.lark_api import FakeLark

from prdigest.bot.lark.client import check_domain
from prdigest.bot.lark.dispatch import CARD_ACTION, MESSAGE_RECEIVE, EventDispatcher
from prdigest.bot.lark.sdk import (
    JSON,
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
    P2ImMessageReceiveV1,
    RawRequest,
    ws_client_module,
)

ROOT = Path(__file__).resolve().parents[2]
LARK_MODULES_MAX = 300  # core, the im.v1 modules prdigest uses and ws: 185 with 1.7.5 (the whole SDK: 10,624)

# Run in a fresh interpreter: what `import prdigest.bot.lark.adapter` loads, and the bare packages' fallback.
PROBE = """
import json, sys
import prdigest.bot.lark.adapter
from prdigest.bot.lark.connection import ws_module
ws_module()  # what a long connection's start imports
lark = sorted(m for m in sys.modules if m.startswith("lark_oapi"))
facts = {
    "lark_modules": len(lark),
    "services": sorted({m.split(".")[2] for m in lark if m.startswith("lark_oapi.api.")}),
    "sdk_dispatcher": "lark_oapi.event.dispatcher_handler" in sys.modules,
    "sdk_client": "lark_oapi.client" in sys.modules,
}
from lark_oapi.api.im.v1 import GetChatRequest  # a name im.v1 holds once its package has loaded whole
facts["im_v1"] = GetChatRequest.__module__
import lark_oapi  # someone else in the process wants the whole SDK: the bare package finishes loading
facts["client"] = lark_oapi.Client.__module__
facts["dispatcher"] = lark_oapi.EventDispatcherHandler.__module__
facts["contact"] = hasattr(lark_oapi.api, "contact")
print(json.dumps(facts))
"""


def test_the_lark_adapter_loads_only_core_im_and_the_long_connection() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=50, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout.splitlines()[-1])
    assert facts["services"] == ["im"], facts
    assert not facts["sdk_dispatcher"] and not facts["sdk_client"], facts
    assert facts["lark_modules"] <= LARK_MODULES_MAX, facts
    # The bare packages still give the whole SDK to whoever asks for it.
    assert facts["im_v1"] == "lark_oapi.api.im.v1.model.get_chat_request", facts
    assert facts["client"] == "lark_oapi.client" and facts["contact"], facts
    assert facts["dispatcher"] == "lark_oapi.event.dispatcher_handler", facts


def test_the_long_connection_client_is_as_lark_connection_uses_it() -> None:
    ws = ws_client_module(EventDispatcher)
    assert ws.__name__ == "lark_oapi.ws.client"
    # LongConnection points this module-level loop at its own thread's loop.
    assert hasattr(ws, "loop")
    params = inspect.signature(ws.Client).parameters
    assert {"app_id", "app_secret", "event_handler", "domain", "log_level", "auto_reconnect"} <= set(params)
    # The client hands event frames to this method of its handler, and stop() relies on these fields.
    assert "self._event_handler._do_without_validation(" in inspect.getsource(ws.Client._handle_data_frame)
    init = inspect.getsource(ws.Client.__init__)
    assert "self._auto_reconnect" in init and "self._conn" in init


def test_the_thin_dispatcher_takes_the_sdk_dispatchers_keys_and_processors() -> None:
    from lark_oapi.event.dispatcher_handler import EventDispatcherHandler

    sdk = (
        EventDispatcherHandler.builder("", "")
        .register_p2_im_message_receive_v1(lambda data: None)
        .register_p2_card_action_trigger(lambda data: None)
        .build()
    )
    ours = EventDispatcher("", "", lambda data: None, lambda data: P2CardActionTriggerResponse())
    assert set(sdk._processorMap) == set(ours._events) == {MESSAGE_RECEIVE}
    assert set(sdk._callback_processor_map) == set(ours._callbacks) == {CARD_ACTION}
    assert type(sdk._processorMap[MESSAGE_RECEIVE]) is type(ours._events[MESSAGE_RECEIVE])
    assert type(sdk._callback_processor_map[CARD_ACTION]) is type(ours._callbacks[CARD_ACTION])
    assert ours._events[MESSAGE_RECEIVE].type() is P2ImMessageReceiveV1
    assert ours._callbacks[CARD_ACTION].type() is P2CardActionTrigger


@pytest.mark.parametrize(
    "domain",
    [
        "https://open.feishu.cn",
        "https://open.larksuite.com:8443",
        "http://127.0.0.1:8080",
        "http://localhost",
        "http://open.feishu.cn",
        "ftp://open.feishu.cn",
        "https://open.feishu.cn/api",
        "https://user:pw@open.feishu.cn",
        "https://open.feishu.cn?x=1",
        "open.feishu.cn",
        "",
    ],
)
def test_the_domain_check_is_the_sdks(domain: str) -> None:
    from lark_oapi.client import _validate_domain

    def accepts(check: Callable[[str], None]) -> bool:
        try:
            check(domain)
        except ValueError:
            return False
        return True

    assert accepts(check_domain) == accepts(_validate_domain)


# --- the thin dispatcher answers as the SDK's does ------------------------------------------


def _fake() -> FakeLark:
    return FakeLark()  # not started: only its event builders are used


def _request(headers: dict[str, str], body: bytes) -> RawRequest:
    request = RawRequest()
    request.uri = "/lark/events"
    request.headers = headers
    request.body = body
    return request


def _plain_request(fake: FakeLark, payload: dict[str, Any]) -> RawRequest:
    body = json.dumps(payload).encode()
    timestamp, nonce = str(int(time.time())), "n1"
    digest = hashlib.sha256((timestamp + nonce + fake.encrypt_key).encode() + body).hexdigest()
    headers = {
        "X-Lark-Request-Timestamp": timestamp,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": digest,
    }
    return _request(headers, body)


def _cases(fake: FakeLark) -> dict[str, RawRequest]:
    message = fake.message_event("top 3", chat_type="p2p")
    card = fake.card_action_event({"action": "risks"}, message_id="om_1")
    other = {**message, "header": {**message["header"], "event_type": "im.chat.disbanded_v1"}}
    wrong_token = {**message, "header": {**message["header"], "token": "wrong"}}
    return {
        "message": _request(*fake.http_request(message)),
        "card": _request(*fake.http_request(card)),
        "url_verification": _request(*fake.http_request(fake.url_verification("c-42"))),
        "url_verification_bad_token": _request(
            *fake.http_request(fake.url_verification("c-42"), token="wrong")
        ),
        "bad_token": _request(*fake.http_request(message, token="wrong")),
        "bad_signature": _request(*fake.http_request(message, signature="0" * 64)),
        "other_key": _request(*fake.http_request(message, encrypt_with="another-key")),
        "unknown_event": _request(*fake.http_request(other)),
        "plain": _plain_request(fake, message),
        "plain_bad_signature": _request(
            {**_plain_request(fake, message).headers, "X-Lark-Signature": "x"}, json.dumps(message).encode()
        ),
        "plain_card": _plain_request(fake, card),
        "plain_url_verification": _plain_request(fake, fake.url_verification("c-7")),
        "plain_bad_token": _plain_request(fake, wrong_token),
        "not_json": _request({}, b"not json"),
    }


class _Seen:
    def __init__(self) -> None:
        self.events: list[str] = []

    def message(self, data: P2ImMessageReceiveV1) -> None:
        self.events.append(f"message:{data.header.event_id}:{data.event.message.chat_type}")

    def card(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        self.events.append(f"card:{data.event.context.open_message_id}:{data.event.action.value}")
        return P2CardActionTriggerResponse({"toast": {"type": "info", "content": "working"}})


def _sdk(encrypt_key: str, token: str, seen: _Seen) -> Any:
    from lark_oapi.event.dispatcher_handler import EventDispatcherHandler

    return (
        EventDispatcherHandler.builder(encrypt_key, token)
        .register_p2_im_message_receive_v1(seen.message)
        .register_p2_card_action_trigger(seen.card)
        .build()
    )


def _answer(response: Any) -> tuple[int, Any]:
    try:
        content = json.loads(response.content)
    except ValueError:  # the SDK writes an error's text into JSON unescaped
        content = {"msg": "(not JSON)"}
    return response.status_code, content


@pytest.mark.parametrize("keys", ["both", "token_only", "none"])
def test_the_thin_dispatcher_answers_every_request_as_the_sdks(keys: str) -> None:
    fake = _fake()
    encrypt_key = fake.encrypt_key if keys == "both" else ""
    token = fake.verification_token if keys != "none" else ""
    for name, request in _cases(fake).items():
        sdk_seen, our_seen = _Seen(), _Seen()
        sdk = _answer(_sdk(encrypt_key, token, sdk_seen).do(request))
        ours = _answer(EventDispatcher(encrypt_key, token, our_seen.message, our_seen.card).do(request))
        assert ours[0] == sdk[0], (name, ours, sdk)
        if sdk[0] == 200 or sdk[1]["msg"] != "(not JSON)":
            assert ours[1] == sdk[1], (name, ours, sdk)
        assert our_seen.events == sdk_seen.events, name


def test_a_failing_handler_is_a_500_as_with_the_sdk() -> None:
    fake = _fake()
    request = _request(*fake.http_request(fake.message_event("boom", chat_type="p2p")))

    def fail(data: P2ImMessageReceiveV1) -> None:
        raise RuntimeError("handler failed")

    sdk = _sdk(fake.encrypt_key, fake.verification_token, _Seen())
    sdk._processorMap[MESSAGE_RECEIVE].f = fail
    ours = EventDispatcher(fake.encrypt_key, fake.verification_token, fail, _Seen().card)
    assert _answer(ours.do(request)) == _answer(sdk.do(request)) == (500, {"msg": "handler failed"})


def test_the_thin_dispatcher_answers_long_connection_frames_as_the_sdks() -> None:
    fake = _fake()
    message = fake.message_event("hello", chat_type="p2p")
    card = fake.card_action_event({"action": "top"}, message_id="om_2")
    for payload in (message, card):
        plain = json.dumps(payload).encode()
        sdk_seen, our_seen = _Seen(), _Seen()
        sdk = _sdk("k", "t", sdk_seen)._do_without_validation(plain)
        ours = EventDispatcher("k", "t", our_seen.message, our_seen.card)._do_without_validation(plain)
        assert JSON.marshal(ours) == JSON.marshal(sdk) and our_seen.events == sdk_seen.events
        assert len(our_seen.events) == 1
