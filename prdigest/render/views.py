"""What the Lark and Slack renderers share: the chat cards' inputs, the button contract, detail levels,
and the platform-free content of each card (figures, buttons, sections), which they only encode.

The chat layer builds a view from its Reply (field names match: `title`, `risks`,
`HelpLine(usage, about)`; `PRHead.of` takes a ReportPR or a PullRequest);
`render/lark.py` and `render/slack.py` lay it out. A button carries an `ActionValue`:
Lark sends it back as the callback `value` dict, Slack as the button's `value` JSON
string; `ActionValue.model_validate` reads either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from prdigest.i18n import risk_name
from prdigest.models import Lang, OpenPR, PRAnalysis, PullRequest, Report, ReportPR, RiskObservation
from prdigest.render.sanitize import safe_url
from prdigest.subscription import source_label

Action = Literal["risks", "key_prs", "explain", "another_week", "open", "ack", "snooze"]


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReportRef(_View):
    """Which repository, window and language a card (and its buttons) is about."""

    repo: str
    since: date
    until: date
    tz: str
    lang: Lang = "en"  # the card's: a button's answer is in it (cards posted before it had none)

    @classmethod
    def of(cls, report: Report) -> ReportRef:
        w = report.window
        return cls(repo=report.repo, since=w.since, until=w.until, tz=w.tz, lang=report.lang)


class ActionValue(ReportRef):
    """What a button asks for: `number` names the PR to explain, or the open PR to acknowledge or snooze;
    `label` the risk label to acknowledge or snooze (an open PR's acknowledgement: the reason it waits
    for)."""

    action: Action
    number: int | None = None
    label: str | None = None

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class PRHead(_View):
    """The few facts of a PR a card shows beside its analysis."""

    number: int
    title: str
    author: str
    url: str | None = None
    merged_at: datetime
    additions: int = 0
    deletions: int = 0
    files: int | None = None

    @classmethod
    def of(cls, pr: ReportPR | PullRequest) -> PRHead:
        if pr.number is None:
            raise ValueError("a direct push has no PR to explain")
        files = len(pr.files) if isinstance(pr.files, list) else pr.files
        return cls(
            number=pr.number,
            title=pr.title,
            author=pr.author,
            url=pr.url,
            merged_at=pr.merged_at,
            additions=pr.additions,
            deletions=pr.deletions,
            files=files,
        )


class HelpLine(_View):
    usage: str
    about: str = ""


class RisksView(_View):
    lang: Lang
    ref: ReportRef
    risks: list[RiskObservation]
    title: str = ""  # default: "Risk observations · owner/name"
    report_url: str | None = None


class PRExplainView(_View):
    lang: Lang
    pr: PRHead
    analysis: PRAnalysis
    # With a ref, the card offers the week's risks and key PRs.
    ref: ReportRef | None = None


class PRListView(_View):
    lang: Lang
    title: str
    items: list[ReportPR]
    # With a ref, the card offers "explain" buttons for its first PRs.
    ref: ReportRef | None = None
    report_url: str | None = None


class HelpView(_View):
    lang: Lang
    lines: list[HelpLine]
    title: str = ""  # default: "prdigest commands"


View = RisksView | PRExplainView | PRListView | HelpView


@dataclass(frozen=True)
class Detail:
    """How much of each section a card shows; renderers try the levels in order until one fits."""

    items: int  # themes, risks, list entries
    chars: int  # longest piece of untrusted text
    summary: int  # the summary paragraph
    explain: int  # "explain #N" buttons


LEVELS = (
    Detail(items=5, chars=120, summary=600, explain=3),
    Detail(items=4, chars=80, summary=360, explain=3),
    Detail(items=3, chars=48, summary=140, explain=2),
    Detail(items=2, chars=32, summary=80, explain=1),
    Detail(items=1, chars=20, summary=0, explain=1),
)


def key_prs(report: Report) -> list[ReportPR]:
    """The key PRs, most important first: the order every renderer lists them in."""
    return ranked(p for p in report.prs if p.key)


def ranked(prs: Iterable[ReportPR]) -> list[ReportPR]:
    """PRs most important first, equals by number."""
    return sorted(prs, key=lambda p: (-(p.importance or 0), p.number))


def pr_url(pr: ReportPR | PRHead) -> str | None:
    """The PR's own https link (sources write ".../pull/N"), or None: nothing else becomes a link."""
    url = safe_url(pr.url)
    return url if url and url.endswith(f"/pull/{pr.number}") else None


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@dataclass(frozen=True)
class Button:
    """A callback button (`value`) or a link button (`url`, already checked by `safe_url`)."""

    label: str
    value: ActionValue | None = None
    url: str | None = None
    primary: bool = False


def callback(text: str, ref: ReportRef, action: Action, number: int | None = None, **more: Any) -> Button:
    """A callback button reading ``text``; ``more``: the value's other fields (its label)."""
    return Button(text, ActionValue(**ref.model_dump(), action=action, number=number, **more))


def risk_quiet_buttons(ref: ReportRef, o: RiskObservation, t: dict[str, str]) -> list[Button]:
    """A risk's "acknowledged" (its label dismissed on the card's week's PRs) and "snooze a week" (its
    label, for the repository); none for a risk with no label (nothing to quiet it by)."""
    if not o.label:
        return []
    return [
        callback(t["btn_ack"], ref, "ack", label=o.label),
        callback(t["btn_snooze"], ref, "snooze", label=o.label),
    ]


