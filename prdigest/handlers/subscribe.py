"""subscribe, unsubscribe, subscriptions: the chat's weekly reports. Only admins may change them.

A subscription names one repository, several (one team digest of them: `subscribe owner/a owner/b`) or
every repository of an owner (`subscribe org:owner`); unsubscribe takes the same words."""

from __future__ import annotations

from datetime import UTC

from prdigest.analysis.noise import filters_text
from prdigest.handlers.args import Args, read_args
from prdigest.handlers.commands import Intent, command, words
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Answer, text_reply
from prdigest.i18n import texts
from prdigest.models import Lang
from prdigest.pipeline.team import team_repos
from prdigest.storage.subscriptions import delete_subscription, list_subscriptions, save_subscription
from prdigest.subscription import Subscription


def _admin_args(
    intent: Intent, ctx: Context, svc: Services, only: Subscription | None = None
) -> tuple[Args, Subscription, Lang]:
    """The arguments of a command that changes subscriptions (only admins may), the subscription they
    name (repositories or an owner: it names one; ``only`` when they name none) and the answer's language."""
    lang = intent.lang
    if not svc.is_admin(ctx):
        raise Answer(text_reply("refusal", lang, texts(lang)["sub_refused"]))
    args = read_args(intent.args)
    if not args.named and only is not None:
        return args, only, lang
    if not args.named:
        raise Answer(text_reply("text", lang, texts(lang)["sub_needs_repo"]))
    target = Subscription(
        platform=ctx.platform, chat_id=ctx.chat_id, repos=args.repos, owner=args.owner,
        day=args.day or "mon", time=args.time or "09:30", tz=args.tz or svc.settings.report.timezone,
        lang=args.lang or intent.lang, created_by=ctx.user_id, created_at=svc.clock().astimezone(UTC),
    )  # fmt: skip
    return args, target, lang


def name_of(sub: Subscription, lang: str) -> str:
    """What a subscription is of, for a reader: a repository, a team's repositories, an owner's."""
    t = texts(lang)
    if sub.owner is not None:
        return t["team_name_owner"].format(owner=sub.owner)
    if sub.repos:
        return t["team_name_repos"].format(repos=", ".join(sub.repos))
    return sub.repo


def describe(sub: Subscription, lang: str) -> str:
    t = texts(lang)
    return t["sub_line"].format(
        repo=name_of(sub, lang),
        day=t[f"day_{sub.day}"],
        time=sub.time,
        tz=sub.tz,
        lang=t[f"lang_{sub.lang}"],
        id=sub.id,
    )


@command(
    "subscribe", en=("subscribe", "sub"), zh=("订阅",), order=100, admin=True, leads=True, lane="fast",
    said=words(r"\bsubscribe\b|订阅", r"每周.{0,10}(?:推|发)(?:送|给)?"), specific=3,
)  # fmt: skip
def subscribe(intent: Intent, ctx: Context, svc: Services) -> Reply:
    _, sub, lang = _admin_args(intent, ctx, svc)
    t = texts(lang)
    if sub.owner is not None and not (team_repos(svc.settings, sub) or svc.settings.github.authenticated):
        # No weekly run could find a repository of it: said now, not in a failed delivery.
        raise Answer(text_reply("text", lang, t["team_no_repos"].format(owner=sub.owner)))
    configured = None if sub.is_team else svc.settings.repo(sub.repo).git
    if configured is not None:  # a team's repositories each read their own configured source
        sub = sub.model_copy(update={"source": "git", "git_path": str(configured)})
    # Subscribing again changes when and in which language; the mutes and filters set before stay.
    before = next(
        (s for s in list_subscriptions(svc.store, ctx.platform, ctx.chat_id) if s.repo == sub.repo), None
    )
    if before is not None:
        sub = sub.model_copy(update={"muted": before.muted, "filters": before.filters})
    saved = save_subscription(svc.store, sub)
    svc.on_subscriptions_changed()
    text = t["sub_saved"].format(
        repo=name_of(saved, lang),
        day=t[f"day_{saved.day}"],
        time=saved.time,
        tz=saved.tz,
        lang=t[f"lang_{saved.lang}"],
    )
    return text_reply("subscriptions", lang, text, repo=saved.repo, subscriptions=[saved])


