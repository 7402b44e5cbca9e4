"""prdigest's exceptions. Each carries a one-line message fit to show a user as it is.

A message may quote what a server answered or a user pasted: it is scrubbed when the error is
made (configured secrets masked, secret-shaped text redacted), so no copy of it holds a secret.
"""

from prdigest.redact import scrub


class PrdigestError(Exception):
    """Base of every error prdigest reports to a user instead of a traceback.

    ``key`` and ``params`` name a fixed text (prdigest.i18n) so that chat can say it in the
    asker's language; the message itself is English, for the CLI and logs.
    """

    def __init__(self, message: str, key: str | None = None, **params: object):
        super().__init__(scrub(message))
        self.key = key
        self.params = params


class UsageError(PrdigestError):
    """Bad input from the user: dates, timezones, options."""


class ConfigError(PrdigestError):
    """The config file or an environment variable is invalid."""


class SourceError(PrdigestError):
    """A source (git clone, fixture file, GitHub) could not be read."""


class StorageError(PrdigestError):
    """The SQLite cache could not be opened or written."""
