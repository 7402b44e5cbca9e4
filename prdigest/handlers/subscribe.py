"""subscribe, unsubscribe, subscriptions: the chat's weekly reports. Only admins may change them."""

from __future__ import annotations

from datetime import UTC

from prdigest.handlers.args import Args, read_args
from prdigest.handlers.commands import Intent, command
from prdigest.handlers.context import Context, Services
from prdigest.handlers.replies import Reply
from prdigest.handlers.scope import Answer, text_reply
from prdigest.i18n import texts
from prdigest.models import Lang, Subscription
from prdigest.storage.subscriptions import delete_subscription, list_subscriptions, save_subscription


def _admin_args(intent: Intent, ctx: Context, svc: Services) -> tuple[Args, str, Lang]:
    """The arguments of a command that changes subscriptions (only admins may), its repository
    (it names one) and the answer's language."""
    lang = intent.lang
    if not svc.is_admin(ctx):
        raise Answer(text_reply("refusal", lang, texts(lang)["sub_refused"]))
    args = read_args(intent.args)
    if args.repo is None:
        raise Answer(text_reply("text", lang, texts(lang)["sub_needs_repo"]))
    return args, args.repo, lang


def describe(sub: Subscription, lang: str) -> str:
    t = texts(lang)
    return t["sub_line"].format(
        repo=sub.repo,
        day=t[f"day_{sub.day}"],
        time=sub.time,
        tz=sub.tz,
        lang=t[f"lang_{sub.lang}"],
        id=sub.id,
    )


@command("subscribe", en=("subscribe",), zh=("订阅",), admin=True)
def subscribe(intent: Intent, ctx: Context, svc: Services) -> Reply:
    args, repo, lang = _admin_args(intent, ctx, svc)
    t = texts(lang)
    configured = svc.settings.repo(repo).git
    sub = Subscription(
        platform=ctx.platform,
        chat_id=ctx.chat_id,
        repo=repo,
        source="git" if configured else "github",
        git_path=str(configured) if configured else None,
        day=args.day or "mon",
        time=args.time or "09:30",
        tz=args.tz or svc.settings.report.timezone,
        lang=args.lang or intent.lang,
        created_by=ctx.user_id,
        created_at=svc.clock().astimezone(UTC),
    )
    saved = save_subscription(svc.store, sub)
    svc.on_subscriptions_changed()
    text = t["sub_saved"].format(
        repo=saved.repo, day=t[f"day_{saved.day}"], time=saved.time, tz=saved.tz, lang=t[f"lang_{saved.lang}"]
    )
    return text_reply("subscriptions", lang, text, repo=saved.repo, subscriptions=[saved])


@command("unsubscribe", en=("unsubscribe",), zh=("取消订阅", "退订"), admin=True)
def unsubscribe(intent: Intent, ctx: Context, svc: Services) -> Reply:
    _, repo, lang = _admin_args(intent, ctx, svc)
    t = texts(lang)
    removed = delete_subscription(svc.store, ctx.platform, ctx.chat_id, repo)
    if removed:
        svc.on_subscriptions_changed()
    return text_reply("text", lang, t["sub_removed" if removed else "sub_missing"].format(repo=repo))


@command("subscriptions", en=("subscriptions", "subs"), zh=("订阅列表",))
def subscriptions(intent: Intent, ctx: Context, svc: Services) -> Reply:
    lang = intent.lang
    t = texts(lang)
    subs = list_subscriptions(svc.store, ctx.platform, ctx.chat_id)
    if not subs:
        return text_reply("subscriptions", lang, t["subs_none"])
    text = "\n".join([f"**{t['subs_title']}**", ""] + [f"- {describe(s, lang)}" for s in subs])
    return text_reply("subscriptions", lang, text, subscriptions=subs)
