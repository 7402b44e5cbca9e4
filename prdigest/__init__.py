"""prdigest: what really changed in your repositories this week."""

from importlib.metadata import PackageNotFoundError, version
from typing import Literal, get_args

# The languages prdigest speaks: here, where the CLI can read them without loading the models.
Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = get_args(Lang)

try:
    __version__ = version("prdigest")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