@command(
    "unsubscribe", en=("unsubscribe", "unsub"), zh=("取消订阅", "退订"), order=110, admin=True, leads=True,
    lane="fast", specific=2, said=words(
        r"\bunsubscribe\b|取消订阅|退订",
        r"\b(?:stop|pause|cancel|end|quit|disable|turn\s+off|switch\s+off)\s+(?:\w+\s+){0,3}?"
        r"(?:posting|sending|pushing|reporting|(?:the\s+)?(?:\w+\s+)?"
        r"(?:reports?|digests?|updates?|subscriptions?|notifications?))\b",
        r"(?:停止|暂停|取消|关闭|关掉|不要再?|别再?|不(?:用|需要|必)再?).{0,12}(?:推送|周报|报告|发送|订阅)"
        r"|(?:别|不要)再?推(?!荐)|订阅.{0,6}(?:取消|停掉|关掉|去掉)",
    ),
)  # fmt: skip
def unsubscribe(intent: Intent, ctx: Context, svc: Services) -> Reply:
    subs = list_subscriptions(svc.store, ctx.platform, ctx.chat_id)
    # "stop posting the weekly report here": a chat's one subscription needs no name.
    _, named, lang = _admin_args(intent, ctx, svc, only=subs[0] if len(subs) == 1 else None)
    t = texts(lang)
    # By its key; a team's by its repositories in any order.
    same = {r.lower() for r in named.repos}
    found = next(
        (s for s in subs if s.repo == named.repo or (same and {r.lower() for r in s.repos} == same)), named
    )
    removed = delete_subscription(svc.store, ctx.platform, ctx.chat_id, found.repo)
    if removed:
        svc.on_subscriptions_changed()
    text = t["sub_removed" if removed else "sub_missing"].format(repo=name_of(found, lang))
    return text_reply("text", lang, text)


def shaping(sub: Subscription, t: dict[str, str]) -> str:
    """What shapes the subscription's reports, after its line: its muted rules and its filters."""
    parts = [t["subs_muted"].format(rules=", ".join(sub.muted))] if sub.muted else []
    parts += [t["subs_filters"].format(filters=filters_text(sub.filters))] if not sub.filters.empty else []
    return f" ({'; '.join(parts)})" if parts else ""


@command(
    "subscriptions", en=("subscriptions", "subs"), zh=("订阅列表",), order=90, leads=True, lane="fast",
    said=words(
        r"\bsubscriptions\b|订阅列表|我的订阅|查看订阅|哪些订阅",
        r"\b(?:which|what)\s+(?:repos?|repositories|projects)\b.{0,40}?\b(?:follow(?:s|ing|ed)?|watch(?:es|ing)?|"
        r"track(?:s|ing)?|subscribed|gets?)\b|\bsubscribed\s+to\b",
        r"\b(?:are|is)\s+(?:we|you|this\s+(?:chat|channel|group))\s+(?:following|watching|tracking)\b",
        r"(?:关注|订阅|跟踪)了?(?:哪些|什么|啥)|哪些(?:仓库|项目|repo).{0,8}(?:关注|订阅|推送)",
        r"\bsubscribed\s+(?:repos?|repositories|projects)\b",
        r"\bwhat\s+(?:did|do|have)\s+(?:you|we)\s+subscribed?\s+to\b",
    ), specific=1, asked=True,
)  # fmt: skip
def subscriptions(intent: Intent, ctx: Context, svc: Services) -> Reply:
    lang = intent.lang
    t = texts(lang)
    subs = list_subscriptions(svc.store, ctx.platform, ctx.chat_id)
    if not subs:
        return text_reply("subscriptions", lang, t["subs_none"])
    text = "\n".join([f"**{t['subs_title']}**", ""] + [f"- {describe(s, lang)}{shaping(s, t)}" for s in subs])
    return text_reply("subscriptions", lang, text, subscriptions=subs)
