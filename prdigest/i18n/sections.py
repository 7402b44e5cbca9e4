"""The texts of the report sections for open PRs, dismissed risks and team digests, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        # open PRs needing attention (read when the report is made)
        "att_heading": "需要关注的 open PR",
        "att_unreadable": "无法读取 {repo} 的 open PR：{reason}",
        "att_waiting_review": "等待评审 {days} 天",
        "att_approved_not_merged": "已批准未合并 {days} 天",
        "att_large_unreviewed": "大改动未评审",
        "att_draft": "草稿",
        "att_card": "{n} 个 open PR 需要关注：{items}",
        "att_red": "⚠ {branch}的检查未通过：{checks}",
        "att_red_branch": "{branch} 分支",
        "att_default_branch": "默认分支",
        # risk labels admins dismissed
        "dis_heading": "管理员已忽略的风险",
        "dis_line": "#{number} {name}（{label}）— {by} 于 {on} 忽略",
        # team digests
        "td_more": "{names} 等 {n} 个仓库",
        "td_repos": "各仓库",
        "td_counts": "合入 {merged} · 重点 {key}",
        "td_more_repos": "另有 {n} 个仓库，见完整报告",
        "td_overview": "团队概览",
        "td_col_repo": "仓库",
        "td_col_level": "风险等级",
        "td_col_top_risk": "主要风险",
        "td_in_repo": "⚠ {repo}：{text}",
    },
    "en": {
        "att_unreadable": "Could not read the open PRs of {repo}: {reason}",
        "att_heading": "Open PRs needing attention",
        "att_waiting_review": "waiting {days} days for review",
        "att_approved_not_merged": "approved, not merged for {days} days",
        "att_large_unreviewed": "large and unreviewed",
        "att_draft": "draft",
        "att_card": "{n} open PRs need attention: {items}",
        "att_red": "⚠ Checks failing on {branch}: {checks}",
        "att_red_branch": "{branch}",
        "att_default_branch": "the default branch",
        "dis_heading": "Dismissed by admins",
        "dis_line": "#{number} {name} ({label}) — by {by} on {on}",
        "td_more": "{names} … ({n} repositories)",
        "td_repos": "Repositories",
        "td_counts": "{merged} merged · {key} key",
        "td_more_repos": "{n} more repositories in the full report",
        "td_overview": "Team overview",
        "td_col_repo": "Repository",
        "td_col_level": "Risk level",
        "td_col_top_risk": "Top risk",
        "td_in_repo": "⚠ {repo}: {text}",
    },
}
