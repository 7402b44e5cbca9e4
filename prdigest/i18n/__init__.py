"""Every fixed text prdigest writes, in zh and en, from this one package.

Each module holds the texts of one part (report, cards, chat) as ``TEXT[lang]``;
``texts(lang)`` merges them, and a key may be defined in one module only.
"""

from __future__ import annotations

from functools import cache

from prdigest.i18n import cards, chat, report
from prdigest.i18n.report import RISK_NAMES

LANGUAGES = ("zh", "en")
_PARTS = (report.TEXT, cards.TEXT, chat.TEXT)


@cache
def texts(lang: str) -> dict[str, str]:
    lang = lang if lang in LANGUAGES else "en"
    merged: dict[str, str] = {}
    for part in _PARTS:
        merged.update(part.get(lang, {}))
    return merged


def risk_name(label: str, lang: str) -> str:
    return RISK_NAMES.get(lang, RISK_NAMES["en"]).get(label, label)
