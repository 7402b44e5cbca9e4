"""What goes into a prompt: a PR's evidence, or the week's, within a token budget.

Each PR's prompt is built within the budget by dropping whole lines, the least valuable first;
every line is redacted and sealed (``safety.data_line``) before it is counted.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from prdigest.analysis.facts import clean_body
from prdigest.analysis.llm.safety import Shown, clip, data_line, estimate_tokens, one_line, sealed
from prdigest.models import (
    OPTIONAL_SIGNALS,
    FileChange,
    PRAnalysis,
    PullRequest,
    Report,
    Review,
    ReviewThread,
)
from prdigest.prompts import Prompt, load_prompt
from prdigest.redact import redact

_MESSAGE_OVERHEAD = 8  # tokens a chat template adds around each message, roughly


def evidence_budget(prompt: Prompt, budget: int, **variables: Any) -> int:
    """Tokens left for the evidence once the prompt's own text (and the JSON-only rung's) is counted."""
    fixed = (
        prompt.render("system", evidence="", **variables)
        + prompt.render("user", evidence="", **variables)
        + load_prompt("common", prompt.lang).render("json_only")
    )
    return max(budget - estimate_tokens(fixed) - 3 * _MESSAGE_OVERHEAD, 0)


NOTES_SHARE = 4  # the repository's notes take at most a quarter of the evidence's tokens


def with_notes(prompt: Prompt, budget: int, instructions: str, **variables: Any) -> tuple[str, int]:
    """The repository's notes (its ``extra_instructions``) as they go into the prompt, and the tokens
    then left for the evidence: the notes are counted within ``budget``, cut to their share of it."""
    room = evidence_budget(prompt, budget, instructions="", **variables)
    notes = repo_notes(instructions, room // NOTES_SHARE)
    return notes, evidence_budget(prompt, budget, instructions=notes, **variables) if notes else room


def repo_notes(text: str, budget: int) -> str:
    """The repository's notes as prompt data within ``budget`` tokens: redacted and sealed like the PRs'
    text (anyone with write access to the repository wrote them), whole lines kept, a marker for the rest."""
    if not text.strip():
        return ""
    section = Section("notes", [clip(unit, _LONG_NOTE) for unit in _units(text, _LONG_NOTE)], value=1)
    fit([], [section], budget)
    left_out = [f"[… {section.omitted} more lines left out]"] if section.omitted else []
    return "\n".join([*section.lines, *left_out])


@dataclass
class Section:
    """Evidence lines under a heading, most valuable first.

    ``value`` orders the trimming (the lowest goes first); ``keep`` lines survive the
    first pass, so every section keeps its head before any loses it.
    """

    title: str
    lines: list[str]
    value: int
    keep: int = 0
    omitted: int = 0


_MARKER_TOKENS = 12  # "[… N lines left out]"
_LONG_NOTE = 400  # characters: a longer sentence of the notes is cut


def _cost(line: str) -> int:
    return estimate_tokens(line) + 1  # and its newline


def fit(header: list[str], sections: list[Section], budget: int) -> str:
    """The evidence as text of at most ``budget`` tokens: whole lines dropped, least valuable first.

    The header is never dropped. Trims ``sections`` in place.
    """
    sections = [s for s in sections if s.lines or s.omitted]
    costs = {id(s): [_cost(line) for line in s.lines] for s in sections}
    total = sum(map(_cost, header)) + sum(
        _cost(s.title) + sum(costs[id(s)]) + (_MARKER_TOKENS if s.omitted else 0) for s in sections
    )
    for first_pass in (True, False):
        for s in sorted(sections, key=lambda s: s.value):
            floor = s.keep if first_pass else 0
            while total > budget and len(s.lines) > floor:
                if not s.omitted:
                    total += _MARKER_TOKENS
                total -= costs[id(s)].pop()
                s.lines.pop()
                s.omitted += 1
    out = list(header)
    for s in sections:
        out += ["", f"## {s.title}", *s.lines]
        if s.omitted:
            out.append(f"[… {s.omitted} more lines left out]")
    return "\n".join(out)


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")


def _head(text: str, chars: int) -> tuple[str, int]:
    """The whole lines (or sentences) of ``text`` within ``chars`` characters, and how many lines are left.

    A budget of B tokens holds at most 4 * B characters, so a huge body or diff is cut to
    that first: redaction and fitting then work on what can be sent, not on megabytes.
    """
    if len(text) <= chars:
        return text, 0
    cut = max(text.rfind("\n", 0, chars), text.rfind(". ", 0, chars) + 1, text.rfind("。", 0, chars) + 1, 0)
    return text[:cut], text.count("\n", cut) + 1


def _units(text: str, limit: int = 400) -> list[str]:
    """The non-blank lines of ``text``; a long line split into sentences, so trimming drops whole ones.

    Redacted as a whole (a private key block spans lines), then sealed line by line.
    """
    out: list[str] = []
    for line in redact(text).splitlines():
        if len(line) <= limit:
            out.append(line)
        else:
            out += _SENTENCE_END.split(line)
    return [sealed(u) for u in out if u.strip()]


def lead(text: str, limit: int = 300) -> str:
    """The first whole sentences of ``text`` within ``limit`` characters."""
    text = " ".join(text.split())
    out = ""
    for sentence in _SENTENCE_END.split(text):
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return clip(out, limit)


def pr_evidence(pr: PullRequest, budget: int, diff: str | None, related: dict[int, str]) -> str:
    """What the LLM reads about one PR, within ``budget`` tokens; ``related`` maps numbers to titles."""
    return fit(*pr_sections(pr, budget, diff, related), budget)


def shown_of(pr: PullRequest, sections: list[Section]) -> Shown:
    """Where the risk evidence of ``pr`` must be found: its title, file paths, and the description and
    diff lines of ``sections`` that ``fit`` kept."""
    kept = [line for s in sections if s.title in ("Description", "Diff excerpt") for line in s.lines]
    paths = [f.path for f in pr.files] if pr.files is not None else None
    return Shown.of([pr.title, *(paths or []), *kept], paths)


def pr_sections(
    pr: PullRequest, budget: int, diff: str | None, related: dict[int, str]
) -> tuple[list[str], list[Section]]:
    """The header and the sections of a PR's evidence, before ``fit`` trims them to ``budget``."""
    header = [
        f"PR #{pr.number}: {one_line(pr.title, 300)}",
        f"author: {pr.author}"
        + (f" ({pr.author_association})" if pr.author_association else "")
        + f" · merged {pr.merged_at:%Y-%m-%d}"
        + (f" into {pr.base_branch}" if pr.base_branch else ""),
        f"size: +{pr.additions}/-{pr.deletions}"
        + (f" in {len(pr.files)} files" if pr.files is not None else "")
        + (f", {pr.commits} commits" if pr.commits is not None else ""),
    ]
    if pr.labels is not None:
        header.append(f"labels: {', '.join(pr.labels) or 'none'}")
    if pr.checks is not None:
        failing = f" (failing: {', '.join(pr.checks.failing[:5])})" if pr.checks.failing else ""
        header.append(f"checks: {pr.checks.state}{failing}")
    if pr.is_fork:
        header.append("opened from a fork")
    unknown = [s for s in OPTIONAL_SIGNALS if getattr(pr, s) is None and s != "diff_excerpt"]
    if unknown:
        header.append(f"not supplied by the source (unknown, not none): {', '.join(unknown)}")
    threads = pr.review_threads or []
    open_threads = [th for th in threads if not th.is_resolved and not th.is_outdated]
    # A body or diff is cut to what could fit first (template cleaning reads at most twice that).
    body, body_left = _head(clean_body(_head(pr.body, 8 * budget)[0]), 4 * budget)
    diff, diff_left = _head(diff or "", 4 * budget)
    reviews = sorted(pr.reviews or [], key=lambda r: r.is_bot)  # people first
    sections = [
        Section("Description", _units(body), value=6, keep=10, omitted=body_left),
        Section("Reviews", _data([_review_line(r) for r in reviews]), value=7, keep=4),
        Section(
            "Unresolved review threads", _data([_thread_line(th) for th in open_threads]), value=7, keep=3
        ),
        Section(
            "Related pull requests", _data([f"#{n}: {t}" if t else f"#{n}" for n, t in related.items()]), 5
        ),
        Section("Files by directory", _data(_directory_lines(pr.files or [])), value=4, keep=5),
        Section("Diff excerpt", _diff_lines(diff), value=3, keep=40, omitted=diff_left),
        Section(
            "Resolved review threads",
            _data([_thread_line(th) for th in threads if th not in open_threads]),
            2,
        ),
        Section(
            "Comments", _data([f"{c.author}: {lead(c.body)}" for c in pr.comments or [] if not c.is_bot]), 1
        ),
    ]
    return _data(header), sections


