"""mute, unmute, dismiss, undismiss: admins quiet a chat's reports (prdigest.analysis.noise applies them).

A mute belongs to one subscription (the chat's reports of one repository); a dismissal to the repository
(every later report of it, in any chat). Only a rule's label may be muted or dismissed, and a dismissal
names a PR the cache holds that carries that label now (the rules' analysis, or the LLM's where one is
configured): a typo dismisses nothing.
"""

from __future__ import annotations

from datetime import UTC

from prdigest.analysis.taxonomy import RISK_LABELS
from prdigest.handlers.args import Args, pr_number, read_args
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Answer, resolve, text_reply
from prdigest.i18n import risk_name, texts
from prdigest.models import Dismissal, Lang, PullRequest
from prdigest.pipeline.single import analyse, analyse_prs
from prdigest.sources.repo_file import repo_settings
from prdigest.storage.dismissals import delete_dismissal, save_dismissal
from prdigest.storage.subscriptions import list_subscriptions, save_subscription
from prdigest.subscription import Subscription

RULES = RISK_LABELS  # a rule of the rules engine: its risk label


def _admitted(intent: Intent, ctx: Context, svc: Services) -> tuple[Args, Lang, dict[str, str]]:
    """The command's words, once the asker is known to be an admin."""
    t = texts(intent.lang)
    if not svc.is_admin(ctx):
        raise Answer(text_reply("refusal", intent.lang, t["noise_refused"]))
    return read_args(intent.args), intent.lang, t


def _rule(words: list[str], lang: Lang, missing: str) -> str:
    """The rule named among ``words`` (the first that is not a PR number); a clear answer when none is."""
    t = texts(lang)
    named = [w for w in words if not w.lstrip("#").isdigit()]
    listing = t["noise_rules"].format(rules=", ".join(RULES))
    if not named:
        raise Answer(text_reply("text", lang, f"{t[missing]} {listing}"))
    rule = named[0].lower().replace("-", "_")
    if rule not in RULES:
        raise Answer(text_reply("text", lang, f"{t['mute_unknown'].format(rule=named[0][:40])} {listing}"))
    return rule


def _subscription(ctx: Context, svc: Services, repo: str | None, lang: Lang, example: str) -> Subscription:
    """The chat's subscription of ``repo`` (one that reports it), else the chat's only one."""
    t = texts(lang)
    subs = list_subscriptions(svc.store, ctx.platform, ctx.chat_id)
    if repo is not None:
        subs = [s for s in subs if repo in (s.repo, *s.repos)]
    if not subs:
        raise Answer(text_reply("text", lang, t["mute_no_sub"]))
    if len(subs) > 1:
        repos = ", ".join(s.repo for s in subs)
        raise Answer(
            text_reply("text", lang, t["mute_which_sub"].format(repos=repos, example=example + subs[0].repo))
        )
    return subs[0]


def _mute(intent: Intent, ctx: Context, svc: Services, on: bool) -> Reply:
    args, lang, t = _admitted(intent, ctx, svc)
    rule = _rule(args.rest, lang, "mute_needs_rule")
    word = t["usage_mute" if on else "usage_unmute"].split()[0]
    sub = _subscription(ctx, svc, args.repo or intent.repo, lang, f"{word} {rule} ")
    if on == (rule in sub.muted):
        key = "mute_already" if on else "unmute_missing"
        return text_reply("text", lang, t[key].format(rule=rule, repo=sub.repo), repo=sub.repo)
    muted = sorted({*sub.muted, rule} if on else set(sub.muted) - {rule})
    saved = save_subscription(svc.store, sub.model_copy(update={"muted": muted}))
    svc.on_subscriptions_changed()
    text = t["mute_saved" if on else "unmute_saved"].format(
        rule=rule, name=risk_name(rule, lang), repo=sub.repo
    )
    return text_reply("subscriptions", lang, text, repo=sub.repo, subscriptions=[saved])


@command("mute", en=("mute",), zh=("静音",), order=120, admin=True, leads=True)
def mute(intent: Intent, ctx: Context, svc: Services) -> Reply:
    return _mute(intent, ctx, svc, on=True)


@command("unmute", en=("unmute",), zh=("取消静音",), order=130, admin=True, leads=True)
def unmute(intent: Intent, ctx: Context, svc: Services) -> Reply:
    return _mute(intent, ctx, svc, on=False)


def _target(intent: Intent, ctx: Context, svc: Services) -> tuple[str, int, str, Lang, dict[str, str]]:
    """The repository, PR number and rule of a dismissal; the repository as other commands find it."""
    args, lang, t = _admitted(intent, ctx, svc)
    numbers = [w.lstrip("#") for w in args.rest if w.lstrip("#").isdigit()]
    if not numbers:
        raise Answer(text_reply("text", lang, t["dismiss_needs_pr"]))
    number = pr_number(numbers[0])
    rule = _rule(args.rest, lang, "dismiss_needs_pr")
    repo = resolve(Intent(intent.command, lang, repo=args.repo or intent.repo), ctx, svc).repo
    return repo, number, rule, lang, t


def _labels(svc: Services, repo: str, pr: PullRequest, lang: Lang) -> list[str]:
    """The risk labels a report may show on ``pr``: the rules engine's, and the LLM's where one is
    configured (its analysis is the cached one the report used, or made now as `explain` makes it)."""
    settings = repo_settings(svc.settings, svc.store, None, repo, lang)[0]
    taxonomy = settings.repo(repo).taxonomy
    analyses = [analyse_prs(svc.store, [pr], taxonomy, lang)]
    if settings.llm is not None:
        analyses.append(analyse(settings, svc.store, svc.source_for(repo), [pr], taxonomy, lang)[0])
    found = [r.label for a in analyses if pr.number in a for r in a[pr.number].risks]
    return list(dict.fromkeys(found))


@command("dismiss", en=("dismiss",), zh=("忽略",), order=140, admin=True, leads=True, names_pr=True)
def dismiss(intent: Intent, ctx: Context, svc: Services) -> Reply:
    repo, number, rule, lang, t = _target(intent, ctx, svc)
    pr = svc.store.get_pr(repo, number)
    if pr is None:
        return text_reply("text", lang, t["dismiss_no_pr"].format(number=number, repo=repo), repo=repo)
    carried = _labels(svc, repo, pr, lang)
    if rule not in carried:
        labels = ", ".join(carried) or t["dismiss_no_labels"]
        text = t["dismiss_not_carried"].format(number=number, repo=repo, rule=rule, labels=labels)
        return text_reply("text", lang, text, repo=repo)
    when = svc.clock().astimezone(UTC)
    save_dismissal(svc.store, Dismissal(repo=repo, number=number, label=rule, by=ctx.user_id, at=when))
    text = t["dismiss_saved"].format(number=number, rule=rule, name=risk_name(rule, lang), repo=repo)
    return text_reply("text", lang, text, repo=repo)


@command("undismiss", en=("undismiss",), zh=("取消忽略",), order=150, admin=True, leads=True, names_pr=True)
def undismiss(intent: Intent, ctx: Context, svc: Services) -> Reply:
    repo, number, rule, lang, t = _target(intent, ctx, svc)
    removed = delete_dismissal(svc.store, repo, number, rule)
    key = "undismiss_saved" if removed else "undismiss_missing"
    return text_reply("text", lang, t[key].format(number=number, rule=rule, repo=repo), repo=repo)
