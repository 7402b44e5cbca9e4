"""prdigest: what really changed in your repositories this week."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prdigest")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
