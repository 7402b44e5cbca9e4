"""Fixed texts: both languages carry the same keys, and no key is defined twice."""

from __future__ import annotations

import string

from prdigest.i18n import _PARTS, texts
from prdigest.models import LANGS


def test_languages_have_the_same_keys_and_placeholders() -> None:
    zh, en = texts("zh"), texts("en")
    assert set(zh) == set(en)
    fields = string.Formatter()
    for key in zh:
        names = {f for _, f, _, _ in fields.parse(zh[key]) if f}
        assert names == {f for _, f, _, _ in fields.parse(en[key]) if f}, key


def test_no_key_is_defined_in_two_parts() -> None:
    for lang in LANGS:
        seen: set[str] = set()
        for part in _PARTS:
            keys = set(part.get(lang, {}))
            assert not keys & seen, keys & seen
            seen |= keys
