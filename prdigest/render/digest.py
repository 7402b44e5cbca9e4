"""The weekly report as chat messages read on a phone: a one-screen digest (the title once, the week's
judgement with its risk level and what drives it, three figures, the top stories and risks, at most four
buttons) and the rest as thread replies (every key PR, every risk, the summary, themes, recommendations).

Platform-free: what each part says, written through a platform's `Markup`; render/lark.py and
render/slack.py lay the parts out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from prdigest.analysis.report import lead_kind
from prdigest.analysis.risks.level import level_sentence
from prdigest.models import (
    OpenPR,
    Report,
    ReportPR,
    RiskFollowup,
    RiskObservation,
    Theme,
    is_iso_week,
    iso_week_label,
)
from prdigest.render.attention import (
    CARD_PRS,
    card_words,
    checks_warning,
    open_pr_urls,
    open_prs,
    reason_words,
    snooze_words,
    waiting_for_review,
)
from prdigest.render.flow import card_words as flow_card_words
from prdigest.render.flow import flow_lines
from prdigest.render.views import (
    Button,
    LinkFormat,
    ReportRef,
    callback,
    engine_note,
    key_prs,
    link_refs,
    open_quiet_buttons,
    risk_quiet_buttons,
    score,
    usage_note,
    with_page,
)
from prdigest.render.week_words import (
    capped,
    change_text,
    cited_urls,
    continues_words,
    figure_with_change,
    followup_words,
    followups_rest_words,
    followups_shown,
    open_followups,
    risk_kinds_trend,
)

STORIES = 3  # themes and risks the digest names, one line each
ASKED = 5  # people an open PR's thread line names
LINE_CHARS = 60  # a story's or a risk's name: one line on a phone
WARNINGS = 2
THREAD_PRS = 50  # key PRs a thread lists at most (five Lark tables of ten); the page has them all
THREAD_CITES = 10  # PR numbers a risk cites in the thread
THREAD_CHARS = 400  # a risk's evidence, a theme's trend, a recommendation
KEY_PR_CHARS = 200  # a key PR's summary: a few lines of a table cell on a phone
SUMMARY_CHARS = 1000
LINK_ROOM = 600  # link markup any text may carry beyond its own length: ten links to PRs

T = TypeVar("T")
M = TypeVar("M")
# A thread line and the buttons under it (none: a line alone).
Item = tuple[str, list[Button]]


@dataclass(frozen=True)
class Markup:
    """How a platform writes untrusted text (escaped, cut), bold text, a quiet note and a PR's link."""

    text: Callable[[str, int | None], str]
    bold: Callable[[str], str]
    note: Callable[[str], str]
    link: LinkFormat
    ref: re.Pattern[str]  # "#N" as `text` writes it (its first group: N)


@dataclass(frozen=True)
class Lines:
    """What a message says, in a platform's markup: the ``urls`` of the report's PRs and its ``markup``."""

    markup: Markup
    urls: dict[int, str]
    mentions: dict[str, str]  # GitHub login -> the chat's mention (Report.mentions): written as it is

    def cite(self, numbers: Sequence[int], limit: int) -> str:
        shown = [self.markup.link(n, self.urls[n]) if n in self.urls else f"#{n}" for n in numbers[:limit]]
        return " ".join(shown) + (" …" if len(numbers) > limit else "")

    def prose(self, text: str, limit: int | None) -> str:
        """Untrusted text whose "#N" are links to their PRs: as many as add at most LINK_ROOM characters
        of link markup more than the text is long, so a text of N characters stays under 2N + LINK_ROOM
        (a Slack section under 3,000 characters)."""
        shown = self.markup.text(text, limit)
        room = len(shown) + LINK_ROOM

        def link(n: int, url: str) -> str:
            nonlocal room
            written = self.markup.link(n, url)
            room -= len(written)
            return written if room >= 0 else self.markup.text(f"#{n}", None)

        return link_refs(shown, self.markup.ref, self.urls, link)

    def person(self, login: str) -> str:
        """A GitHub login as its chat user's mention where the delivery found one, else a plain name."""
        return self.mentions.get(login) or self.markup.text(login, 40)

    def named(self, name: str, numbers: Sequence[int], limit: int) -> str:
        return f"{self.markup.bold(self.markup.text(name, LINE_CHARS))} {self.cite(numbers, limit)}".rstrip()

    def risk(self, o: RiskObservation) -> str:
        evidence = self.markup.note(self.prose(o.evidence, THREAD_CHARS))
        return f"{self.named(o.title, o.prs, THREAD_CITES)}\n{evidence}"


def lines_of(report: Report, markup: Markup) -> Lines:
    return Lines(markup, {**cited_urls(report), **open_pr_urls(report.attention)}, report.mentions)


