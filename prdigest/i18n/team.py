"""The texts of team digests (several repositories in one report), in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        # The team report's summary: figures from code (analysis/team.py).
        "team_summary": "{since} 至 {until}：{repos}，合并 {merged}；最活跃的是 {busiest}（{busiest_n}）",
        "team_summary_empty": "{since} 至 {until}：{repos}，本期没有合并的 PR",
        "team_repos_n": "{n} 个仓库",
        "team_repos_1": "1 个仓库",
        "team_risk": "；风险最高的是 {repo}（{pr} 的{risk}）。",
        "team_no_risk": "；没有风险观察。",
        "team_part_warning": "{repo}：{warning}",
        "team_part_failed": "{repo} 未计入本期报告：{error}",
        # Chat: a team subscription's name, bad repository words, which repository.
        "team_name_repos": "{repos}（合并为一份报告）",
        "team_name_owner": "{owner} 的所有仓库",
        "err_repo_name": "「{text}」不是仓库名（写成 owner/name；订阅某个 owner 的所有仓库写 org:owner）",
        "err_repo_twice": "{repo} 写了两次",
        "err_team_mixed": "请写仓库（owner/a owner/b）或 org:owner，二者选一",
        "team_which_repo": "本群订阅的是 {team} 的合并报告。`报告` 给出整份报告；其他命令请写明一个仓库，例如 `风险 {first}`。",
        "team_which_owner": "本群订阅的是 {owner} 的所有仓库。`报告` 给出整份报告；其他命令请写明一个仓库，例如 `风险 {owner}/name`。",
        "team_no_repos": "找不到 {owner} 的仓库：请在配置的 [[repos]] 中列出它们，或设置 GitHub token。",
    },
    "en": {
        "team_summary": "{since} to {until}: {repos}, {merged} merged; most activity in {busiest} ({busiest_n})",
        "team_summary_empty": "{since} to {until}: {repos}, no merged PRs",
        "team_repos_n": "{n} repositories",
        "team_repos_1": "1 repository",
        "team_risk": "; highest risk in {repo} ({risk} in {pr}).",
        "team_no_risk": "; no risk observations.",
        "team_part_warning": "{repo}: {warning}",
        "team_part_failed": "{repo} is left out of this digest: {error}",
        "team_name_repos": "{repos} (one digest)",
        "team_name_owner": "every repository of {owner}",
        "err_repo_name": "'{text}' is not a repository (write owner/name, or org:owner for every repository of "
        "an owner)",
        "err_repo_twice": "{repo} is named twice",
        "err_team_mixed": "name repositories (owner/a owner/b) or org:owner, not both",
        "team_which_repo": "This chat follows one digest of {team}. `report` answers it whole; for this command "
        "name one repository, e.g. `risks {first}`.",
        "team_which_owner": "This chat follows every repository of {owner}. `report` answers it whole; for this "
        "command name one repository, e.g. `risks {owner}/name`.",
        "team_no_repos": "No repository of {owner} is known: list them as [[repos]] in the config file, or set "
        "a GitHub token.",
    },
}
