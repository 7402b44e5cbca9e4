"""The texts of the report sections for open PRs, dismissed risks and team digests, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
