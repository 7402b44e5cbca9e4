"""snooze and ack: quiet an open PR or a risk, from the buttons of a weekly card's thread or typed
(`snooze #12`, `ack no_tests`).

An open PR: anyone in a chat that sees its repository may snooze it for a week, or acknowledge it (quiet
for as long as it waits for the same reason). A risk: an admin's. Snoozed, its label stays out of the
repository's reports for a week; acknowledged, the label is dismissed on the PRs of the card's week that
carry it (as `dismiss` does, one PR at a time). Each is stored with who and when; the next reports and
`open` honour it, and a weekly card of that week already in the chat is redrawn in place.
"""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import get_args

from prdigest.analysis.taxonomy import RISK_LABELS
from prdigest.handlers.args import Args, pr_number, read_args
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Answer, Scope, asked_week, period_text, resolve, text_reply, week_report
from prdigest.i18n import risk_name, texts
from prdigest.model_base import OpenReason
from prdigest.models import Dismissal, Snooze
from prdigest.storage.dismissals import save_dismissal
from prdigest.storage.snoozes import save_snooze

WEEK = timedelta(days=7)


@command("snooze", en=("snooze",), zh=("暂缓",), order=152, leads=True, names_pr=True)
def snooze(intent: Intent, ctx: Context, svc: Services) -> Reply:
    return _quiet(intent, ctx, svc, until_next_week=True)


@command("ack", en=("ack", "acknowledge"), zh=("知悉",), order=154, leads=True, names_pr=True)
def ack(intent: Intent, ctx: Context, svc: Services) -> Reply:
    return _quiet(intent, ctx, svc, until_next_week=False)


def _quiet(intent: Intent, ctx: Context, svc: Services, *, until_next_week: bool) -> Reply:
    args = read_args(intent.args)
    scope = resolve(Intent(intent.command, intent.lang, repo=args.repo or intent.repo), ctx, svc)
    numbers = [w.lstrip("#") for w in args.rest if w.lstrip("#").isdigit()]
    number = intent.pr or (pr_number(numbers[0]) if numbers else None)
    if number is not None:
        reply = _quiet_open(intent, ctx, svc, scope, number, until_next_week)
    else:
        reply = _quiet_risk(intent, ctx, svc, scope, _rule(args, scope), until_next_week)
    if intent.window is not None:  # a button: its card, when it is a weekly one of this chat, redrawn
        svc.redraw(ctx.platform, ctx.chat_id, scope.repo, intent.window)
    return reply


def _rule(args: Args, scope: Scope) -> str:
    t = texts(scope.lang)
    listing = t["noise_rules"].format(rules=", ".join(RISK_LABELS))
    named = [w.lower().replace("-", "_") for w in args.rest]
    rule = next((w for w in named if w in RISK_LABELS), None)
    if rule is None:
        raise Answer(text_reply("text", scope.lang, f"{t['quiet_needs_target']} {listing}"))
    return rule


def _quiet_open(
    intent: Intent, ctx: Context, svc: Services, scope: Scope, number: int, until_next_week: bool
) -> Reply:
    """Snooze open PR ``number`` for a week, or acknowledge it for the reason it waits for now (the
    button's, else the source's)."""
    t, repo, now = texts(scope.lang), scope.repo, svc.clock().astimezone(UTC)
    if until_next_week:
        save_snooze(svc.store, Snooze(repo=repo, kind="open", number=number, label="", until=now + WEEK,
                                      by=ctx.user_id, at=now))  # fmt: skip
        text = t["snooze_open_saved"].format(number=number, repo=repo, until=(now + WEEK).date())
        return text_reply("text", scope.lang, text, repo=repo)
    reason = _reason(intent, svc, repo, number)
    if reason is None:
        return text_reply(
            "text", scope.lang, t["ack_open_missing"].format(number=number, repo=repo), repo=repo
        )
    save_snooze(
        svc.store, Snooze(repo=repo, kind="open", number=number, label=reason, by=ctx.user_id, at=now)
    )
    return text_reply("text", scope.lang, t["ack_open_saved"].format(number=number, repo=repo), repo=repo)


def _reason(intent: Intent, svc: Services, repo: str, number: int) -> str | None:
    """Why the PR waits: the button says; typed, the source tells (None: it waits for nobody now)."""
    if intent.window is not None and intent.args in get_args(OpenReason):
        return intent.args
    source = svc.source_for(repo)
    found = source.attention(svc.settings.attention, svc.clock()) if source is not None else None
    return next((op.reason for op in found.open_prs if op.number == number), None) if found else None


def _quiet_risk(
    intent: Intent, ctx: Context, svc: Services, scope: Scope, rule: str, until_next_week: bool
) -> Reply:
    """An admin's: snooze the label for the repository for a week, or dismiss it on the week's PRs."""
    t, repo, lang, now = texts(scope.lang), scope.repo, scope.lang, svc.clock().astimezone(UTC)
    if not svc.is_admin(ctx):
        raise Answer(text_reply("refusal", lang, t["quiet_risk_refused"]))
    name = risk_name(rule, lang)
    if until_next_week:
        save_snooze(svc.store, Snooze(repo=repo, kind="risk", number=0, label=rule, until=now + WEEK,
                                      by=ctx.user_id, at=now))  # fmt: skip
        text = t["snooze_risk_saved"].format(rule=rule, name=name, repo=repo, until=(now + WEEK).date())
        return text_reply("text", lang, text, repo=repo)
    window = asked_week(intent, ctx, scope, svc)
    report = week_report(svc, scope, window)
    prs = sorted({n for o in report.risk_observations if o.label == rule for n in o.prs})
    period = period_text(window, lang)
    if not prs:
        return text_reply(
            "text", lang, t["ack_risk_none"].format(rule=rule, repo=repo, period=period), repo=repo
        )
    for number in prs:
        save_dismissal(svc.store, Dismissal(repo=repo, number=number, label=rule, by=ctx.user_id, at=now))
    text = t["ack_risk_saved"].format(rule=rule, name=name, repo=repo, period=period, n=len(prs))
    return text_reply("text", lang, text, repo=repo)
