"""The texts of team digests (several repositories in one report), in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
