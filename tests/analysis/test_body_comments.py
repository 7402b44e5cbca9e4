"""A PR body's HTML comments go before the rules read it, in linear time whatever the body holds."""

from __future__ import annotations

import re

import pytest

from prdigest.analysis.facts import clean_body


@pytest.mark.parametrize(
    "body",
    ["a<!-- x -->b<!---->c<!-->d-->e", "<!-- never closed\nkept", "x<!--a-->y<!--b", "<!--<!-- -->z-->", ""],
)
def test_closed_comments_go_as_the_lazy_pattern_took_them(body: str) -> None:
    expected = re.sub(r"<!--.*?-->", "", body, flags=re.S).strip()
    assert clean_body(body) == expected


def test_a_body_of_openers_without_a_close_is_kept_and_read_once() -> None:
    body = "<!--" * 16_384  # GitHub's longest body; the lazy pattern rescanned it from every opener
    assert clean_body(body) == body
