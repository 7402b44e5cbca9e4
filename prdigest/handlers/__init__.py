"""Chat commands, free of any platform: text -> Command -> handler -> Reply.

Importing this package registers every command (help lists them in this order).
"""

from prdigest.handlers import ask, explain, help, noise, preview, subscribe, weekly  # noqa: F401  (registration)
from prdigest.handlers.context import Context, Services
from prdigest.handlers.dispatch import handle
from prdigest.handlers.replies import Reply

__all__ = ["Context", "Reply", "Services", "handle"]