def numbered(lines: Sequence[str]) -> list[str]:
    return [f"{i}. {line}" for i, line in enumerate(lines, start=1)]


# --- the digest ------------------------------------------------------------------------


def digest_title(report: Report, name: str | None = None) -> str:
    """ "owner/name · 2026-W37" (``name`` for the repository's), or the window's dates when it is not one
    ISO week."""
    since, until = report.window.since, report.window.until
    period = iso_week_label(since) if is_iso_week(since, until) else f"{since} – {until}"
    return f"{name or report.repo} · {period}"


def verdict(report: Report, t: dict[str, str]) -> str:
    """The week in one line: what it was about, its risk level and what drives that level ("#N" cited)."""
    if not report.stats.merged_prs:
        return t["none"]
    lead = lead_kind(Counter(report.stats.tags), report.stats.merged_prs)
    return t.get(f"judge_{lead}", t["judge_mixed"]) + t["c_stop"] + level_sentence(report, t)


def digest_figures(report: Report, t: dict[str, str]) -> list[tuple[str, str]]:
    """Merged PRs and risks with their change on the earlier weeks ("41 (+17%)"), key PRs, and the open
    follow-ups of earlier weeks' risks when there are any."""
    s = report.stats
    risks = len(report.risk_observations)
    kinds = risk_kinds_trend(report)
    out = [
        (t["merged_prs"], figure_with_change(report, "merged_prs", s.merged_prs, t)),
        (t["key_prs"], str(s.key_prs)),
        (t["c_risks_figure"], f"{risks} ({change_text(kinds, risks, t)})" if kinds else str(risks)),
    ]
    followups = open_followups(report)
    return out + ([(t["c_followups_figure"], str(followups))] if followups else [])


def digest_stories(report: Report, lines: Lines) -> list[str]:
    return numbered([lines.named(th.title, th.representative or th.prs, 2) for th in report.themes[:STORIES]])


def digest_risks(report: Report, lines: Lines) -> list[str]:
    return numbered([lines.named(o.title, o.prs, 3) for o in report.risk_observations[:STORIES]])


def digest_warnings(report: Report, markup: Markup) -> list[str]:
    return [f"⚠ {markup.text(w, 120)}" for w in report.warnings[:WARNINGS]]


def digest_attention(report: Report, t: dict[str, str], lines: Lines) -> list[str]:
    """The review flow's line (GitHub and fixtures), a red default branch, then one line on the open PRs
    needing attention (the first ones linked): what the reader may act on."""
    red = checks_warning(report.attention, t)
    prs = open_prs(report)
    flow = flow_card_words(report, t)
    out = [lines.prose(flow, 160)] if flow else []
    out += [lines.markup.text(red, 120)] if red else []
    if not prs:
        return out
    return [
        *out,
        lines.prose(card_words([("", op) for op in prs], t), None) + card_asks(prs, lines.mentions, t),
    ]


def card_asks(prs: Sequence[OpenPR], mentions: dict[str, str], t: dict[str, str]) -> str:
    """ " · review asked of @alice @bob": the chat users whom the PRs the card names asked for a review.
    Only mentions (a plain name nudges nobody); the thread names everyone asked."""
    asked = [login for op in prs[:CARD_PRS] if waiting_for_review(op) for login in op.asked]
    mentioned = [mentions[login] for login in dict.fromkeys(asked) if login in mentions]
    return " · " + t["att_asks"].format(who=" ".join(mentioned)) if mentioned else ""


def digest_buttons(report: Report, report_url: str | None, t: dict[str, str]) -> list[Button]:
    """The full report (with a page), the week's risks and key PRs, the open PRs needing attention now (when
    the report found some), another week: five at most."""
    ref = ReportRef.of(report)
    buttons = []
    if report.risk_observations:
        buttons.append(callback(t["btn_risks"], ref, "risks"))
    if key_prs(report):
        buttons.append(callback(t["btn_key_prs"], ref, "key_prs"))
    if open_prs(report):
        buttons.append(callback(t["btn_open"], ref, "open"))
    return with_page([*buttons, callback(t["btn_another_week"], ref, "another_week")], report_url, t)


# --- the thread ------------------------------------------------------------------------


def thread_key_prs(report: Report) -> tuple[list[ReportPR], int]:
    """The key PRs the thread lists (a subscription's top_n, at most THREAD_PRS) and how many it leaves."""
    key = key_prs(report)
    shown = key[: min(report.card_prs or THREAD_PRS, THREAD_PRS)]
    return shown, len(key) - len(shown)


def key_pr_line(p: ReportPR, lines: Lines) -> str:
    return f"{lines.cite([p.number], 1)} {lines.prose(p.summary or p.title, KEY_PR_CHARS)} · {scores(p)}"


def scores(p: ReportPR) -> str:
    return f"{score(p.importance)} / {score(p.insight)}"