def _data(lines: list[str]) -> list[str]:
    return [data_line(line) for line in lines]


def _review_line(review: Review) -> str:
    who = f"{review.author} (bot)" if review.is_bot else review.author
    return f"{who}: {review.state}" + (f": {lead(review.body)}" if review.body.strip() else "")


def _thread_line(thread: ReviewThread) -> str:
    return f"{thread.path or '-'} ({thread.author or '?'}): {lead(thread.body)}"


def _directory_lines(files: list[FileChange]) -> list[str]:
    """One line per directory, most churn first: its file count, churn and largest files."""
    by_dir: dict[str, list[FileChange]] = defaultdict(list)
    for f in files:
        by_dir[posixpath.dirname(f.path) or "."].append(f)

    def churn(f: FileChange) -> int:
        return (f.additions or 0) + (f.deletions or 0)

    lines = []
    for directory, group in sorted(by_dir.items(), key=lambda kv: -sum(map(churn, kv[1]))):
        group.sort(key=churn, reverse=True)
        names = [
            posixpath.basename(f.path)
            + (" (binary)" if f.binary else "")
            + (f" ({f.status})" if f.status != "modified" else "")
            for f in group[:6]
        ]
        more = f" and {len(group) - 6} more" if len(group) > 6 else ""
        added = sum(f.additions or 0 for f in group)
        deleted = sum(f.deletions or 0 for f in group)
        count = f"{len(group)} file" + ("s" if len(group) > 1 else "")
        lines.append(f"{directory}/: {count}, +{added}/-{deleted}: {', '.join(names)}{more}")
    return lines


