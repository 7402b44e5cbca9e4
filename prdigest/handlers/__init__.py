"""Chat commands, free of any platform: text -> Command -> handler -> Reply.

Importing this package imports each of its modules, which registers every command: a new command is a
module of its own (its `@command` says all that help, the parser, the router and the lanes need) plus its
texts in prdigest/i18n/chat.py.
"""

import importlib
import pkgutil

from prdigest.handlers.context import Context, Services
from prdigest.handlers.dispatch import handle
from prdigest.handlers.replies import Reply

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Context", "Reply", "Services", "handle"]
