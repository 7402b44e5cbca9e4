"""prdigest's exceptions. Each carries a one-line message fit to show a user as it is."""


class PrdigestError(Exception):
    """Base of every error prdigest reports to a user instead of a traceback."""


class UsageError(PrdigestError):
    """Bad input from the user: dates, timezones, options."""


class ConfigError(PrdigestError):
    """The config file or an environment variable is invalid."""


class SourceError(PrdigestError):
    """A source (git clone, fixture file, GitHub) could not be read."""


class StorageError(PrdigestError):
    """The SQLite cache could not be opened or written."""