def open_quiet_buttons(ref: ReportRef, op: OpenPR, t: dict[str, str]) -> list[Button]:
    """An open PR's "acknowledged" (quiet while it waits for the same reason) and "snooze a week"."""
    return [
        callback(t["btn_ack"], ref, "ack", op.number, label=op.reason),
        callback(t["btn_snooze"], ref, "snooze", op.number),
    ]


def _explain(t: dict[str, str], ref: ReportRef, numbers: list[int]) -> list[Button]:
    return [callback(t["btn_explain"].format(number=n), ref, "explain", n) for n in numbers]


def with_page(buttons: list[Button], report_url: str | None, t: dict[str, str]) -> list[Button]:
    url = safe_url(report_url, allow_http=True)
    return [Button(t["btn_full_report"], url=url, primary=True), *buttons] if url else buttons


def risks_buttons(view: RisksView, t: dict[str, str], detail: Detail) -> list[Button]:
    """An explain button for the first PR of each risk shown."""
    cited = list(dict.fromkeys(r.prs[0] for r in view.risks[: detail.items] if r.prs))
    return with_page(_explain(t, view.ref, cited[: detail.explain]), view.report_url, t)


def list_buttons(view: PRListView, t: dict[str, str], detail: Detail) -> list[Button]:
    numbers = [p.number for p in view.items[: detail.explain]]
    return with_page(_explain(t, view.ref, numbers) if view.ref else [], view.report_url, t)


def explain_figures(view: PRExplainView, t: dict[str, str]) -> list[tuple[str, str]]:
    pr, a = view.pr, view.analysis
    return [
        (t["importance"], score(a.importance)),
        (t["insight"], score(a.insight)),
        (t["churn"], f"+{pr.additions} / -{pr.deletions}"),
        (t["files_changed"], score(pr.files)),
    ]


def explain_sections(view: PRExplainView, t: dict[str, str]) -> list[tuple[str, list[str]]]:
    """The explanation's lists as (heading, untrusted lines); empty ones left out."""
    a = view.analysis
    risks = [f"{risk_name(r.label, view.lang)}: {r.evidence}" for r in a.risks]
    sections = [
        (t["x_reasons"], a.reasons),
        (t["x_risks"], risks),
        (t["col_watch"], a.watch),
        (t["x_unresolved"], a.unresolved),
    ]
    return [(name, lines) for name, lines in sections if lines]


def explain_buttons(view: PRExplainView, t: dict[str, str]) -> list[Button]:
    url = pr_url(view.pr)
    ref = view.ref
    buttons = (
        [callback(t["btn_risks"], ref, "risks"), callback(t["btn_key_prs"], ref, "key_prs")] if ref else []
    )
    return [Button(t["btn_open_pr"], url=url, primary=True), *buttons] if url else buttons


def risks_title(view: RisksView, t: dict[str, str]) -> str:
    return view.title or f"{t['card_risks']} · {view.ref.repo}"


def cite(numbers: list[int], limit: int = 6, link: Callable[[int], str] | None = None) -> str:
    """PR numbers as "#1 #2 …" (our own integers, safe in any markup), each through ``link`` if given."""
    shown = [link(n) if link else f"#{n}" for n in numbers[:limit]]
    return " ".join(shown) + (" …" if len(numbers) > limit else "")


def pr_urls(report: Report) -> dict[int, str]:
    """The report's PRs' own links by number (see pr_url)."""
    return {p.number: url for p in report.prs if (url := pr_url(p))}


LinkFormat = Callable[[int, str], str]  # a PR number and its URL as a platform's link


def linker(urls: dict[int, str], fmt: LinkFormat) -> Callable[[int], str]:
    """A PR number as its link where the PR has its own, else as "#N"."""
    return lambda n: fmt(n, urls[n]) if n in urls else f"#{n}"


def link_refs(text: str, ref: re.Pattern[str], urls: dict[int, str], fmt: LinkFormat) -> str:
    """Rendered text whose PR references (``ref``'s first group: the number) are links where they can be."""
    return ref.sub(lambda m: fmt(int(m[1]), urls[int(m[1])]) if int(m[1]) in urls else m[0], text)


def window_text(t: dict[str, str], ref: ReportRef) -> str:
    return t["card_window"].format(since=ref.since, until=ref.until, tz=ref.tz)


def engine_note(report: Report, t: dict[str, str]) -> str:
    # Engines and sources by their name in the report's language (as written where it has none).
    engines = ", ".join(f"{t.get(f'engine_{e}', e)} {n}" for e, n in report.stats.engines.items())
    source = source_label(report.source, report.lang)
    engines = engines or t.get(f"engine_{report.engine}", report.engine)
    return t["engine"].format(engine=engines, source=source)


def usage_note(report: Report, t: dict[str, str]) -> str | None:
    """What the report's LLM answers cost, by purpose (None without the LLM); for every view."""
    usage = report.llm_usage
    if usage is None:
        return None
    purposes = ", ".join(f"{name} {cost.calls}" for name, cost in usage.by_purpose.items()) or "-"
    return t["llm_usage"].format(
        model=usage.model, calls=usage.calls, tokens_in=usage.input_tokens, tokens_out=usage.output_tokens,
        cached=usage.cached, fallback=usage.fallback, narrative=usage.narrative or "rules",
        purposes=purposes, run_calls=usage.run_calls,
    )  # fmt: skip
