"""The report as Markdown, laid out like the example reports: six numbered sections."""

from __future__ import annotations

import re
from datetime import date

from prdigest.i18n import report_texts, risk_name, texts
from prdigest.i18n.tags import tag_name
from prdigest.models import Report, is_iso_week
from prdigest.render.attention import (
    checks_warning,
    dismissal_words,
    open_pr_urls,
    open_prs,
    reason_words,
    snooze_words,
)
from prdigest.render.flow import flow_lines
from prdigest.render.sanitize import clean
from prdigest.render.team import team_name, top_risk
from prdigest.render.views import engine_note, link_refs, linker, usage_note
from prdigest.render.week_words import (
    capped,
    cited_urls,
    continues_words,
    followup_words,
    followups_rest_words,
    followups_shown,
    trend_words,
)

# What a Markdown client would turn into a mention or a link: "@name", "scheme://...", "www.x".
# Such runs become code spans, which no client links or mentions, so "@pytest" reads as written.
_LIVE = re.compile(
    r"@[A-Za-z0-9_.\-/]*"  # a mention's name
    # a URL: ASCII up to a space; its scheme starts no later than its run of scheme characters
    r"|(?:(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]*://|\b[Ww]{3}\.)[^\s`|\\<>\u0080-\uffff]*",
)
_MARKUP = re.compile(r"([\\`*_\[\]<>|~])")
_PR_REF = re.compile(r"(?<![&0-9A-Za-z_])#(\d+)(?![0-9A-Za-z_])")  # "#12", "见#12和", not "&#12;", "a#12"


def _link(number: int, url: str) -> str:
    return f"[#{number}]({url})"


def escape(text: str, urls: dict[int, str] | None = None) -> str:
    """Keep PR text inert: one line, no markup, no links (bare URLs too), no @mentions, no bidi tricks.

    Markup characters get a backslash ("<=0.36" stays "<=0.36" on screen); mentions and URLs go into
    code spans. Nothing is inserted inside a word, so the text reads and copies as written. Its "#N" of
    the report's PRs with ``urls`` become links to them (outside code spans: there they would show)."""
    text = clean(text)
    out, last = [], 0

    def inert(part: str) -> str:
        return link_refs(_MARKUP.sub(r"\\\1", part), _PR_REF, urls or {}, _link)

    for m in _LIVE.finditer(text):
        out += [inert(text[last : m.start()]), f"`{m.group(0)}`"]
        last = m.end()
    return "".join([*out, inert(text[last:])])


def _urls(report: Report) -> dict[int, str]:
    """The links of the PRs the report cites (its own, earlier ones, open ones), where its source has them."""
    return {**open_pr_urls(report.attention), **cited_urls(report)}


def title(report: Report, name: str | None = None) -> str:
    """The report's title, of the repository (or the team ``name``) and the period."""
    t = texts(report.lang)
    repo = name or report.repo
    since, until = report.window.since, report.window.until
    year, week, _ = since.isocalendar()
    if is_iso_week(since, until):
        return t["title_week"].format(repo=repo, year=year, week=week, since=since, until=until)
    return t["title"].format(repo=repo, since=since, until=until)


def render_markdown(report: Report) -> str:
    t = report_texts(report.lang, report.window.since, report.window.until)
    if report.parts:
        out = [f"# {escape(title(report, team_name(report, t)))}", "", *team_sections(report, t)]
    else:
        out = [f"# {escape(title(report))}", "", *sections(report, t, "##")]
    return "\n".join(out).rstrip() + "\n"


def sections(report: Report, t: dict[str, str], h: str) -> list[str]:
    """One repository's report under headings of level ``h`` ("##"; "###" in a team digest)."""
    out = _summary(report, t, h)
    if report.stats.merged_prs:
        out += _themes(report, t, h) + _trends(report, t, h) + _risks(report, t, h) + _followups(report, t, h)
        out += _key_prs(report, t, h) + _recommendations(report, t, h)
    else:  # a quiet week still has the earlier weeks' open risks
        out += _followups(report, t, h)
    out += flow_section(report, t, h) + attention_section(report, t, h) + _appendix(report, t, h)
    return out + dismissed_section(report, t)


def flow_section(report: Report, t: dict[str, str], h: str) -> list[str]:
    """The review flow: medians, PRs merged without review, reviews by reviewer, the slowest to a first
    review; none where the source knows no reviews."""
    lines = flow_lines(report, t)
    if not lines:
        return []
    urls = _urls(report)
    return [f"{h} {t['rf_heading']}", "", *(f"- {escape(line, urls)}" for line in lines), ""]


