"""The adapters: console, Lark, Slack, the scheduler and the web app around the handlers."""
