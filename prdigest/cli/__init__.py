"""The prdigest command: report, sync, parse, preview, chat, serve, deliver, subscriptions and config.

`prdigest.cli:main` is the console script; the commands live in cli/commands.py (the report and the
chat) and cli/ops.py (running the bot), what they share in cli/support.py.
"""

from prdigest.cli.commands import main

__all__ = ["main"]
