"""What a report leaves out: the PRs its filters drop, the risk labels its subscription muted, the
labels admins dismissed on one PR, and what a card's buttons snoozed or acknowledged (a risk label of
the repository for a week; an open PR for a week, or while it waits for the same reason). They shape the
report, never the cache.

Filters (`SubscriptionFilters`: the repository's [[repos]] ones AND the subscription's; a PR must pass both):

- paths: a PR counts when one of its files is selected: it matches a plain glob (any file, when no plain
  glob is given) and no "!" glob. So ``["!docs/**"]`` drops a PR whose files are all under docs/, and
  ``["src/**", "!src/gen/**"]`` a PR that touches nothing of src/ but generated code. Globs are the
  taxonomy's (`path_kinds.matches`: fnmatch, "**/" also matches at the top). A PR whose files are unknown
  (or empty) passes: there is nothing to judge it by.
- labels and authors: names, compared without case; a PR counts when it carries one of the plain names
  (any, when none is given) and none of the "!" ones. A PR whose labels are unknown (a clone's PRs: git
  knows no labels) passes: a label filter would otherwise empty every report of a clone.
- base_branch: a PR merged into another branch than the wanted one (the subscription's, else the
  repository's filters', else its [[repos]] base_branch) is dropped; a PR whose branch is unknown passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from prdigest.config import Settings
from prdigest.i18n import risk_name, texts
from prdigest.models import (
    LANGS,
    Attention,
    Dismissal,
    PRAnalysis,
    PullRequest,
    RiskFollowup,
    RiskLabel,
    Snooze,
    Window,
    numbered,
)
from prdigest.path_kinds import matches
from prdigest.storage import Store
from prdigest.storage.dismissals import list_dismissals
from prdigest.storage.snoozes import active_snoozes
from prdigest.subscription import Subscription, SubscriptionFilters


@dataclass(frozen=True)
class Noise:
    """A report's filters, muted labels, the repository's dismissals and the snoozes running when it is
    made (see the module's docstring)."""

    filters: tuple[SubscriptionFilters, ...] = ()
    base_branch: str | None = None
    muted: frozenset[str] = frozenset()
    dismissals: tuple[Dismissal, ...] = ()
    snoozes: tuple[Snooze, ...] = ()

    @property
    def narrows(self) -> bool:
        """Whether the filters may drop a PR (else every PR of the cache counts)."""
        return self.base_branch is not None or any(not f.empty for f in self.filters)

    def counts(self, pr: PullRequest) -> bool:
        if self.base_branch is not None and pr.base_branch not in (None, self.base_branch):
            return False
        return all(
            _paths_pass(pr, f.paths)
            and _names_pass(pr.labels, f.labels)
            and _names_pass([pr.author], f.authors)
            for f in self.filters
        )

    def keep(self, prs: Iterable[PullRequest]) -> list[PullRequest]:
        return [pr for pr in prs if self.counts(pr)] if self.narrows else list(prs)

    def silences(self, number: int, label: str) -> Dismissal | Snooze | bool:
        """True for a muted label, the dismissal of a dismissed one, the snooze of a snoozed one, else
        False."""
        if label in self.muted:
            return True
        dismissed = next((d for d in self.dismissals if d.number == number and d.label == label), None)
        snoozed = next((s for s in self.snoozes if s.kind == "risk" and s.label == label), None)
        return dismissed or snoozed or False

    def quiet(
        self, analyses: dict[int, PRAnalysis], numbers: set[int] | None = None
    ) -> tuple[dict[int, PRAnalysis], list[Dismissal | Snooze]]:
        """The analyses of ``numbers`` (all: None) without their muted, dismissed and snoozed labels (nor
        the reviewer's points the rules drew from them), and the dismissals and snoozes that took a label
        off (each once)."""
        out: dict[int, PRAnalysis] = {}
        applied: list[Dismissal | Snooze] = []
        for number, analysis in analyses.items():
            if numbers is not None and number not in numbers:
                continue
            gone = [(r, self.silences(number, r.label)) for r in analysis.risks]
            gone = [(r, why) for r, why in gone if why]
            applied += [why for _, why in gone if not isinstance(why, bool) and why not in applied]
            if gone:
                dropped = [r for r, _ in gone]
                analysis = analysis.model_copy(
                    update={
                        "risks": [r for r in analysis.risks if r not in dropped],
                        "watch": [w for w in analysis.watch if not any(_about(w, r) for r in dropped)],
                    }
                )
            out[number] = analysis
        return out, applied

    def followups(
        self, followups: list[RiskFollowup], counted: set[int]
    ) -> tuple[list[RiskFollowup], list[Snooze]]:
        """The earlier weeks' risks still followed, on the PRs the filters count (``counted``) that the
        label was not dismissed on; a muted or snoozed label's are left out (with the snoozes that did)."""
        out, snoozed = [], []
        for f in followups:
            prs = [n for n in f.prs if (not self.narrows or n in counted) and not self.silences(n, f.label)]
            if prs:
                out.append(f if prs == f.prs else f.model_copy(update={"prs": prs}))
            why = self.silences(0, f.label)
            if isinstance(why, Snooze) and why not in snoozed:
                snoozed.append(why)
        return out, snoozed

    def quiet_open(self, attention: Attention) -> tuple[Attention, list[Snooze]]:
        """The open PRs needing attention without the snoozed ones and those acknowledged for the reason
        they wait for now, and the snoozes that took one off."""
        applied, kept = [], []
        for op in attention.open_prs:
            why = next(
                (
                    s
                    for s in self.snoozes
                    if s.kind == "open" and s.number == op.number and s.label in ("", op.reason)
                ),
                None,
            )
            if why is None:
                kept.append(op)
            else:
                applied.append(why)
        return (attention.model_copy(update={"open_prs": kept}) if applied else attention), applied


def noise_for(
    settings: Settings, store: Store, repo: str, subscription: Subscription | None, now: datetime
) -> Noise:
    """What ``repo``'s report for ``subscription`` (None: no subscription) made at ``now`` leaves out."""
    configured = settings.repo(repo)
    filters = [configured.filters, *([subscription.filters] if subscription else [])]
    wanted = [f.base_branch for f in reversed(filters)] + [configured.base_branch]
    return Noise(
        filters=tuple(f for f in filters if not f.empty),
        base_branch=next((b for b in wanted if b), None),
        muted=frozenset(subscription.muted if subscription else ()),
        dismissals=tuple(list_dismissals(store, repo)),
        snoozes=tuple(active_snoozes(store, repo, now)),
    )


def file_left_out(
    store: Store, repo: str, window: Window, given: Settings, layered: Settings, lang: str
) -> list[str]:
    """The report's warning naming the PRs of ``window`` that the repository's own file filters out (those
    the ``layered`` settings drop and the config file's, ``given``, keep): a file anyone who merges may write
    never hides a PR without a word."""
    mine, theirs = given.repo(repo).filters, layered.repo(repo).filters
    if mine == theirs:
        return []

    def dropped(filters: SubscriptionFilters) -> set[int]:
        noise = Noise(filters=(filters,))
        return {n for n, pr in numbered(prs) if not noise.counts(pr)}

    prs = store.prs_in_window(repo, window, excerpts=False)
    hidden = sorted(dropped(theirs) - dropped(mine))
    if not hidden:
        return []
    shown = ", ".join(f"#{n}" for n in hidden[:_NAMED]) + (" …" if len(hidden) > _NAMED else "")
    return [texts(lang)["repo_file_filtered"].format(repo=repo, n=len(hidden), prs=shown)]


_NAMED = 20  # the filtered PRs a warning names; the count says the rest


def _paths_pass(pr: PullRequest, globs: list[str]) -> bool:
    if not globs or not pr.files:
        return True
    plain = [g for g in globs if not g.startswith("!")]
    excluded = [g[1:] for g in globs if g.startswith("!")]
    return any((not plain or matches(f.path, plain)) and not matches(f.path, excluded) for f in pr.files)


def _names_pass(have: list[str] | None, wanted: list[str]) -> bool:
    if not wanted or have is None:
        return True
    names = {h.casefold() for h in have}
    plain = {w.casefold() for w in wanted if not w.startswith("!")}
    excluded = {w[1:].casefold() for w in wanted if w.startswith("!")}
    return (not plain or bool(names & plain)) and not names & excluded


def _about(point: str, risk: RiskLabel) -> bool:
    """Whether a reviewer's point was drawn from this risk (the rules' texts, in either language)."""
    return risk.evidence in point or any(_point_text(risk.label, lang).search(point) for lang in LANGS)


@cache
def _point_text(label: str, lang: str) -> re.Pattern[str]:
    t = texts(lang)
    template = t.get(f"w_{label.removesuffix('_path')}", t["watch"].replace("{evidence}", "{what}"))
    text = template.replace("{risk}", risk_name(label, lang))
    return re.compile(".*".join(re.escape(part) for part in text.split("{what}")))


def period_figures(
    store: Store, repo: str, periods: list[Window], noise: Noise
) -> list[tuple[tuple[int, int, int, int], set[int] | None]]:
    """Each period's merged PRs, additions, deletions and authors: in SQL (`Store.period_figures`), or of
    the PRs the filters count when they narrow, with those PRs' numbers (None: every PR counts)."""
    if not noise.narrows:
        return [(figures, None) for figures in store.period_figures(repo, periods)]
    out: list[tuple[tuple[int, int, int, int], set[int] | None]] = []
    for period in periods:
        merged = [p for p in noise.keep(store.prs_in_window(repo, period, excerpts=False)) if p.number]
        counts = (len(merged), sum(p.additions for p in merged), sum(p.deletions for p in merged))
        out.append(((*counts, len({p.author for p in merged})), {p.number for p in merged if p.number}))
    return out


def filters_text(filters: SubscriptionFilters) -> str:
    """The filters in one line, as `subscriptions` lists them: "paths: src/**, !docs/**; labels: bug"."""
    parts = [(name, ", ".join(getattr(filters, name))) for name in ("paths", "labels", "authors")]
    parts.append(("base_branch", filters.base_branch or ""))
    return "; ".join(f"{name}: {value}" for name, value in parts if value)
