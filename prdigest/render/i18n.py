"""Every fixed text of the renderers, one table per language."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "title": "{repo} 周报 · {since} 至 {until}",
        "summary": "一、执行摘要",
        "figures": "关键数据",
        "merged_prs": "合入 PR",
        "direct_pushes": "直接推送",
        "lines": "代码行（增/删）",
        "files_changed": "涉及文件",
        "authors": "作者分布",
        "hot_files": "热点文件（≥{n} 个 PR 改动）",
        "per_day": "每日合入",
        "pr_table": "PR 列表",
        "pr": "PR",
        "pr_title": "标题",
        "author": "作者",
        "merged": "合入时间",
        "churn": "增/删",
        "unavailable": "数据源未提供的信号：{signals}",
        "engine": "分析引擎：{engine}；数据源：{source}",
        "none": "本周期内没有合入的 PR。",
        "direct": "直接推送（无 PR）",
    },
    "en": {
        "title": "{repo} weekly report · {since} to {until}",
        "summary": "1. Executive summary",
        "figures": "Figures",
        "merged_prs": "Merged PRs",
        "direct_pushes": "Direct pushes",
        "lines": "Lines (added/removed)",
        "files_changed": "Files changed",
        "authors": "Authors",
        "hot_files": "Hot files (changed by {n}+ PRs)",
        "per_day": "Merged per day",
        "pr_table": "Pull requests",
        "pr": "PR",
        "pr_title": "Title",
        "author": "Author",
        "merged": "Merged",
        "churn": "+/-",
        "unavailable": "Signals the source could not supply: {signals}",
        "engine": "Engine: {engine}; source: {source}",
        "none": "No pull requests were merged in this period.",
        "direct": "Direct pushes (no PR)",
    },
}


def texts(lang: str) -> dict[str, str]:
    return TEXT.get(lang, TEXT["en"])
