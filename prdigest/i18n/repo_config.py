"""The texts about a repository's own .prdigest.toml, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "repo_file_unused": "{repo} 的 .prdigest.toml 未被采用：{reason}",
        "repo_file_filtered": "{repo} 的 .prdigest.toml 的过滤条件排除了本期 {n} 个 PR：{prs}",
    },
    "en": {
        "repo_file_unused": "{repo}'s .prdigest.toml is not used: {reason}",
        "repo_file_filtered": "{repo}'s .prdigest.toml filters leave out {n} PRs of this period: {prs}",
    },
}
