"""What a command is about: the repository, the language, the period; and the week's report from the cache."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from prdigest.errors import UsageError
from prdigest.handlers.access import refusal, seen, sees_all
from prdigest.handlers.commands import Intent
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.report_memo import Key, memo_for
from prdigest.i18n import texts
from prdigest.models import Lang, Report, Window
from prdigest.periods import default_window, today_in
from prdigest.pipeline.single import make_report, newest_merged
from prdigest.pipeline.team import make_team_report, team_repos
from prdigest.redact import scrub_value
from prdigest.sources.base import Source
from prdigest.sources.bounded import chat_reads
from prdigest.storage import coverage
from prdigest.storage.revision import revision
from prdigest.subscription import Subscription


class Answer(Exception):
    """A reply that ends the command early (which repository?, bad input, a refusal)."""

    def __init__(self, reply: Reply):
        super().__init__(reply.text)
        self.reply = reply


@dataclass
class Scope:
    repo: str  # a repository, or a team subscription's key (only where the command asked for one)
    lang: Lang
    tz: str
    subscription: Subscription | None
    chat: str  # platform:chat id, whose limits its reads count against

    @property
    def team(self) -> bool:
        """Whether the scope is a team digest's (several repositories), not one repository's."""
        sub = self.subscription
        return sub is not None and sub.is_team and sub.repo == self.repo


def text_reply(kind: str, lang: Lang, text: str, **kw: object) -> Reply:
    return Reply.model_validate({"kind": kind, "lang": lang, "text": text, **kw})


def resolve(intent: Intent, ctx: Context, svc: Services, *, team: bool = False) -> Scope:
    """The repository named, else the card's the message answers, else the chat's only subscription,
    else the session's default. A team subscription answers for a command that takes one (``team``:
    the report; the chat's one team, when it has others too); the others ask which of its repositories.
    A repository the asker may not see here is refused (handlers/access.py)."""
    found = seen(ctx, svc)
    subs = found.subscriptions
    lang: Lang = intent.lang
    t = texts(lang)
    repo = intent.repo or (ctx.thread.repo if ctx.thread else None)
    teams = [s for s in subs if s.is_team]
    if repo is None and team and len(teams) == 1:  # the chat's one team digest, beside its other reports
        repo = teams[0].repo
    if repo is None and len(subs) > 1:
        repos = ", ".join(s.repo for s in subs)
        raise Answer(text_reply("text", lang, t["which_repo"].format(repos=repos, first=subs[0].repo)))
    if repo is None:
        repo = subs[0].repo if subs else svc.default_repo
    if repo is None:
        raise Answer(text_reply("text", lang, t["no_repo"]))
    repo = _spelled(repo, subs, svc)
    refused = None if sees_all(ctx, svc) else refusal(ctx, found, repo, lang)
    if refused is not None:
        raise Answer(text_reply("refusal", lang, refused, repo=repo))
    sub = next((s for s in subs if s.repo == repo), None)
    if sub is not None and sub.is_team and not team:
        raise Answer(text_reply("text", lang, _which_of(sub, svc, t)))
    # A repository of the chat's team keeps the team's timezone.
    sub = sub or next((s for s in subs if repo in team_repos(svc.settings, s)), None)
    tz = sub.tz if sub else svc.settings.report.timezone
    return Scope(repo=repo, lang=lang, tz=tz, subscription=sub, chat=f"{ctx.platform}:{ctx.chat_id}")


def _spelled(repo: str, subs: list[Subscription], svc: Services) -> str:
    """``repo`` as the chat's subscriptions, the settings or the session spell it: GitHub's names ignore
    case, the cache's keys do not ("top Owner/Name" is owner/name's)."""
    known = [s.repo for s in subs] + [r for s in subs if s.is_team for r in team_repos(svc.settings, s)]
    known += [r.name for r in svc.settings.repos] + ([svc.default_repo] if svc.default_repo else [])
    return next((name for name in known if name.casefold() == repo.casefold()), repo)


def _which_of(sub: Subscription, svc: Services, t: dict[str, str]) -> str:
    """Which repository of the chat's team digest a one-repository command is about: name one."""
    repos = team_repos(svc.settings, sub)
    if not repos:
        return t["team_which_owner"].format(owner=sub.owner)
    return t["team_which_repo"].format(team=", ".join(repos), first=repos[0])


