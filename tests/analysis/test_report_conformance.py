"""Seed conformance: the full report says what the example reports say, on real and demo weeks."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from prdigest.analysis.report import build_report, enforce_citations
from prdigest.analysis.rules import RISK_INPUTS
from prdigest.config import ReportSettings, load_settings
from prdigest.i18n import texts
from prdigest.models import Recommendation, Report, RiskObservation, Window
from prdigest.pipeline.single import make_report
from prdigest.render.markdown import render_markdown
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.sources.git.source import GitSource
from prdigest.storage import Store

MILES_WEEK = Window(since="2026-08-10", until="2026-08-16", tz="Asia/Shanghai")
SECTIONS = ("s_summary", "s_themes", "s_trends", "s_risks", "s_key_prs", "s_recommendations")


def _report(tmp_path: Path, week: str, lang: str, miles_repo: Path | None) -> tuple[Report, list]:
    store = Store(tmp_path / f"{week}-{lang}.db")
    if week == "miles":
        assert miles_repo is not None
        source, window = GitSource(miles_repo), MILES_WEEK
    else:
        source = FixtureSource(demo_fixture_path())
        window = source.window
    report = make_report(load_settings(env={}), store, source, window, lang=lang)
    prs = store.prs_in_window(source.repo, window)
    store.close()
    return report, prs


@pytest.fixture(
    params=[("miles", "zh"), ("miles", "en"), ("demo", "zh"), ("demo", "en")], ids=lambda p: "-".join(p)
)
def week(request, tmp_path: Path, miles_repo: Path):
    name, lang = request.param
    report, prs = _report(tmp_path, name, lang, miles_repo)
    return name, lang, report, prs


def test_every_section_is_present(week) -> None:
    _, lang, report, _ = week
    markdown = render_markdown(report)
    t = texts(lang)
    positions = [markdown.index(f"## {t[key]}") for key in SECTIONS]
    assert positions == sorted(positions)  # in the seeds' order
    assert report.summary and str(report.stats.merged_prs) in report.summary
    assert report.engine == "rules" and report.stats.engines == {"rules": report.stats.merged_prs}


def test_themes_tell_stories_of_their_prs(week) -> None:
    _, _, report, prs = week
    merged_at = {p.number: p.merged_at for p in prs}
    assert 3 <= len(report.themes) <= 5
    seen: set[int] = set()
    for theme in report.themes:
        assert len(theme.prs) >= 2, theme.title
        assert not seen & set(theme.prs)  # a PR belongs to one story at most
        seen |= set(theme.prs)
        assert [merged_at[n] for n in theme.prs] == sorted(merged_at[n] for n in theme.prs)
        cited = {int(n) for n in re.findall(r"#(\d+)", theme.story)}
        assert set(theme.prs) <= cited  # the story names each of its PRs
        assert not re.search(r"先是|随后|\bfirst\b.*\bthen\b", theme.story)  # sentences, not a title chain
        assert theme.trend and set(theme.representative) <= set(theme.prs)


def test_risks_and_recommendations_carry_prs_and_evidence(week) -> None:
    _, _, report, _ = week
    assert report.risk_observations and report.recommendations
    for obs in report.risk_observations:
        assert obs.prs and obs.evidence
        assert all(f"#{n}" in obs.evidence for n in obs.prs[:4])
    for rec in report.recommendations:
        assert rec.prs and all(f"#{n}" in rec.text for n in rec.prs)


def test_figures_equal_a_recomputation(week) -> None:
    _, _, report, prs = week
    s = report.stats
    by_number = {p.number: p for p in report.prs}
    assert s.merged_prs == len(report.prs) == len([p for p in prs if p.number])
    assert s.authors == dict(Counter(p.author for p in prs if p.number))
    assert s.tags == dict(Counter(tag for p in report.prs for tag in p.tags))
    assert s.risks == dict(Counter(label for p in report.prs for label in p.risks))
    key = [p for p in report.prs if p.key]
    assert s.key_prs == len(key) <= ReportSettings().key_pr_limit
    assert all((p.importance or 0) >= ReportSettings().key_importance_min for p in key)
    assert s.avg_importance == round(sum(p.importance for p in key) / len(key), 2)
    assert s.avg_insight == round(sum(p.insight for p in key) / len(key), 2)
    for obs in report.risk_observations:
        assert all(obs.label in by_number[n].risks for n in obs.prs)


def test_no_pr_is_cited_outside_the_window(week) -> None:
    _, _, report, _ = week
    window = {p.number for p in report.prs}
    cited = [n for th in report.themes for n in th.prs + th.representative]
    cited += [n for o in report.risk_observations for n in o.prs]
    cited += [n for r in report.recommendations for n in r.prs]
    assert set(cited) <= window
    markdown = render_markdown(report)
    related = {n for p in report.prs for n in p.related}
    assert {int(n) for n in re.findall(r"#(\d+)", markdown)} <= window | related


def test_no_rule_fires_on_an_unknown_input(week) -> None:
    name, _, report, prs = week
    unknown = {
        p.number: {
            f for f in ("reviews", "review_threads", "is_fork", "checks", "files") if getattr(p, f) is None
        }
        for p in prs
        if p.number
    }
    for p in report.prs:
        for label in p.risks:
            assert not set(RISK_INPUTS[label]) & unknown[p.number], (p.number, label)
    if name == "miles":
        assert {"reviews", "review_threads", "is_fork", "checks", "labels"} <= set(report.unavailable)
        assert not {"large_low_review", "fork_no_bot_review", "unresolved_threads", "failing_checks"} & set(
            report.stats.risks
        )


def test_citations_outside_the_window_are_dropped() -> None:
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    report = build_report(
        source.repo, source.window, source.prs, source="fixture", unavailable=[], settings=ReportSettings()
    )
    inside = report.prs[0].number
    report.risk_observations = [
        RiskObservation(title="mixed", prs=[inside, 99999], evidence="x"),
        RiskObservation(title="foreign only", prs=[99999], evidence="x"),
    ]
    report.recommendations = [Recommendation(text="do", prs=[12345])]
    enforce_citations(report)
    assert [o.prs for o in report.risk_observations] == [[inside]]
    assert report.recommendations == []


def test_empty_window_says_no_merged_prs(tmp_path: Path) -> None:
    source = FixtureSource(demo_fixture_path())
    window = Window(since="2030-01-07", until="2030-01-13", tz="Asia/Shanghai")
    store = Store(tmp_path / "e.db")
    report = make_report(load_settings(env={}), store, source, window, lang="en")
    markdown = render_markdown(report)
    assert "No pull requests were merged in this period." in markdown
    assert report.themes == [] and report.risk_observations == [] and report.stats.key_prs == 0
    assert "## 2. Key changes" not in markdown


def test_each_pr_is_analysed_once(tmp_path: Path) -> None:
    source = FixtureSource(demo_fixture_path())
    assert source.window is not None
    store = Store(tmp_path / "once.db")
    settings = load_settings(env={})
    first = make_report(settings, store, source, source.window, lang="en")
    rows = store.integrity()["analyses"]
    assert rows == first.stats.merged_prs
    second = make_report(settings, store, source, source.window, lang="en")
    assert store.integrity()["analyses"] == rows  # a rerun reuses every analysis
    assert second.prs == first.prs
    make_report(settings, store, source, source.window, lang="zh")
    assert store.integrity()["analyses"] == 2 * rows  # another language is another analysis
