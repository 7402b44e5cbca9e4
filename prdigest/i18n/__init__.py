"""Every fixed text prdigest writes, in zh and en, from this one package.

Each module holds the texts of one part (report, stories, rules, cards, chat) as ``TEXT[lang]``;
``texts(lang)`` merges them, and a key may be defined in one module only.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cache

from prdigest.i18n import cards, chat, noise, repo_config, report, rules, sections, stories, team
from prdigest.i18n.report import RISK_NAMES
from prdigest.models import LANGS, Lang, is_iso_week

_CJK = re.compile(r"[\u3400-\u9fff]")


def detect_lang(text: str) -> Lang:
    """The language a message is in: Chinese as soon as it holds a CJK character."""
    return "zh" if _CJK.search(text) else "en"


_PARTS = (report.TEXT, stories.TEXT, rules.TEXT, cards.TEXT, chat.TEXT, team.TEXT, sections.TEXT, noise.TEXT,
          repo_config.TEXT)  # fmt: skip


@cache
def texts(lang: str) -> dict[str, str]:
    lang = lang if lang in LANGS else "en"
    merged: dict[str, str] = {}
    for part in _PARTS:
        merged.update(part.get(lang, {}))
    return merged


# A report of any other period than one Monday-to-Sunday week says "period" where a weekly one says "week".
_PERIOD_WORDS = {
    "zh": (("本周", "本期"),),
    "en": (("This week", "This period"), ("this week", "this period"), ("The week", "The period"),
           ("the week", "the period")),
}  # fmt: skip


def report_texts(lang: str, since: date, until: date) -> dict[str, str]:
    """The texts of a report of ``since``..``until``."""
    return texts(lang) if is_iso_week(since, until) else _period_texts(lang)


@cache
def _period_texts(lang: str) -> dict[str, str]:
    out = dict(texts(lang))
    for key, text in out.items():
        for week, period in _PERIOD_WORDS.get(lang, _PERIOD_WORDS["en"]):
            text = text.replace(week, period)
        out[key] = text
    return out


def risk_name(label: str, lang: str) -> str:
    return RISK_NAMES.get(lang, RISK_NAMES["en"]).get(label, label)
