"""The report's own words: the reader's language throughout, English plurals, text kept intact, and
recommendations that say what to do about what each PR did."""

from __future__ import annotations

import io
import json
import re

from markdown_it import MarkdownIt
from rich.console import Console
from test_themes import ANALYSES, REPO, WEEK, WEEK_PRS, analysis, pr

from prdigest.analysis.report import build_report
from prdigest.config import ReportSettings
from prdigest.i18n import texts
from prdigest.models import PRAnalysis, PullRequest, Report, RiskLabel
from prdigest.render.html import render_html
from prdigest.render.lark import render_lark_card
from prdigest.render.markdown import escape, render_markdown
from prdigest.render.terminal import render_terminal

DEFAULT_TAGS = (
    r"\b(feature|bugfix|performance|refactor|security|testing|ci|docs|dependency|configuration|revert)\b"
)
REMOVED = RiskLabel(
    label="config_breaking",
    evidence="removes this project's options --legacy-wal; commands that still pass them fail",
    evidence_source="diff",
    breaks=True,
)


def report_of(prs: list[PullRequest], analyses: dict[int, PRAnalysis], lang: str) -> Report:
    return build_report(
        REPO,
        WEEK,
        prs,
        source="fixture",
        unavailable=[],
        settings=ReportSettings(),
        analyses=analyses,
        lang=lang,
    )


def with_risk(number: int, *risks: RiskLabel, tags: list[str] | None = None) -> dict[int, PRAnalysis]:
    p = next(p for p in WEEK_PRS if p.number == number)
    base = ANALYSES[number]
    return {**ANALYSES, number: analysis(p, base.importance, tags or base.tags, list(risks))}


def test_a_chinese_report_names_levels_and_tags_in_chinese() -> None:
    report = report_of(WEEK_PRS, with_risk(106, REMOVED), "zh")
    assert report.risk_level == "high"
    markdown = render_markdown(report)
    t = texts("zh")
    assert f"{t['risk_level']}: 高" in markdown
    tag_line = next(line for line in markdown.splitlines() if line.startswith(f"- {t['tags']}"))
    assert "新功能" in tag_line and not re.search(DEFAULT_TAGS, tag_line)
    assert not re.search(DEFAULT_TAGS + r"|\b(high|medium|low)\b", report.summary)
    engine_line = next(line for line in markdown.splitlines() if line.startswith("_分析引擎"))
    assert "规则引擎" in engine_line and not re.search(r"\b(rules|fixture|git|cache)\b", engine_line)
    page = render_html(report)
    tags = re.sub(r"<[^>]+>", " ", page.split(f"<dt>{t['tags']}</dt>")[1].split("</dd>")[0])
    assert "新功能" in tags and not re.search(DEFAULT_TAGS, tags)  # a line, chips or a chart: in Chinese
    card = json.dumps(render_lark_card(report), ensure_ascii=False)
    chart = re.findall(r'"tag": "([^"]+)"', card)
    assert chart and not any(re.fullmatch(DEFAULT_TAGS, tag) for tag in chart)
    for theme in report.themes:  # titles, stories and trends speak Chinese around the PRs' own words
        assert re.search(r"[\u4e00-\u9fff]", theme.title) and re.search(r"[\u4e00-\u9fff]", theme.trend)


def test_the_level_sentence_names_what_drives_it_not_a_fixed_closing() -> None:
    removed = report_of(WEEK_PRS, with_risk(106, REMOVED), "zh")
    assert "配置项删除或改名" in removed.summary and "#106" in removed.summary
    assert "质量结论需要后续回归数据闭环" not in removed.summary
    regression = RiskLabel(
        label="perf_regression", evidence="measured 12% slower", evidence_source="body", breaks=True
    )
    slower = report_of(WEEK_PRS, with_risk(107, regression), "zh")
    level = lambda r: r.summary.rsplit("。", 2)[-2]  # noqa: E731  # the summary's last sentence
    assert level(removed) != level(slower) and "性能回退" in level(slower)


def test_english_plurals() -> None:
    one = report_of(WEEK_PRS[:1], {WEEK_PRS[0].number: ANALYSES[WEEK_PRS[0].number]}, "en")
    assert "saw 1 PR merged" in one.summary
    week = report_of(WEEK_PRS, with_risk(106, REMOVED), "en")
    for text in (render_markdown(one), render_markdown(week)):
        assert not re.search(
            r"(?<![\d.+/-])1 (PRs|files|code files|fixes|features|changes|updates|more PRs)\b", text
        )
    trends = " ".join(th.trend for th in week.themes)
    assert re.search(r"\b1 fix\b|\b1 feature\b|\b2 features\b", trends)


