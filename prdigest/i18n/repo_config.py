"""The texts about a repository's own .prdigest.toml, in zh and en (see prdigest.i18n)."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "repo_file_unused": "{repo} 的 .prdigest.toml 未被采用：{reason}",
    },
    "en": {
        "repo_file_unused": "{repo}'s .prdigest.toml is not used: {reason}",
    },
}
