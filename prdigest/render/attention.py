"""Open PRs needing attention and the risks admins dismissed, in words, for every renderer.

Platform-free plain text; PR numbers are written "#N" for each renderer to link as it links PRs, and
every text from the source (titles, authors, branch and check names) is left for the renderer to escape.
"""

from __future__ import annotations

from prdigest.i18n import risk_name
from prdigest.models import Attention, ChecksState, Dismissal, OpenPR, Report, Snooze
from prdigest.render.sanitize import safe_url

CARD_PRS = 2  # open PRs the card's line names; the thread and the page list them all
CHECKS_NAMED = 3  # failing checks a warning names


def open_prs(report: Report) -> list[OpenPR]:
    return report.attention.open_prs if report.attention else []


def open_pr_urls(attention: Attention | None) -> dict[int, str]:
    """The open PRs' own https links by number (as `views.pr_url` checks a merged PR's)."""
    return {
        op.number: url
        for op in (attention.open_prs if attention else [])
        if (url := safe_url(op.url)) and url.endswith(f"/pull/{op.number}")
    }


def reason_words(op: OpenPR, t: dict[str, str]) -> str:
    """ "waiting 8 days for review", "approved, not merged for 4 days", "large and unreviewed"."""
    words = t[f"att_{op.reason}"].format(days=op.waiting_days)
    return f"{words} · {t['att_draft']}" if op.is_draft else words


def red_checks(attention: Attention | None) -> ChecksState | None:
    """The default branch's checks when they are red (FAILURE, ERROR); None when green or unknown."""
    checks = attention.default_branch_checks if attention else None
    return checks if checks is not None and checks.state in ("FAILURE", "ERROR") else None


def checks_warning(attention: Attention | None, t: dict[str, str]) -> str:
    """ "⚠ Checks failing on main: build, lint", or "" when the default branch is not known to be red."""
    checks = red_checks(attention)
    if checks is None or attention is None:
        return ""
    branch = attention.default_branch
    where = t["att_red_branch"].format(branch=branch) if branch else t["att_default_branch"]
    names = ", ".join(checks.failing[:CHECKS_NAMED]) + (" …" if len(checks.failing) > CHECKS_NAMED else "")
    return t["att_red"].format(branch=where, checks=names or checks.state)


def card_words(prs: list[tuple[str, OpenPR]], t: dict[str, str]) -> str:
    """The card's line: "3 open PRs need attention: #12 waiting 8 days for review, …"; each PR after its
    repository's name in a team digest (``prs``: (name or "", PR))."""
    items = [f"{name} #{op.number} {reason_words(op, t)}".strip() for name, op in prs[:CARD_PRS]]
    more = " …" if len(prs) > CARD_PRS else ""
    return t["att_card"].format(n=len(prs), items=t["list_sep"].join(items) + more)


def dismissal_words(d: Dismissal, lang: str, t: dict[str, str]) -> str:
    """ "#12 no test change (no_tests) — by alice on 2026-11-30"."""
    name = risk_name(d.label, lang)
    return t["dis_line"].format(number=d.number, name=name, label=d.label, by=d.by, on=d.at.date())


def snooze_words(s: Snooze, lang: str, t: dict[str, str]) -> str:
    """ "no_tests snoozed by alice until 2026-12-10", "#12 acknowledged by bob on 2026-12-03"."""
    until = s.until.date() if s.until else ""
    if s.kind == "risk":
        return t["sn_risk"].format(name=risk_name(s.label, lang), label=s.label, by=s.by, until=until)
    if s.until is None:
        return t["sn_open_ack"].format(number=s.number, by=s.by, on=s.at.date())
    return t["sn_open"].format(number=s.number, by=s.by, until=until)


def waiting_for_review(op: OpenPR) -> bool:
    """Whether the PR waits for a review (not for its merge): whom it asked is whom a nudge names."""
    return op.reason in ("waiting_review", "large_unreviewed")
