"""Fixed texts of the cards, one table per language."""

TEXT: dict[str, dict[str, str]] = {"zh": {}, "en": {}}