def thread_details(report: Report, t: dict[str, str], lines: Lines) -> list[str]:
    """The summary, every theme with its trend (and the earlier PRs it continues), the earlier weeks' risks
    that moved or are severe (the rest counted), the recommendations and the engine: what the digest left
    out."""
    m = lines.markup
    out = [lines.prose(report.summary, SUMMARY_CHARS)] if report.summary else []
    themes = [_theme_line(th, t, lines) for th in report.themes]
    if themes:
        out += [m.bold(t["c_themes"]), *numbered(themes)]
    if report.risk_followups:
        followups = followups_shown(report)
        rest = followups_rest_words(followups, t)
        shown = numbered([_followup_line(f, report.lang, t, lines) for f in followups.shown])
        out += [m.bold(t["s_followups"]), *shown, *([m.note(m.text(rest, None))] if rest else [])]
    recs = [lines.prose(r.text, THREAD_CHARS) for r in report.recommendations]
    if recs:
        out += [m.bold(t["c_recommendations"]), *numbered(recs)]
    flow = [lines.prose(line, THREAD_CHARS) for line in flow_lines(report, t)]
    if flow:
        out += [m.bold(t["rf_heading"]), *flow]
    usage = usage_note(report, t)
    return [
        *out,
        m.note(m.text(engine_note(report, t), None)),
        *([m.note(m.text(usage, None))] if usage else []),
    ]


def thread_risks(report: Report, t: dict[str, str], lines: Lines) -> list[Item]:
    """Every risk with its evidence and the buttons that acknowledge it or snooze it for a week; the risks
    snoozed last."""
    ref = ReportRef.of(report)
    risks = report.risk_observations
    out = [(f"{i}. {lines.risk(o)}", risk_quiet_buttons(ref, o, t)) for i, o in enumerate(risks, start=1)]
    return out + _quieted(report, "risk", t, lines)


def thread_attention(report: Report, t: dict[str, str], lines: Lines) -> list[Item]:
    """Every open PR needing attention with its title, author, why and whom it asked, and the buttons that
    acknowledge it or snooze it for a week; a red default branch first, the PRs quieted last."""
    red = checks_warning(report.attention, t)
    ref = ReportRef.of(report)
    out: list[Item] = [(lines.markup.text(red, THREAD_CHARS), [])] if red else []
    for i, op in enumerate(open_prs(report), start=1):
        out.append((f"{i}. {_open_line(op, t, lines)}", open_quiet_buttons(ref, op, t)))
    return out + _quieted(report, "open", t, lines)


def _quieted(report: Report, kind: str, t: dict[str, str], lines: Lines) -> list[Item]:
    m = lines.markup
    said = [snooze_words(s, report.lang, t) for s in report.snoozed if s.kind == kind]
    return [(m.note(m.text(words, THREAD_CHARS)), []) for words in said]


def _open_line(op: OpenPR, t: dict[str, str], lines: Lines) -> str:
    m = lines.markup
    who = m.note(f"{m.text(op.author, 40)} · {m.text(reason_words(op, t), None)}")
    asked = op.asked[:ASKED] if waiting_for_review(op) else []
    # Outside the note's markup: a mention must stay a mention on every platform.
    asks = " · " + t["att_asks"].format(who=", ".join(lines.person(a) for a in asked)) if asked else ""
    return f"{lines.cite([op.number], 1)} {m.text(op.title, LINE_CHARS)} {who}{asks}"


def _theme_line(th: Theme, t: dict[str, str], lines: Lines) -> str:
    trend = " ".join([th.trend, *([continues_words(th.continues, t)] if th.continues else [])]).strip()
    note = lines.markup.note(lines.prose(trend, THREAD_CHARS))
    return f"{lines.named(th.title, th.representative or th.prs, 3)} {note}"


def _followup_line(f: RiskFollowup, lang: str, t: dict[str, str], lines: Lines) -> str:
    """A follow-up's title and first PRs ("+N" for the rest), then its kind, since when and its state,
    what closed it linked."""
    shown, more = capped(f.prs)
    named = " ".join([lines.named(f.title, shown, len(shown)), *([more] if more else [])])
    return f"{named} · {lines.prose(followup_words(f, lang, t), None)}"


def pack(items: Sequence[T], build: Callable[[Sequence[T], bool], M], fits: Callable[[M], bool]) -> list[M]:
    """The items in as few messages as fit, in order. ``build(chunk, last)`` closes the last message
    (e.g. "N more in the full report"), so a chunk is tried as if it were last. Items are cut short
    enough beforehand that one alone always fits."""
    out: list[M] = []
    chunk: list[T] = []
    for item in items:
        if chunk and not fits(build([*chunk, item], True)):
            out.append(build(chunk, False))
            chunk = []
        chunk.append(item)
    return [*out, build(chunk, True)] if chunk else out
