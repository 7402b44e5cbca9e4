"""Who sees which repository in chat.

A chat sees the repositories its subscriptions cover (a team's its repositories, an ``org:OWNER``
one every repository of the owner). In a direct message the asker sees the repositories of the
chats of that platform the platform says they are in; when it cannot say (the app lacks the
permission), none. Admins see every repository, and so does everyone with ``[access] open``.
Everything a command reads, from the cache or from GitHub, is read after this check.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.handlers.context import Context, Services
from prdigest.i18n import texts
from prdigest.storage.subscriptions import list_subscriptions
from prdigest.subscription import PLATFORMS, Subscription


@dataclass(frozen=True)
class Seen:
    """The subscriptions whose repositories the asker sees where they ask, the chat's own first."""

    subscriptions: list[Subscription]
    # False in a direct message whose platform could not say which chats the asker is in.
    told: bool = True


def covers(sub: Subscription, repo: str) -> bool:
    """Whether ``sub`` covers ``repo`` (a repository, or a team subscription's own key)."""
    name = repo.casefold()
    if sub.repo.casefold() == name or name in (r.casefold() for r in sub.repos):
        return True
    return sub.owner is not None and name.partition("/")[0] == sub.owner.casefold()


def seen(ctx: Context, svc: Services) -> Seen:
    """The chat's subscriptions; in a direct message, also those of the chats the asker is in."""
    own = list_subscriptions(svc.store, ctx.platform, ctx.chat_id)
    if not ctx.direct:
        return Seen(own)
    others = [s for s in list_subscriptions(svc.store, ctx.platform) if s.chat_id != ctx.chat_id]
    chats = {s.chat_id for s in others}
    member = svc.member_chats(ctx.platform, ctx.user_id, chats) if chats else set()
    if member is None:
        return Seen(own, told=False)
    mine = {s.repo: s for s in own}
    for sub in others:
        if sub.chat_id in member:
            mine.setdefault(sub.repo, sub)  # the same repository in two of the asker's chats: once
    return Seen(list(mine.values()))


def sees_all(ctx: Context, svc: Services) -> bool:
    return svc.settings.access.open or svc.is_admin(ctx)


def refusal(ctx: Context, found: Seen, repo: str, lang: str) -> str | None:
    """Why the asker may not see ``repo`` here, in their language; None when they may."""
    if any(covers(s, repo) for s in found.subscriptions):
        return None
    t = texts(lang)
    if not ctx.direct:
        return t["access_chat"].format(repo=repo)
    if not found.told:
        return t["access_unknown"].format(repo=repo, platform=PLATFORMS.get(ctx.platform, ctx.platform))
    return t["access_direct"].format(repo=repo)


def chat_sees(svc: Services, ctx: Context, repo: str) -> bool:
    """Whether the chat's own subscriptions cover ``repo`` (what its report pages are checked against)."""
    return any(covers(s, repo) for s in list_subscriptions(svc.store, ctx.platform, ctx.chat_id))
