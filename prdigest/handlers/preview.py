"""preview: what a subscription of a repository would have posted over the last four complete weeks, in one
message, without subscribing: nothing is posted, no subscription is written, no report is saved."""

from __future__ import annotations

from datetime import datetime, timedelta

from prdigest.config import Settings
from prdigest.errors import UsageError
from prdigest.handlers.access import refusal, seen, sees_all
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import text_reply
from prdigest.i18n import texts
from prdigest.models import Report, Window, iso_week_label
from prdigest.periods import last_complete_week
from prdigest.pipeline.single import make_report
from prdigest.render.digest import digest_figures, verdict
from prdigest.render.markdown import escape
from prdigest.sources.base import Source
from prdigest.storage import Store

WEEKS = 4
RISKS_SHOWN = 3


def preview_reports(
    settings: Settings, store: Store, source: Source | None, repo: str, lang: str, now: datetime
) -> list[Report]:
    """The reports of the last WEEKS complete weeks (in the report timezone), oldest first: by the rules
    engine (four narratives are not worth a model's budget for a look), from the cache and what the
    source adds to it, none saved."""
    if source is None and store.count_prs(repo) == 0:
        raise UsageError(f"the cache holds no PRs of {repo}", "err_empty_cache", repo=repo)
    last = last_complete_week(now, settings.report.timezone)
    weeks = [
        Window(
            since=last.since - timedelta(days=7 * back),
            until=last.until - timedelta(days=7 * back),
            tz=last.tz,
        )
        for back in reversed(range(WEEKS))
    ]
    return [
        make_report(
            settings,
            store,
            source,
            week,
            repo=repo,
            lang=lang,
            save=False,
            use_llm=False,
            refresh=False,
            now=now,
        )
        for week in weeks
    ]


def preview_text(repo: str, reports: list[Report], lang: str) -> str:
    """One line per week (merged and key PRs, risk level, its top risk), then the latest week's digest."""
    t = texts(lang)
    lines = [f"**{t['preview_title'].format(repo=repo)}**", ""]
    for report in reports:
        top = report.risk_observations[0].title if report.risk_observations else t["preview_quiet"]
        s = report.stats
        lines.append("- " + t["preview_line"].format(
            week=iso_week_label(report.window.since), merged=s.merged_prs, key=s.key_prs,
            level=t[f"risk_{report.risk_level}"], top=escape(top),
        ))  # fmt: skip
    latest = reports[-1]
    lines += ["", f"**{t['preview_latest'].format(week=iso_week_label(latest.window.since))}**"]
    lines += [escape(verdict(latest, t)), ""]
    lines += [f"- {name}: {value}" for name, value in digest_figures(latest, t)]
    risks = latest.risk_observations[:RISKS_SHOWN]
    lines += [
        f"{i}. {escape(o.title)} {' '.join(f'#{n}' for n in o.prs[:3])}" for i, o in enumerate(risks, 1)
    ]
    lines += [*(f"> ⚠ {escape(w)}" for w in latest.warnings[:2]), "", t["preview_note"].format(repo=repo)]
    return "\n".join(lines)


@command("preview", en=("preview",), zh=("预览",), order=80, leads=True)
def preview(intent: Intent, ctx: Context, svc: Services) -> Reply:
    lang = intent.lang
    if intent.repo is None:
        return text_reply("text", lang, texts(lang)["preview_needs_repo"])
    # A look at a repository the chat does not subscribe to reads GitHub for a stranger: admins only.
    if not sees_all(ctx, svc) and refusal(ctx, seen(ctx, svc), intent.repo, lang) is not None:
        return text_reply("refusal", lang, texts(lang)["access_preview"].format(repo=intent.repo))
    reports = preview_reports(
        svc.settings, svc.store, svc.source_for(intent.repo), intent.repo, lang, svc.clock()
    )
    return text_reply("text", lang, preview_text(intent.repo, reports, lang), repo=intent.repo)
