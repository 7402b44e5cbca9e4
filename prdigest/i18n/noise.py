"""The texts of noise controls in chat: mute, unmute, dismiss and preview, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
