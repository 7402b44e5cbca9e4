"""The SQLite cache: the only package that imports sqlite-utils."""

from prdigest.storage.db import Store

__all__ = ["Store"]
