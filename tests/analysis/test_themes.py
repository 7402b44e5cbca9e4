"""The week's stories: PRs grouped by what ties them (subsystem, files, references, words), then told."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest

from prdigest.analysis.report import build_report
from prdigest.analysis.stories import group as stories
from prdigest.analysis.stories.group import find_stories
from prdigest.analysis.stories.text import pr_kind, spaced, subsystem, tell, topic_of
from prdigest.config import ReportSettings
from prdigest.i18n import texts
from prdigest.models import FileChange, PRAnalysis, PullRequest, RiskLabel, Window

REPO = "acme/engine"
WEEK = Window(since=date(2030, 3, 4), until=date(2030, 3, 10), tz="UTC")
START = datetime(2030, 3, 4, 9, tzinfo=UTC)


def pr(
    number: int,
    title: str,
    files: list[str],
    *,
    body: str = "",
    related: list[int] | None = None,
    author: str | None = None,
    hours: float | None = None,
) -> PullRequest:
    return PullRequest(
        repo=REPO,
        number=number,
        title=title,
        body=body,
        author=author or f"dev{number}",  # one author each: no stack ties unless a test wants them
        merged_at=START + timedelta(hours=hours if hours is not None else 3 * (number - 100)),
        files=[FileChange(path=f, additions=20, deletions=5) for f in files],
        additions=20 * len(files),
        deletions=5 * len(files),
        related=related or [],
    )


def analysis(
    p: PullRequest, importance: float, tags: list[str], risks: list[RiskLabel] | None = None
) -> PRAnalysis:
    assert p.number is not None
    return PRAnalysis(
        repo=REPO,
        number=p.number,
        summary=p.title.split(": ", 1)[-1],
        importance=importance,
        insight=3,
        tags=tags,
        risks=risks or [],
    )


# A week of a storage engine: a tiered-cache feature and its fix, a WAL rework, a metrics exporter,
# and unrelated PRs in the same top folder ("engine/") that no story should swallow.
CACHE = [
    pr(
        101,
        "feat(cache): add a tiered eviction policy",
        ["engine/cache/tiered/policy.py", "engine/cache/tiered/__init__.py", "tests/cache/test_tiered.py"],
    ),
    pr(
        104,
        "cache: expose tiered eviction statistics",
        ["engine/cache/tiered/stats.py", "engine/cache/tiered/policy.py"],
    ),
    pr(
        109,
        "fix: off-by-one in the eviction window",
        ["engine/cache/tiered/policy.py", "tests/cache/test_tiered.py"],
        body="Fixes a regression from #101.",
    ),
]
WAL = [
    pr(
        102,
        "feat(wal): group commit for the write-ahead log",
        ["engine/storage/wal/writer.py", "engine/storage/wal/commit.py"],
    ),
    pr(
        106,
        "wal: fsync batching behind group commit",
        ["engine/storage/wal/writer.py", "engine/storage/wal/fsync.py"],
    ),
]
METRICS = [
    pr(
        103,
        "feat(metrics): prometheus exporter",
        ["engine/metrics/exporter/prometheus.py", "engine/metrics/exporter/__init__.py"],
    ),
    pr(
        107,
        "metrics: label the prometheus exporter by shard",
        ["engine/metrics/exporter/prometheus.py", "engine/metrics/labels.py"],
    ),
]
UNRELATED = [
    pr(105, "fix: parse IPv6 hosts in the admin CLI", ["engine/admin/cli.py"]),
    pr(108, "docs: fix a typo in the README", ["README.md"]),
    pr(110, "refactor: rename the query planner's cost model", ["engine/query/planner/cost.py"]),
]
WEEK_PRS = sorted(CACHE + WAL + METRICS + UNRELATED, key=lambda p: p.merged_at)
IMPORTANCE = {101: 8, 102: 7, 103: 6, 104: 5, 105: 6.5, 106: 5, 107: 4, 108: 1, 109: 4, 110: 5.5}
TAGS = {n: ["feature"] for n in (101, 102, 103, 104, 107)} | {
    105: ["bugfix"],
    106: ["performance"],
    108: ["docs"],
    109: ["bugfix", "testing"],
    110: ["refactor"],
}
ANALYSES = {p.number: analysis(p, IMPORTANCE[p.number or 0], TAGS[p.number or 0]) for p in WEEK_PRS}


def groups(prs: list[PullRequest] = WEEK_PRS, importance: dict[int, float] = IMPORTANCE) -> list[set[int]]:
    return [{p.number for p in s.prs} for s in find_stories(prs, importance)]


def story_of(number: int, found: list[set[int]]) -> set[int]:
    return next((g for g in found if number in g), set())


def test_prs_of_one_subsystem_form_a_story_and_unrelated_prs_of_the_same_top_folder_do_not() -> None:
    found = groups()
    assert {101, 104} <= story_of(101, found)
    assert story_of(102, found) == {102, 106}
    assert story_of(103, found) == {103, 107}
    for lone in (105, 108, 110):  # engine/admin, the README, engine/query: in no story
        assert not story_of(lone, found), (lone, found)


def test_a_fix_that_names_an_earlier_pr_joins_its_story() -> None:
    assert 109 in story_of(101, groups())
    # By its reference alone, without a file or a word in common:
    lone_fix = pr(111, "fix: crash on shutdown", ["engine/server/shutdown.py"], body="Regression from #101.")
    found = groups([*WEEK_PRS, lone_fix], {**IMPORTANCE, 111: 5})
    assert 111 in story_of(101, found)


def test_a_revert_joins_the_pr_it_reverts() -> None:
    revert = pr(
        112, 'Revert "feat(wal): group commit for the write-ahead log"', ["engine/storage/wal/commit.py"]
    )
    found = groups([*WEEK_PRS, revert], {**IMPORTANCE, 112: 3})
    assert 112 in story_of(102, found)
    (story,) = [
        s
        for s in find_stories([*WEEK_PRS, revert], {**IMPORTANCE, 112: 3})
        if 112 in {p.number for p in s.prs}
    ]
    assert (112, 102, "revert") in story.references


def test_one_authors_consecutive_unrelated_prs_are_no_story() -> None:
    stack = [
        pr(201, "fix: parse IPv6 hosts in the admin CLI", ["engine/admin/cli.py"], author="sam", hours=50),
        pr(
            202,
            "refactor: rename the query planner's cost model",
            ["engine/query/planner/cost.py"],
            author="sam",
            hours=50.2,
        ),
    ]
    found = groups([*CACHE, *WAL, *stack], {**IMPORTANCE, 201: 6, 202: 6})
    assert not story_of(201, found) and not story_of(202, found)
    assert min(stories.THRESHOLDS) > stories.W_STACK  # a stack is a hint, never a story by itself


def test_a_numbered_series_by_one_author_is_one_story() -> None:
    series = [
        pr(301, "(1/3) feat: storage contract", ["engine/a/x.py"], author="kim", hours=60),
        pr(302, "(2/3) feat: offline backend", ["engine/b/y.py"], author="kim", hours=61),
        pr(303, "(3/3) feat: wire it into the harness", ["engine/c/z.py"], author="kim", hours=62),
    ]
    found = groups([*WEEK_PRS, *series], {**IMPORTANCE, 301: 4, 302: 4, 303: 4})
    assert story_of(301, found) == {301, 302, 303}


def test_stories_rank_by_the_importance_of_their_prs_and_keep_to_five() -> None:
    found = find_stories(WEEK_PRS, IMPORTANCE)
    assert 3 <= len(found) <= 5
    assert [s.score for s in found] == sorted((s.score for s in found), reverse=True)
    assert {p.number for p in found[0].prs} >= {101, 104}  # 8 + 5 + 4 outweighs the others


def test_the_subsystem_is_the_deepest_folder_most_of_the_story_shares() -> None:
    assert subsystem(CACHE) == "engine/cache/tiered"
    assert subsystem(WAL) == "engine/storage/wal"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_story_is_told_in_sentences_of_the_reports_language(lang: str) -> None:
    t = texts(lang)
    (story,) = [s for s in find_stories(WEEK_PRS, IMPORTANCE) if 101 in {p.number for p in s.prs}]
    theme = tell(story, ANALYSES, topic_of(story, WEEK_PRS), WEEK, t)
    assert set(theme.prs) <= {int(n) for n in re.findall(r"#(\d+)", theme.story)}  # each PR is named
    assert not re.search(r"先是|随后|\bthen\b", theme.story)  # no chain of titles
    assert "eviction" in theme.title.lower() and not re.search(r"\d+ (个 )?PRs?", theme.title)
    assert "engine/cache/tiered" in theme.story  # where the change lives
    assert "#109" in theme.story and "#101" in theme.story
    han = re.findall(r"[\u4e00-\u9fff]", theme.story + theme.trend)
    if lang == "zh":
        assert len(han) > 20 and "承接了 #101" in theme.story  # the fix's reference to #101 is told
    else:
        assert not han and "followed up on #101" in theme.story
    assert theme.trend and theme.trend not in theme.story


def test_stories_of_different_kinds_are_told_differently() -> None:
    t = texts("en")
    found = {min(p.number for p in s.prs): s for s in find_stories(WEEK_PRS, IMPORTANCE)}
    cache, wal = (tell(found[n], ANALYSES, topic_of(found[n], WEEK_PRS), WEEK, t) for n in (101, 102))
    first = {theme.story.split(" ")[1] for theme in (cache, wal)}
    assert len(first) == 2 or cache.story[:20] != wal.story[:20]


def test_a_removed_option_is_named_in_its_story() -> None:
    risk = RiskLabel(
        label="config_breaking",
        evidence="removes this project's options --legacy-wal",
        evidence_source="diff",
    )
    analyses = {**ANALYSES, 106: analysis(WAL[1], 5, ["refactor"], [risk])}
    (story,) = [s for s in find_stories(WEEK_PRS, IMPORTANCE) if 102 in {p.number for p in s.prs}]
    theme = tell(story, analyses, topic_of(story, WEEK_PRS), WEEK, texts("en"))
    assert "--legacy-wal" in theme.story and "#106" in theme.story


def test_the_report_tells_the_stories_and_the_summary_names_their_threads() -> None:
    report = build_report(
        REPO,
        WEEK,
        WEEK_PRS,
        source="fixture",
        unavailable=[],
        settings=ReportSettings(),
        analyses=ANALYSES,
        lang="en",
    )
    assert 3 <= len(report.themes) <= 5
    assert all(len(th.prs) >= 2 for th in report.themes)
    topic = report.themes[0].title.split(":")[0]
    assert topic in report.summary  # the summary names the main threads...
    assert report.themes[0].story not in report.summary  # ...but does not retell them
    assert len({th.trend for th in report.themes}) >= 2 or len(report.themes) == 1


def test_chinese_spacing_between_han_and_latin() -> None:
    assert (
        spaced("修复了#12和#13，改动集中在engine/cache，3 个 PR合计")
        == "修复了 #12 和 #13，改动集中在 engine/cache，3 个 PR 合计"
    )
    assert spaced("#12（summary）做了调整") == "#12（summary）做了调整"


def test_a_landed_stack_is_one_story_even_where_its_parts_share_little() -> None:
    landed = [
        pr(
            401,
            "Snapshot the argv of every launcher",
            ["tests/launchers/test_argv.py", "tests/launchers/harness.py"],
        ),
        pr(
            402,
            "Snapshot the launchers that build their own argv",
            ["tests/launchers/test_self.py", "tests/launchers/harness.py"],
        ),
        pr(
            403,
            "Rename exec_command by the resource it needs",
            ["engine/cmd/exec.py", "engine/cmd/resources.py"],
        ),
        pr(
            404,
            "Move the exec helpers next to their consumers",
            ["engine/cmd/exec.py", "engine/cmd/helpers.py"],
        ),
    ]
    landed = [
        p.model_copy(update={"author": "lee", "merged_at": START + timedelta(days=5, minutes=5 * i)})
        for i, p in enumerate(landed)
    ]
    found = groups([*WEEK_PRS, *landed], {**IMPORTANCE, 401: 4, 402: 4, 403: 4, 404: 4})
    assert story_of(401, found) == {401, 402, 403, 404}
    # The same PRs by two authors are two stories: nothing says they are one piece of work.
    apart = [p.model_copy(update={"author": "lee" if p.number in (401, 402) else "kai"}) for p in landed]
    found = groups([*WEEK_PRS, *apart], {**IMPORTANCE, 401: 4, 402: 4, 403: 4, 404: 4})
    assert story_of(401, found) == {401, 402} and story_of(403, found) == {403, 404}


def test_a_theme_is_named_after_what_its_prs_share_never_the_verb_they_share() -> None:
    series = [
        pr(311, "Simplify tokenization [1/3]: drop the is_vlm parameter", ["engine/text/tok.py"], hours=70),
        pr(
            312,
            "Simplify tokenization [2/3]: make tokenize a module function",
            ["engine/text/tok.py"],
            hours=71,
        ),
        pr(313, "Simplify tokenization [3/3]: one shared tokenize", ["engine/text/tok.py"], hours=72),
    ]
    week = [*WEEK_PRS, *series]
    (story,) = [
        s for s in find_stories(week, {**IMPORTANCE, 311: 5, 312: 5, 313: 5}) if s.prs[0].number == 311
    ]
    assert topic_of(story, week).lower() == "tokenization"


def test_a_pr_that_deletes_is_not_told_as_adding_tests() -> None:
    gone = pr(
        320, "feat(cache): drop the legacy eviction scripts", ["engine/cache/tiered/legacy.py"], hours=80
    )
    gone = gone.model_copy(update={"additions": 0, "deletions": 300})
    tests_only = pr(321, "cache: more tiered eviction tests", ["tests/cache/test_tiered.py"], hours=81)
    analyses = {**ANALYSES, 320: analysis(gone, 4, ["testing"]), 321: analysis(tests_only, 2, ["testing"])}
    assert pr_kind(analyses[320], gone) == "change" and pr_kind(analyses[321], tests_only) == "hardening"


def test_a_change_of_code_with_many_tests_is_not_told_as_adding_tests() -> None:
    files = [
        FileChange(path="tests/test_reward.py", additions=240),
        FileChange(path="engine/reward.py", additions=60),
    ]
    owned = pr(330, "Environment-owned reward", []).model_copy(update={"files": files, "additions": 300})
    named = owned.model_copy(update={"title": "Reward tests for environments"})
    assert pr_kind(analysis(owned, 5, ["testing"]), owned) == "change"
    assert pr_kind(analysis(named, 5, ["testing"]), named) == "hardening"  # its title says it is tests


def test_a_qualifier_names_a_theme_with_what_it_qualifies() -> None:
    fixes = [
        pr(341, "Fix the guard for iterable datasets nested in a dict", ["engine/data/guard.py"], hours=90),
        pr(342, "Fix the loader crash on iterable datasets", ["engine/data/loader.py"], hours=91),
        pr(343, "Document the step limit of iterable train datasets", ["docs/data.md"], hours=92),
    ]
    # Datasets are what most of the week's PRs touch: the word alone tells this story from no other.
    others = [
        pr(344 + i, f"Stream datasets from the {place} store", [f"engine/{place}/store.py"], hours=100 + i)
        for i, place in enumerate(("blob", "queue", "cache", "mirror", "disk", "bucket", "archive", "table"))
    ]
    week = [*WEEK_PRS, *fixes, *others]
    importance = {**IMPORTANCE, 341: 5, 342: 5, 343: 2, **{p.number or 0: 3 for p in others}}
    (story,) = [s for s in find_stories(week, importance) if 341 in {p.number for p in s.prs}]
    assert topic_of(story, week).lower() == "iterable datasets"