_LONG_LINE = 400


def _diff_lines(diff: str) -> list[str]:
    """The diff's lines; a generated or minified line is named, not copied."""
    return [
        sealed(line) if len(line) <= _LONG_LINE else f"{line[:1]}[a {len(line)}-character line left out]"
        for line in redact(diff).splitlines()
        if line.strip()
    ]


def week_evidence(report: Report, analyses: dict[int, PRAnalysis], budget: int) -> str:
    """One line per analysed PR in merge order; over budget, the least important PRs are left out."""
    lines: dict[int, str] = {}
    for p in report.prs:
        a = analyses.get(p.number)
        if a is None:
            continue
        line = f"#{p.number} merged {p.merged_at:%m-%d} by {p.author} · importance {a.importance:g}"
        line += f" · insight {a.insight:g} · tags: {', '.join(a.tags) or '-'} · {a.summary}"
        if a.risks:
            line += " · risks: " + "; ".join(f"{r.label}: {r.evidence}" for r in a.risks[:4])
        if a.watch:
            line += " · watch: " + "; ".join(a.watch[:2])
        lines[p.number] = data_line(" ".join(line.split()))
    ranked = sorted(lines, key=lambda n: (-analyses[n].importance, n))
    section = Section("Pull requests, most important first", [lines[n] for n in ranked], value=1, keep=0)
    fit([], [section], budget)
    kept = set(ranked[: len(section.lines)])
    in_merge_order = [line for n, line in lines.items() if n in kept]
    missing = f"[… {section.omitted} less important pull requests left out]" if section.omitted else ""
    return "\n".join([f"Pull requests in merge order ({report.repo}):", *in_merge_order, missing]).strip()
