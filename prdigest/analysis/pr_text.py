"""What the rules engine says of one PR: a summary beyond its title, and points to watch that name behaviour.

The summary is the title without its conventions, plus what the description or the diff adds: the first
sentence of the description, else the options and functions the diff adds or removes. A point to watch
says what may behave differently (an option, a function, a default), never a bare list of paths.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from prdigest.analysis.facts import Facts
from prdigest.analysis.risks.rules import new_options, project_diffs
from prdigest.analysis.taxonomy import is_kind_word, parse_title
from prdigest.i18n import detect_lang, risk_name, texts
from prdigest.models import PullRequest, RiskLabel

_DEF = re.compile(r"^[ \t]*(?:async\s+)?(?:def|class)\s+([A-Za-z]\w*)", re.M)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_NOISE = re.compile(
    r"^(co-authored-by|signed-off-by|cc|fixes|closes|resolves|related)\b|^https?://|^#\d+$", re.I
)
MAX_DETAIL = 160
MAX_NAMES = 3


def title_line(pr: PullRequest) -> str:
    """The title without its conventions: "feat(rollout): add X" -> "rollout: Add X"."""
    parsed = parse_title(pr.title)
    text = parsed.text or pr.title
    text = text[:1].upper() + text[1:]
    scope = parsed.scope or ", ".join(b for b in parsed.brackets if not is_kind_word(b))
    return f"{scope}: {text}" if scope else text


def first_sentence(body: str) -> str | None:
    """The description's first sentence that says something (not a trailer, a link or a reference)."""
    for line in body.splitlines():
        line = line.strip().lstrip("-*> ").strip()
        if len(line.split()) < 4 or _NOISE.search(line):
            continue
        sentence = _SENTENCE.split(line, maxsplit=1)[0]
        return sentence if len(sentence) <= MAX_DETAIL else sentence[: MAX_DETAIL - 1] + "…"
    return None


class Names(NamedTuple):
    """What the project's code changes by name: options added, functions or classes added, removed, and
    those the changed lines sit in (the hunks' context), each function written as a call."""

    options: list[str]
    added: list[str]
    removed: list[str]
    within: list[str]


def changed_names(f: Facts) -> Names:
    diffs = project_diffs(f)
    added_defs = [m.group(1) for d in diffs for m in _DEF.finditer("\n".join(d.added))]
    removed_defs = [m.group(1) for d in diffs for m in _DEF.finditer("\n".join(d.removed))]
    options = new_options(f)
    within = [m.group(1) for d in diffs for c in d.contexts if (m := _DEF.match(c))]
    return Names(
        options=options,
        added=[_call(n) for n in dict.fromkeys(added_defs) if n not in removed_defs],
        removed=[_call(n) for n in dict.fromkeys(removed_defs) if n not in added_defs],
        within=[_call(n) for n in dict.fromkeys(within)],
    )


def _call(name: str) -> str:
    return f"{name}()" if name[0].islower() else name  # a function, or a class as it is


def _names(names: list[str], sep: str) -> str:
    more = f" (+{len(names) - MAX_NAMES})" if len(names) > MAX_NAMES else ""
    return sep.join(names[:MAX_NAMES]) + more


def detail(f: Facts, names: Names, t: dict[str, str]) -> str | None:
    """What the PR changes beyond its title: its description's first sentence, else what its diff adds."""
    said = first_sentence(f.body)
    if said:
        return said
    parts = []
    if names.options:
        parts.append(t["d_options"].format(names=_names(names.options, ", ")))
    if names.added:
        parts.append(t["d_added"].format(names=_names(names.added, ", ")))
    if names.removed:
        parts.append(t["d_removed"].format(names=_names(names.removed, ", ")))
    if not parts and names.within:
        parts.append(t["d_changed"].format(names=_names(names.within, ", ")))
    return t["d_sep"].join(parts) or None


def summary(pr: PullRequest, f: Facts, names: Names, t: dict[str, str]) -> str:
    more = detail(f, names, t)
    if not more:
        return title_line(pr)
    # The description keeps its own language; the sentence mark follows it, not the report's.
    joined = (
        t["summary_with_detail"]
        if detect_lang(more) == t["lang"]
        else texts(detect_lang(more))["summary_with_detail"]
    )
    return joined.format(title=title_line(pr), detail=more)


def watch(
    pr: PullRequest, f: Facts, names: Names, risks: list[RiskLabel], harm: str | None, t: dict[str, str]
) -> list[str]:
    """Up to three behaviours a reviewer should check: the weightiest risks first, told as behaviour."""
    lang = t["lang"]
    touched = list(dict.fromkeys([*names.added, *names.removed, *names.within]))
    area = (
        _names(touched, ", ") if touched else t["w_area"].format(modules=", ".join(f.modules[:2]) or pr.title)
    )
    points = []
    for r in risks:
        if r.label == "core_path":
            points.append(t["w_core"].format(what=area))
        elif r.label == "no_tests":
            points.append(t["w_no_tests"].format(what=area))
        else:
            points.append(t["watch"].format(risk=risk_name(r.label, lang), evidence=r.evidence))
    if harm:
        points.insert(0, t["w_fix"].format(harm=harm, what=area))
    return points[:3]
