"""A team digest's card, platform-free: the layout of one repository's card (title, judgement, three
figures, buttons) with one line per repository between figures and buttons: its merged and key PRs and
its top risk, the PR linked to that repository's own URL.

The card stays within 1,200 visible characters for a dozen repositories: the repositories' lines share
what the rest of the card leaves of that, each cut to its share (see `repo_lines`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prdigest.i18n import risk_name
from prdigest.models import OpenPR, Report, RiskObservation
from prdigest.render.attention import card_words, checks_warning, open_prs
from prdigest.render.digest import (
    WARNINGS,
    Lines,
    Markup,
    card_asks,
    digest_attention,
    digest_buttons,
    digest_figures,
    digest_risks,
    digest_stories,
    digest_title,
    lines_of,
    verdict,
)
from prdigest.render.sanitize import clean
from prdigest.render.views import Button, ReportRef, callback, with_page
from prdigest.render.week_words import figure_with_change, open_followups

CARD_REPOS = 12  # repositories the card gives a line; the rest are counted ("N more …")
TITLE_REPOS = 3  # repositories the title names
TITLE_CHARS = 60
SUMMARY_CHARS = 200
WARNING_CHARS = 120  # as digest_warnings cuts them
ATTENTION_CHARS = 110
REPO_CHARS = 24
LINE_CHARS = 90  # a repository's line at most, when there is room
MIN_LINE_CHARS = 40
# The visible characters the lines may share: the card's cap less its frame and a margin for what the
# estimate leaves out (figure labels laid out apart, spaces between elements).
CARD_CHARS = 1_200 - 60


def owner_of(report: Report) -> str | None:
    """The owner all of the team's repositories share, if they do."""
    owners = {p.repo.split("/", 1)[0] for p in report.parts}
    return owners.pop() if len(owners) == 1 and all("/" in p.repo for p in report.parts) else None


def short_name(repo: str, owner: str | None) -> str:
    return repo.split("/", 1)[1] if owner and repo.startswith(f"{owner}/") else repo


def top_risk(part: Report) -> RiskObservation | None:
    """A repository's weightiest risk (its report lists it first), as the team's summary names it."""
    return part.risk_observations[0] if part.risk_observations else None


def team_name(report: Report, t: dict[str, str]) -> str:
    """ "acme: trainer, serving, docs", "acme: trainer, serving, docs +9"; owners named when they differ."""
    owner = owner_of(report)
    names = [short_name(p.repo, owner) for p in report.parts]
    shown = ", ".join(names[:TITLE_REPOS])
    if len(names) > TITLE_REPOS:
        shown = t["td_more"].format(names=shown, n=len(names))
    return clean(f"{owner}: {shown}" if owner else shown, TITLE_CHARS)


def team_title(report: Report, t: dict[str, str]) -> str:
    return digest_title(report, team_name(report, t))


def team_verdict(report: Report, t: dict[str, str]) -> str:
    """The team's summary (how many repositories and PRs, where the highest risk is), cut to a few lines;
    the single repository's judgement when the report has none."""
    return clean(report.summary, SUMMARY_CHARS) if report.summary else verdict(report, t)


def team_figures(report: Report, t: dict[str, str]) -> list[tuple[str, str]]:
    """Merged PRs (with its change on the earlier weeks), key PRs, the repositories' risks, summed; and
    their open follow-ups when there are any."""
    s = report.stats
    risks = sum(len(p.risk_observations) for p in report.parts)
    followups = sum(open_followups(p) for p in report.parts)
    out = [
        (t["merged_prs"], figure_with_change(report, "merged_prs", s.merged_prs, t)),
        (t["key_prs"], str(s.key_prs)),
        (t["c_risks_figure"], str(risks)),
    ]
    return out + ([(t["c_followups_figure"], str(followups))] if followups else [])


def team_attention(report: Report, t: dict[str, str], markup: Markup) -> list[str]:
    """The card's warnings about open work: the repositories whose default branch is red, and one line on
    the open PRs needing attention across the team (each named with its repository's), with whom they
    asked as the chat's users."""
    lines = [markup.text(words, ATTENTION_CHARS) for words in _attention_words(report, t)]
    prs = [op for p in report.parts for op in open_prs(p)]
    return [*lines[:-1], lines[-1] + card_asks(prs, report.mentions, t)] if prs else lines