def test_markdown_and_terminal_keep_code_and_versions_intact() -> None:
    odd = pr(
        120, "tests: drop @pytest.mark.skip from the WAL test and pin lz4<=0.36", ["tests/wal/test_writer.py"]
    )
    prs = [*WEEK_PRS, odd]
    analyses = {**ANALYSES, 120: analysis(odd, 9, ["testing"])}  # a key PR: in the table with its summary
    report = report_of(prs, analyses, "en")
    markdown = render_markdown(report)
    assert "\u2060" not in markdown
    shown = " ".join(
        t.content
        for block in MarkdownIt("commonmark").enable("table").parse(markdown)
        for t in block.children or []
    )
    assert "@pytest.mark.skip" in shown and "lz4<=0.36" in shown
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=400, color_system=None))
    assert (
        "@pytest.mark.skip" in out.getvalue()
        and "lz4<=0.36" in out.getvalue()
        and "\u2060" not in out.getvalue()
    )


def test_mentions_and_links_stay_inert_in_markdown() -> None:
    assert escape("ping @all at https://evil.example/x now") == "ping `@all` at `https://evil.example/x` now"
    assert escape("<b>*x*</b> a|b") == r"\<b\>\*x\*\</b\> a\|b"
    assert escape("中文@here中文") == "中文`@here`中文"  # a mention ends where its name does


def test_a_security_fix_is_to_be_released_and_new_sensitive_code_audited() -> None:
    fix = RiskLabel(
        label="security_sensitive", evidence="removes the sensitive call shell=True", evidence_source="diff"
    )
    new = RiskLabel(label="security_sensitive", evidence="adds pickle.load(f)", evidence_source="diff")
    analyses = {**with_risk(105, fix, tags=["bugfix", "security"]), 103: with_risk(103, new)[103]}
    recs = [r.text for r in report_of(WEEK_PRS, analyses, "en").recommendations]
    release = next(r for r in recs if "#105" in r and "security" in r)
    assert release.startswith("Release the security fixes in #105") and "audit" not in release
    audit = next(r for r in recs if "#103" in r and "audit" in r)
    assert "pickle.load" in audit and "#105" not in audit


def test_a_removed_option_gets_a_migration_note_naming_it() -> None:
    recs = report_of(WEEK_PRS, with_risk(106, REMOVED), "en").recommendations
    (note,) = [r for r in recs if 106 in r.prs and "migration" in r.text]
    assert "#106 (--legacy-wal)" in note.text
    zh = report_of(WEEK_PRS, with_risk(106, REMOVED), "zh").recommendations
    assert any("迁移说明" in r.text and "#106（--legacy-wal）" in r.text for r in zh)


def test_summary_themes_and_trends_each_say_their_own_thing() -> None:
    report = report_of(WEEK_PRS, with_risk(106, REMOVED), "en")
    summary, stories = report.summary, " ".join(th.story for th in report.themes)
    trends = [th.trend for th in report.themes]
    assert all(th.title.split(":")[0] in summary for th in report.themes[:3])  # the threads, by name only
    assert not any(sentence in summary for th in report.themes for sentence in th.story.split(". ")[:2])
    assert all(trend not in stories and trend not in summary for trend in trends)
    assert len(set(trends)) == len(trends)


def test_the_weightiest_kind_of_risk_leads_however_few_prs_carry_it() -> None:
    core = RiskLabel(label="core_path", evidence="changes core paths engine/x.py", evidence_source="paths")
    analyses = {
        p.number: analysis(p, ANALYSES[p.number].importance, ANALYSES[p.number].tags, [core])
        for p in WEEK_PRS
        if p.number is not None
    }
    analyses[106] = analysis(next(p for p in WEEK_PRS if p.number == 106), 5, ["refactor"], [REMOVED])
    report = report_of(WEEK_PRS, analyses, "en")
    assert [o.label for o in report.risk_observations] == ["config_breaking", "core_path"]
    assert len(report.risk_observations[1].prs) == len(WEEK_PRS) - 1


def test_the_summary_names_the_release_and_the_biggest_change_and_tests_do_not_lead_a_week_of_fixes() -> None:
    fixes = [
        pr(200 + i, f"fix: case {i} of the loader", ["pkg/loader.py", f"tests/test_{i}.py"], hours=10 * i)
        for i in range(4)
    ]
    release = pr(210, "Release: v2.1", ["pkg/__init__.py"], hours=50)
    big = pr(211, "Rewrite the write-ahead log", ["pkg/wal.py"], hours=60)
    prs = [*fixes, release, big]
    analyses = {p.number: analysis(p, 3.0, ["bugfix", "testing"]) for p in fixes}
    analyses[210] = analysis(release, 6.0, [])
    analyses[211] = analysis(big, 5.0, ["refactor"])
    for lang, said in (("en", "It released v2.1 (#210)"), ("zh", "本周发布 v2.1（#210）")):
        report = report_of(prs, analyses, lang)
        t = texts(lang)
        assert said in report.summary and "#211" in report.summary  # the biggest change, not the release
        assert t["judge_testing"] not in report.summary and t["judge_bugfix"] in report.summary
