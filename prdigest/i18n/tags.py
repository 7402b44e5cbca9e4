"""Tag names in a report's language, for the page, the cards and any other output.

The rules engine's built-in tags (`prdigest.analysis.taxonomy.TAGS`) have a Chinese name; a tag a
repository defines in its `taxonomy` settings is shown as the repository wrote it, in every language.
"""

from __future__ import annotations

TAG_NAMES: dict[str, dict[str, str]] = {
    "zh": {
        "feature": "新功能",
        "bugfix": "修复",
        "performance": "性能",
        "refactor": "重构",
        "security": "安全",
        "testing": "测试",
        "ci": "CI",
        "docs": "文档",
        "dependency": "依赖",
        "configuration": "配置",
        "revert": "回退",
    },
    "en": {},
}

# One line that says a week's tags when one tag carries it (see render.chart_choice.dominant_tag).
_SHARE = {
    "zh": "{total} 个 PR 中有 {n} 个带「{tag}」标签",
    "en": "{n} of {total} PRs are {tag}",
}


def tag_name(tag: str, lang: str) -> str:
    """The tag's name in `lang`; a repository's own tag (or an unknown language) as written."""
    return TAG_NAMES.get(lang, {}).get(tag, tag)


def tag_share(tag: str, n: int, total: int, lang: str) -> str:
    """ "22 of 30 PRs are testing", in `lang` (English for a language without its own line)."""
    return _SHARE.get(lang, _SHARE["en"]).format(tag=tag_name(tag, lang), n=n, total=total)
