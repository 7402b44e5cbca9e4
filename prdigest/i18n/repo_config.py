"""The texts about a repository's own .prdigest.toml, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