def window_of(intent: Intent, ctx: Context, scope: Scope, svc: Services) -> Window | None:
    """The period named; else, in a card's thread, the card's; else the command's default (the last
    complete week, in the chat's timezone); None for a question that names no period."""
    thread = ctx.thread
    if intent.window is None and intent.period is None and thread is not None and thread.repo == scope.repo:
        return Window(since=thread.since, until=thread.until, tz=thread.tz)
    return intent.window_in(today_in(svc.clock(), scope.tz), scope.tz)


def asked_week(intent: Intent, ctx: Context, scope: Scope, svc: Services) -> Window:
    """The PRs a question is answered from by their fields: its period, else the last complete week."""
    return window_of(intent, ctx, scope, svc) or default_window(today_in(svc.clock(), scope.tz), scope.tz)


def week_report(
    svc: Services, scope: Scope, window: Window, *, sync: bool = False, save: bool = False
) -> Report:
    """The period's report from the cache, after reading from the source the days the cache lacks (all of
    the period when asked to sync); days no source could give are named in its warnings."""
    with _reads(svc, scope) as source_for:
        return _week_report(svc, scope, window, source_for(scope.repo), sync=sync, save=save)


def _week_report(
    svc: Services, scope: Scope, window: Window, source: Source | None, *, sync: bool, save: bool
) -> Report:
    memo, llm = memo_for(svc.store), svc.settings.llm
    sub = scope.subscription  # its filters and mutes shape the chat's answers as they shape its card
    key = Key(
        scope.repo, str(window.since), str(window.until), window.tz, scope.lang,
        engine=llm.model if llm else "rules", source=source.kind if source else "cache",
        shaping=sub.model_dump_json(include={"filters", "muted"}) if sub else "",
    )  # fmt: skip
    # Only complete, past periods are kept (below): while the cache stands, the memo's report is the one.
    found = None if sync or save else memo.get(key, revision(svc.store, scope.repo), svc.settings)
    if found is not None:
        return found
    if source is None and svc.store.count_prs(scope.repo) == 0:
        raise UsageError(f"the cache holds no PRs of {scope.repo}", "err_empty_cache", repo=scope.repo)
    now = svc.clock()

    def build() -> Report:
        # Scrubbed once, as built: the memo shares it with every reply, which need not scrub it again.
        return scrub_value(make_report(
            svc.settings, svc.store, source, window, repo=scope.repo, lang=scope.lang, save=save,
            refresh=sync, now=now, subscription=sub,
        ))  # fmt: skip

    # A sync, a saved report, or a period with days the cache lacks (read now, or named as missing)
    # is built; else the cache's report is shared until the cache changes (handlers/report_memo.py).
    if sync or save or coverage.missing(svc.store, scope.repo, window, now):
        return build()
    # A period that runs past now would lack its later days once they come: built every time.
    past = window.end <= now
    return memo.report(
        svc.store, svc.settings, key, build, keep=lambda r: past and _reusable(r, llm is not None)
    )


def team_report(svc: Services, scope: Scope, window: Window) -> Report:
    """The team digest of the scope's subscription: each repository's report read afresh (as the one
    repository `report` is: synced and saved), combined."""
    assert scope.subscription is not None and scope.team  # resolve(team=True) found the chat's team
    with _reads(svc, scope) as source_for:
        report = make_team_report(
            svc.settings, svc.store, scope.subscription, window, now=svc.clock(), source_for=source_for,
            lang=scope.lang,
        )  # fmt: skip
    return scrub_value(report)


def newest_of(svc: Services, scope: Scope) -> tuple[str, int, datetime] | None:
    """The repository's newest merged PR (source, number, merge time), for the hint of a period without
    PRs: read within the chat's GitHub points too."""
    with _reads(svc, scope) as source_for:
        return newest_merged(svc.store, source_for(scope.repo), scope.repo)


def _reads(svc: Services, scope: Scope) -> AbstractContextManager[Callable[[str], Source | None]]:
    """The sources a command reads on the chat's behalf, within [chat] max_sync_days and
    github_points_per_hour (sources/bounded.py)."""
    return chat_reads(svc.store, svc.source_for, scope.chat, scope.lang, svc.settings.chat, svc.clock())


def _reusable(report: Report, llm: bool) -> bool:
    """Whether a built report may answer later commands: not one without PRs (its hint names the source's
    newest PR, which the cache does not track), nor one the LLM fell short on (tried again next time)."""
    usage = report.llm_usage
    fell_short = llm and (usage is None or usage.narrative != "llm" or usage.fallback > 0)
    return bool(report.prs) and not fell_short


def period_text(window: Window, lang: Lang) -> str:
    return texts(lang)["period"].format(since=window.since, until=window.until)
