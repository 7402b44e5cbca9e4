"""Fixed texts of the chat, one table per language."""

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
