"""The rules engine's analyses, each computed once per PR content, rules version and language, then cached.

The analysis layer's own access to them: a follow-up of earlier weeks reads their analyses without the
pipeline (which sits above this layer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prdigest.analysis import rules
from prdigest.config import Taxonomy
from prdigest.models import PRAnalysis, PullRequest, Window
from prdigest.storage import Store
from prdigest.storage.db import analysis_key


def window_analyses(
    store: Store, repo: str, window: Window, taxonomy: Taxonomy, lang: str
) -> dict[int, PRAnalysis]:
    """The rules engine's analysis of every PR of the window in the cache: the cached ones read back, the
    others read from the cache (diffs and all) a batch at a time, analysed and kept."""
    return cached_analyses(store, repo, store.pr_keys(repo, window), store.prs_by_uid, taxonomy, lang)


def cached_analyses(
    store: Store,
    repo: str,
    prs: list[tuple[str, int, str]],
    read: Callable[[list[str]], Iterator[list[PullRequest]]],
    taxonomy: Taxonomy,
    lang: str,
) -> dict[int, PRAnalysis]:
    """Analyses of ``prs`` (uid, number, content hash), in their order: cached, else made from the PRs
    ``read`` gives a batch at a time."""
    version = rules.rules_version(taxonomy)
    keys = {n: analysis_key(repo, n, content, "rules", None, version, lang) for _, n, content in prs}
    cached = store.get_analyses(list(keys.values()))
    made: dict[int, PRAnalysis] = {}
    for batch in read([uid for uid, n, _ in prs if keys[n] not in cached]):
        fresh = [(pr, rules.analyse(pr, taxonomy, lang)) for pr in batch]
        if fresh:
            store.put_analyses(fresh, lang)
        made.update((pr.number, analysis) for pr, analysis in fresh if pr.number is not None)
    # Every PR has its analysis now, in the PRs' order: the fresh one, else the cached one.
    return {n: made[n] if n in made else cached[keys[n]] for _, n, _ in prs}
