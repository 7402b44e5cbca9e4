"""lark-oapi's core, `im.v1` and long connection, without the rest of the SDK: the one module that
imports lark-oapi.

`lark_oapi/__init__.py` imports every API service (about 10,600 modules, 4 s of CPU, 170 MB),
`lark_oapi/api/__init__.py` too, and `im`'s and `im.v1`'s every model and resource of `im`;
Python runs a package's ``__init__`` before any of its submodules. So these packages are
registered here as bare package modules (their real spec and ``__path__``, their ``__init__``
not run), and the modules prdigest uses load one by one. A bare package finishes loading the
first time anything asks it for a name it does not hold (``lark_oapi.Client``, ``from
lark_oapi.api.im.v1 import X``, ``import *``), so other code in the process that wants the whole
SDK still gets it. When the whole SDK is loaded already, nothing here changes it.

The long connection's module imports the SDK's event dispatcher, which imports every service's
event processors (about 7,000 modules); `ws_client_module` lends it prdigest's thin dispatcher
under that name for the time of the import. tests/bot/test_lark_sdk_layout.py fails when the SDK's
layout moves under these names.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

# Packages whose __init__ imports far more than prdigest uses, outermost first.
BARE_PACKAGES = (
    "lark_oapi",
    "lark_oapi.api",
    "lark_oapi.api.im",
    "lark_oapi.api.im.v1",
    "lark_oapi.api.im.v1.model",
    "lark_oapi.api.im.v1.resource",
)
DISPATCHER_MODULE = "lark_oapi.event.dispatcher_handler"
WS_CLIENT_MODULE = "lark_oapi.ws.client"

_finish_lock = threading.RLock()


def _register_bare(name: str) -> None:
    if name in sys.modules:
        return  # already imported, bare or whole
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    module = importlib.util.module_from_spec(spec)

    def finish(attr: str) -> Any:  # PEP 562: called only for names the module does not hold
        if attr.startswith("__") and attr != "__all__":
            raise AttributeError(attr)  # probes (__wrapped__, __path__ ...) must not load 10,000 modules
        _finish_all()
        if attr in module.__dict__:
            return module.__dict__[attr]
        raise AttributeError(f"module {name!r} has no attribute {attr!r}")

    module.__dict__["__getattr__"] = finish
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def _finish_all() -> None:
    """Run the bare packages' own ``__init__``s, innermost first (``lark_oapi`` star-imports ``.api``)."""
    with _finish_lock:
        for name in reversed(BARE_PACKAGES):
            module = sys.modules[name]
            if module.__dict__.pop("__getattr__", None) is None:
                continue  # finished already, or never bare
            spec = module.__spec__
            assert spec is not None and spec.loader is not None
            spec.loader.exec_module(module)


for _name in BARE_PACKAGES:
    _register_bare(_name)

# ruff: noqa: E402 (these imports need the bare packages above)
from lark_oapi.api.im.v1.model.create_file_request import CreateFileRequest
from lark_oapi.api.im.v1.model.create_file_request_body import CreateFileRequestBody
from lark_oapi.api.im.v1.model.create_message_request import CreateMessageRequest
from lark_oapi.api.im.v1.model.create_message_request_body import CreateMessageRequestBody
from lark_oapi.api.im.v1.model.mention_event import MentionEvent
from lark_oapi.api.im.v1.model.p2_im_message_receive_v1 import P2ImMessageReceiveV1
from lark_oapi.api.im.v1.model.patch_message_request import PatchMessageRequest
from lark_oapi.api.im.v1.model.patch_message_request_body import PatchMessageRequestBody
from lark_oapi.api.im.v1.model.reply_message_request import ReplyMessageRequest
from lark_oapi.api.im.v1.model.reply_message_request_body import ReplyMessageRequestBody
from lark_oapi.api.im.v1.processor import P2ImMessageReceiveV1Processor
from lark_oapi.api.im.v1.resource.chat_members import ChatMembers
from lark_oapi.api.im.v1.resource.file import File
from lark_oapi.api.im.v1.resource.message import Message
from lark_oapi.core.const import (
    APPLICATION_JSON,
    CONTENT_TYPE,
    LARK_REQUEST_NONCE,
    LARK_REQUEST_SIGNATURE,
    LARK_REQUEST_TIMESTAMP,
    URL_VERIFICATION,
    UTF_8,
)
from lark_oapi.core.enum import AccessTokenType, HttpMethod, LogLevel
from lark_oapi.core.exception import (
    AccessDeniedException,
    EventException,
    InvalidArgsException,
    NoAuthorizationException,
)
from lark_oapi.core.http import Transport
from lark_oapi.core.json import JSON
from lark_oapi.core.log import logger
from lark_oapi.core.model import BaseRequest, BaseResponse, Config, RawRequest, RawResponse, RequestOption
from lark_oapi.core.token import verify
from lark_oapi.core.utils import AESCipher
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)
from lark_oapi.event.callback.processor import P2CardActionTriggerProcessor
from lark_oapi.event.context import EventContext


def ws_client_module(dispatcher: type) -> ModuleType:
    """`lark_oapi.ws.client` (the long connection), imported with ``dispatcher`` standing in for
    the SDK's `EventDispatcherHandler`: the module names that class only as a type, and calls
    ``_do_without_validation`` on the handler it is given."""
    if WS_CLIENT_MODULE in sys.modules or DISPATCHER_MODULE in sys.modules:
        return importlib.import_module(WS_CLIENT_MODULE)
    stand_in = ModuleType(DISPATCHER_MODULE, "prdigest's thin dispatcher, for the import of the ws client")
    stand_in.EventDispatcherHandler = dispatcher  # type: ignore[attr-defined]
    sys.modules[DISPATCHER_MODULE] = stand_in
    try:
        return importlib.import_module(WS_CLIENT_MODULE)
    finally:
        # Whoever imports the real dispatcher later gets it.
        if sys.modules.get(DISPATCHER_MODULE) is stand_in:
            del sys.modules[DISPATCHER_MODULE]


__all__ = [
    "APPLICATION_JSON",
    "CONTENT_TYPE",
    "JSON",
    "LARK_REQUEST_NONCE",
    "LARK_REQUEST_SIGNATURE",
    "LARK_REQUEST_TIMESTAMP",
    "URL_VERIFICATION",
    "UTF_8",
    "AESCipher",
    "AccessDeniedException",
    "AccessTokenType",
    "BaseRequest",
    "BaseResponse",
    "ChatMembers",
    "Config",
    "CreateFileRequest",
    "CreateFileRequestBody",
    "CreateMessageRequest",
    "CreateMessageRequestBody",
    "EventContext",
    "EventException",
    "File",
    "HttpMethod",
    "InvalidArgsException",
    "LogLevel",
    "MentionEvent",
    "Message",
    "NoAuthorizationException",
    "P2CardActionTrigger",
    "P2CardActionTriggerProcessor",
    "P2CardActionTriggerResponse",
    "P2ImMessageReceiveV1",
    "P2ImMessageReceiveV1Processor",
    "PatchMessageRequest",
    "PatchMessageRequestBody",
    "RawRequest",
    "RawResponse",
    "ReplyMessageRequest",
    "ReplyMessageRequestBody",
    "RequestOption",
    "Transport",
    "logger",
    "verify",
    "ws_client_module",
]