def _attention_words(report: Report, t: dict[str, str]) -> list[str]:
    owner = owner_of(report)
    warnings = [(p.repo, checks_warning(p.attention, t)) for p in report.parts]
    red = [f"{short_name(repo, owner)} {warning}" for repo, warning in warnings if warning]
    prs: list[tuple[str, OpenPR]] = [
        (short_name(p.repo, owner), op) for p in report.parts for op in open_prs(p)
    ]
    return red[:2] + ([card_words(prs, t)] if prs else [])


def team_buttons(report: Report, report_url: str | None, t: dict[str, str]) -> list[Button]:
    """The full report and another week: a team's other answers need one repository named."""
    return with_page([callback(t["btn_another_week"], ReportRef.of(report), "another_week")], report_url, t)


def repo_lines(report: Report, t: dict[str, str], markup: Markup, report_url: str | None) -> list[str]:
    """One line per repository (the first CARD_REPOS, those with merged PRs first), each within its share
    of what the rest of the card leaves of its visible characters, then a count of the rest."""
    owner = owner_of(report)
    frame = _frame(report, t, report_url)
    parts = sorted(report.parts, key=lambda p: not p.stats.merged_prs)
    shown = parts[:CARD_REPOS]
    room = max(MIN_LINE_CHARS, min(LINE_CHARS, (CARD_CHARS - frame) // max(len(shown), 1)))
    out = [_repo_line(p, short_name(p.repo, owner), t, lines_of(p, markup), room) for p in shown]
    left = len(parts) - len(shown)
    return out + ([markup.note(markup.text(t["td_more_repos"].format(n=left), None))] if left else [])


def _frame(report: Report, t: dict[str, str], report_url: str | None) -> int:
    """The visible characters of the card but its repositories' lines, as their plain texts count them."""
    texts = [
        team_title(report, t),
        t[f"risk_{report.risk_level}"],
        team_verdict(report, t),
        *(w[:WARNING_CHARS] + "⚠ " for w in report.warnings[:WARNINGS]),
        *(w[:ATTENTION_CHARS] for w in _attention_words(report, t)),
        *(label + value for label, value in team_figures(report, t)),
        t["td_repos"],
        *(b.label for b in team_buttons(report, report_url, t)),
    ]
    return sum(len(text) + 1 for text in texts)


def _repo_line(part: Report, name: str, t: dict[str, str], lines: Lines, room: int) -> str:
    """ "trainer · 12 merged · 3 key · configuration removed or renamed #4129", at most ``room`` visible."""
    m = lines.markup
    name = clean(name, min(REPO_CHARS, room // 3))
    counts = t["td_counts"].format(merged=part.stats.merged_prs, key=part.stats.key_prs)
    line = f"{m.bold(m.text(name, None))} · {m.text(counts, None)}"
    top = top_risk(part)
    if top is None:
        return line
    cited = f"#{top.prs[0]}" if top.prs else ""
    risk_room = room - len(name) - len(counts) - len(cited) - 7
    risk = risk_name(top.label, part.lang) if top.label else top.title
    return f"{line} · {m.text(risk, max(risk_room, 8))} {lines.cite(top.prs[:1], 1)}".rstrip()


@dataclass(frozen=True)
class CardBody:
    """What a weekly card says, before a platform lays it out."""

    title: str
    first: str  # the judgement
    attention: list[str]
    figures: list[tuple[str, str]]
    sections: list[tuple[str, list[str]]]
    buttons: list[Button]


def card_body(
    report: Report, t: dict[str, str], markup: Markup, report_url: str | None, escape: Callable[[str], str]
) -> CardBody:
    """The card of one repository, or a team's: one line per repository where a repository's card has
    its stories and risks. ``escape`` makes the team's summary safe in the platform's markup."""
    if report.parts:
        return CardBody(
            title=team_title(report, t),
            first=escape(team_verdict(report, t)),
            attention=team_attention(report, t, markup),
            figures=team_figures(report, t),
            sections=[(t["td_repos"], repo_lines(report, t, markup, report_url))],
            buttons=team_buttons(report, report_url, t),
        )
    lines = lines_of(report, markup)
    return CardBody(
        title=digest_title(report),
        first=lines.prose(verdict(report, t), None),
        attention=digest_attention(report, t, lines),
        figures=digest_figures(report, t),
        sections=[
            (t["c_stories"], digest_stories(report, lines)),
            (t["c_top_risks"], digest_risks(report, lines)),
        ],
        buttons=digest_buttons(report, report_url, t),
    )