def _summary(report: Report, t: dict[str, str], h: str) -> list[str]:
    s = report.stats
    out = [f"{h} {t['s_summary']}", ""]
    if s.merged_prs == 0:
        out += [t["none"], ""]
    out += [f"> ⚠ {escape(w)}" for w in report.warnings] + ([""] if report.warnings else [])
    urls = _urls(report)
    if report.summary:
        out += [escape(report.summary, urls), ""]
    avg = f"{_num(s.avg_importance)} / {_num(s.avg_insight)}"
    out.append(
        f"- {t['merged_prs']}: {s.merged_prs} · {t['key_prs']}: {s.key_prs} · {t['avg_scores']}: {avg}"
    )
    trend = trend_words(report, t)
    out += [f"- {escape(trend, urls)}"] if trend else []
    if s.tags:
        tags = ", ".join(f"{escape(tag_name(k, report.lang))} ({n})" for k, n in s.tags.items())
        out.append(f"- {t['tags']}: {tags}")
    if s.authors:
        out.append(
            f"- {t['authors']}: "
            + ", ".join(f"{escape(a)} ({n}, {s.author_share[a]:.0%})" for a, n in list(s.authors.items())[:8])
        )
    if s.hot_files:
        hot = ", ".join(f"{escape(h.path)} ({len(h.prs)})" for h in s.hot_files[:8])
        more = f" (+{len(s.hot_files) - 8})" if len(s.hot_files) > 8 else ""
        out.append(f"- {t['hot_files'].format(n=s.hot_file_min_prs)}: {hot}{more}")
    if s.risks:
        risks = ", ".join(f"{risk_name(k, report.lang)} ({n})" for k, n in s.risks.items())
        level = t[f"level_name_{report.risk_level}"]
        out.append(f"- {t['risk_counts']}: {risks} · {t['risk_level']}: {level}")
    out += [f"- {t['per_day']}: " + ", ".join(f"{_day(d)} {n}" for d, n in s.per_day.items()), ""]
    return out


def _themes(report: Report, t: dict[str, str], h: str) -> list[str]:
    out = [f"{h} {t['s_themes']}", ""]
    if not report.themes:
        return [*out, t["no_themes"], ""]
    urls = _urls(report)
    for i, theme in enumerate(report.themes, start=1):
        out += [f"{h}# {i}. {escape(theme.title)}", "", escape(theme.story, urls), ""]
        if theme.continues:
            out += [f"_{link_refs(continues_words(theme.continues, t), _PR_REF, urls, _link)}_", ""]
    return out


def _trends(report: Report, t: dict[str, str], h: str) -> list[str]:
    if not report.themes:
        return []
    out = [
        f"{h} {t['s_trends']}",
        "",
        f"| {t['col_theme']} | {t['col_reps']} | {t['col_trend']} |",
        "| --- | --- | --- |",
    ]
    urls = _urls(report)
    link = linker(urls, _link)
    for theme in report.themes:
        reps = " ".join(link(n) for n in theme.representative or theme.prs[:8])
        out.append(f"| {escape(theme.title)} | {reps} | {escape(theme.trend, urls)} |")
    return [*out, ""]


def _risks(report: Report, t: dict[str, str], h: str) -> list[str]:
    out = [f"{h} {t['s_risks']}", ""]
    if not report.risk_observations:
        return [*out, t["no_risk_obs"], ""]
    urls = _urls(report)
    for i, obs in enumerate(report.risk_observations, start=1):
        out.append(f"{i}. **{escape(obs.title)}**: {escape(obs.evidence, urls)}")
    return [*out, ""]


def _followups(report: Report, t: dict[str, str], h: str) -> list[str]:
    """The earlier weeks' risks that moved this week or are severe, with what closed them or how long they
    are open; the rest counted in one line. PRs are "#N", links where the source has them."""
    if not report.risk_followups:
        return []
    out = [f"{h} {t['s_followups']}", ""]
    followups, urls = followups_shown(report), _urls(report)
    link = linker(urls, _link)
    for i, f in enumerate(followups.shown, start=1):
        shown, more = capped(f.prs)
        prs = " ".join([*(link(n) for n in shown), *([more] if more else [])])
        out.append(f"{i}. **{escape(f.title)}** {prs}: {escape(followup_words(f, report.lang, t), urls)}")
    rest = followups_rest_words(followups, t)
    if rest:  # its own paragraph: a line right after the list would continue its last item
        out += [*([""] if followups.shown else []), f"_{escape(rest)}_"]
    return [*out, ""]


