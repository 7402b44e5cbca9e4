"""explain #N: what a PR does, why it scored so, its risks with evidence, unresolved threads, files."""

from __future__ import annotations

from prdigest.errors import UsageError
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Scope, resolve, text_reply
from prdigest.handlers.tool_args import ExplainArgs
from prdigest.i18n import risk_name, texts
from prdigest.models import PRAnalysis, PullRequest, zone
from prdigest.pipeline.single import analyse
from prdigest.render.markdown import escape
from prdigest.sources.repo_file import repo_settings

MAX_FILES = 15
_UNKNOWN = ("reviews", "review_threads", "checks", "is_fork", "labels")


@command(
    "explain", en=("explain",), zh=("解释", "说明"), order=40, lane="pr",
    tool=ExplainArgs, tool_about="What one pull request does, why it matters, its risks.",
)  # fmt: skip
def explain(intent: Intent, ctx: Context, svc: Services) -> Reply:
    if intent.pr is None:
        raise UsageError("name the PR with its number, e.g. explain #3128", "err_pr_missing")
    scope = resolve(intent, ctx, svc)
    pr, looked = _find(svc, scope, intent.pr)
    t = texts(scope.lang)
    if pr is None:
        text = t["explain_not_found"].format(number=intent.pr, repo=scope.repo, where=", ".join(looked))
        return text_reply("text", scope.lang, text, repo=scope.repo)
    # The same analysis the report shows, by the settings it was made with (the repository's own file, as
    # the cache kept it): the LLM's where one is configured, else the rules'.
    settings, _ = repo_settings(svc.settings, svc.store, None, scope.repo, scope.lang)
    taxonomy = settings.repo(scope.repo).taxonomy
    analyses, _ = analyse(settings, svc.store, svc.source_for(scope.repo), [pr], taxonomy, scope.lang)
    analysis = analyses[intent.pr]
    title = t["explain_title"].format(number=pr.number, title=pr.title)
    return text_reply(
        "explain",
        scope.lang,
        _text(pr, analysis, t, scope),
        title=title,
        repo=scope.repo,
        pr=pr,
        analysis=analysis,
    )


def _find(svc: Services, scope: Scope, number: int) -> tuple[PullRequest | None, list[str]]:
    """The cache first; then the repository's source, when it can fetch one PR."""
    t = texts(scope.lang)
    looked = [t["where_cache"]]
    pr = svc.store.get_pr(scope.repo, number)
    if pr is not None:
        return pr, looked
    source = svc.source_for(scope.repo)
    if source is None or not source.finds_prs:
        return None, [*looked, t["where_no_source"]]
    looked.append(t["where_source"].format(kind=source.kind))
    pr = source.fetch_pr(number)
    if pr is not None:
        svc.store.upsert_prs([pr])
    return pr, looked


def _text(pr: PullRequest, a: PRAnalysis, t: dict[str, str], scope: Scope) -> str:
    out = [f"**{escape(t['explain_title'].format(number=pr.number, title=pr.title))}**", ""]
    merged = pr.merged_at.astimezone(zone(scope.tz)).date()
    meta = t["explain_meta"].format(
        author=escape(pr.author),
        merged=merged,
        additions=pr.additions,
        deletions=pr.deletions,
        imp=f"{a.importance:g}",
        ins=f"{a.insight:g}",
    )
    tags = t["explain_tags"].format(tags=", ".join(a.tags) or "-")
    out += [meta, "", escape(a.summary), "", escape(a.explanation), "", tags]
    out += ["", f"**{t['explain_why']}**"] + [f"- {escape(r)}" for r in a.reasons]
    out += ["", f"**{t['explain_risks']}**"]
    out += [
        f"- {risk_name(r.label, scope.lang)}: {escape(r.evidence)} [{r.evidence_source}]" for r in a.risks
    ]
    if not a.risks:
        out.append(t["explain_no_risks"])
    unknown = [s for s in _UNKNOWN if getattr(pr, s) is None]
    if unknown:
        out.append(t["explain_unknown"].format(signals=", ".join(unknown)))
    if a.unresolved:
        out += ["", f"**{t['explain_unresolved']}**"] + [f"- {escape(u)}" for u in a.unresolved]
    files = pr.files or []
    if files:
        out += ["", f"**{t['explain_files'].format(n=len(files))}**"]
        out += [f"- {escape(f.path)} +{f.additions or 0}/-{f.deletions or 0}" for f in files[:MAX_FILES]]
        if len(files) > MAX_FILES:
            out.append(t["explain_more_files"].format(n=len(files) - MAX_FILES))
    if pr.related:
        out += ["", t["explain_related"].format(prs=" ".join(f"#{n}" for n in pr.related))]
    if pr.url:
        out += ["", t["explain_link"].format(url=pr.url)]
    return "\n".join(out)