def _key_prs(report: Report, t: dict[str, str], h: str) -> list[str]:
    key = sorted((p for p in report.prs if p.key), key=lambda p: (-(p.importance or 0), p.number))
    if not key:
        return []
    out = [f"{h} {t['s_key_prs']}", ""]
    out += [
        f"| {t['col_pr']} | {t['col_summary']} | {t['col_scores']} | {t['col_watch']} |",
        "| --- | --- | --- | --- |",
    ]
    link = linker(_urls(report), _link)
    for p in key:
        watch = "; ".join(p.watch[:2]) or "-"
        out.append(
            f"| {link(p.number)} | {escape(p.summary or p.title)} | {_num(p.importance)} / {_num(p.insight)} "
            f"| {escape(watch)} |"
        )
    return [*out, ""]


def _recommendations(report: Report, t: dict[str, str], h: str) -> list[str]:
    if not report.recommendations:
        return []
    out = [f"{h} {t['s_recommendations']}", ""]
    urls = _urls(report)
    out += [f"{i}. {escape(rec.text, urls)}" for i, rec in enumerate(report.recommendations, start=1)]
    return [*out, ""]


def _appendix(report: Report, t: dict[str, str], h: str) -> list[str]:
    s = report.stats
    out = [
        f"{h} {t['s_figures']}",
        "",
        f"- {t['lines']}: +{s.additions} / -{s.deletions} · {t['files_changed']}: {s.files_changed}"
        f" · {t['direct_pushes']}: {s.direct_pushes}",
        "",
    ]
    if report.direct_pushes:
        out += [f"{h}# {t['s_direct']}", ""]
        out += [f"- `{d.sha[:10]}` {escape(d.title)} ({escape(d.author)})" for d in report.direct_pushes]
        out.append("")
    if report.unavailable:
        out += [f"_{t['unavailable'].format(signals=', '.join(report.unavailable))}_", ""]
    out.append(f"_{engine_note(report, t)}_")
    usage = usage_note(report, t)
    if usage is not None:
        out += ["", f"_{escape(usage)}_"]
    return out


def team_sections(report: Report, t: dict[str, str]) -> list[str]:
    """The team's figures (its summary's lines under its own heading) and a table of its repositories,
    then each repository's report under a heading of its name."""
    out = [f"## {t['td_overview']}", "", *_summary(report, t, "##")[2:]]
    out += [
        "| "
        + " | ".join(
            t[k] for k in ("td_col_repo", "merged_prs", "key_prs", "td_col_level", "td_col_top_risk")
        )
        + " |",
        "| --- | --- | --- | --- | --- |",
    ]
    for part in report.parts:
        top, link = top_risk(part), linker(_urls(part), _link)
        risk = f"{risk_name(top.label, part.lang)} ({' '.join(link(n) for n in top.prs[:3])})" if top else "-"
        level = t[f"level_name_{part.risk_level}"]
        out.append(
            f"| {escape(part.repo)} | {part.stats.merged_prs} | {part.stats.key_prs} | {level} | {risk} |"
        )
    out.append("")
    for part in report.parts:
        part_t = report_texts(part.lang, part.window.since, part.window.until)
        out += [f"## {escape(part.repo)}", "", *sections(part, part_t, "###"), ""]
    return out


def attention_section(report: Report, t: dict[str, str], h: str) -> list[str]:
    """The open PRs needing attention, each with its author and why, after a red default branch."""
    red = checks_warning(report.attention, t)
    prs = open_prs(report)
    if not (red or prs):
        return []
    out = [f"{h} {t['att_heading']}", "", *([f"> {escape(red)}", ""] if red else [])]
    link = linker(open_pr_urls(report.attention), _link)
    out += [
        f"{i}. {link(op.number)} {escape(op.title)} ({escape(op.author)}) — {reason_words(op, t)}"
        for i, op in enumerate(prs, start=1)
    ]
    return [*out, ""]


def dismissed_section(report: Report, t: dict[str, str]) -> list[str]:
    """Footnotes: the risk labels admins dismissed and what a card's buttons quieted, which the report
    leaves out, and who did."""
    out = []
    if report.dismissed:
        lines = [f"- {escape(dismissal_words(d, report.lang, t))}" for d in report.dismissed]
        out += ["", f"_{t['dis_heading']}_", "", *lines]
    if report.snoozed:
        lines = [f"- {escape(snooze_words(s, report.lang, t))}" for s in report.snoozed]
        out += ["", f"_{t['sn_heading']}_", "", *lines]
    return out


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _day(day: date) -> str:
    return f"{day:%m-%d}"
