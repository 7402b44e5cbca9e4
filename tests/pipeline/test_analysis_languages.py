"""A PR is analysed once, whatever the languages of its reports: subscriptions in zh and en of one
repository make one LLM call per PR; the report in the other language tells each PR with the summary
the same answer translated, or the rules' summary where it gave none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes.openai_api import FakeOpenAI, Request, analysis_json, pr_number, prdigest_answers

from prdigest.analysis.llm.merge import told_in
from prdigest.config import LLMSettings, Settings
from prdigest.models import PRAnalysis
from prdigest.pipeline.single import make_report
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.storage import Store
from prdigest.subscription import Subscription

DEMO = FixtureSource(demo_fixture_path())
assert DEMO.window is not None
WEEK = DEMO.window
NOW = datetime(2026, 9, 14, 9, tzinfo=UTC)


def answering(translation: str):
    """Answers whose analyses are written in Chinese, with ``translation`` (a format of the PR's number)
    as the English summary the same answer gives."""

    def respond(request: Request) -> str:
        if "<untrusted_pr_data>" in request.user:
            n = pr_number(request)
            return analysis_json(
                n,
                summary=f"第 {n} 号改动调整了训练器的检查点加载流程",
                summary_translated=translation.format(n=n),
            )
        return prdigest_answers(request)

    return respond


translated = answering("Trainer change {n} reworks checkpoint loading")
untranslated = answering("")


def analyses_asked(fake: FakeOpenAI) -> int:
    return sum("<untrusted_pr_data>" in r.user for r in fake.requests)


def llm_settings(fake: FakeOpenAI, default: str = "zh") -> Settings:
    llm = LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0)
    settings = Settings()
    return settings.model_copy(
        update={"llm": llm, "report": settings.report.model_copy(update={"language": default})}
    )


def sub(lang: str) -> Subscription:
    return Subscription(
        platform="console", chat_id=f"team-{lang}", repo=DEMO.repo, source="github", lang=lang
    )


def test_zh_and_en_subscriptions_of_one_repository_make_one_llm_call_per_pr(
    serve, store: Store, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake = serve(responder=translated)
    settings = llm_settings(fake)
    zh = make_report(settings, store, DEMO, WEEK, lang="zh", save=False, now=NOW, subscription=sub("zh"))
    first = analyses_asked(fake)
    en = make_report(settings, store, DEMO, WEEK, lang="en", save=False, now=NOW, subscription=sub("en"))
    assert first == zh.stats.merged_prs > 0
    assert analyses_asked(fake) == first  # the en report asked no analysis of its own
    assert en.llm_usage is not None and en.llm_usage.cached == en.stats.merged_prs
    assert en.llm_usage.analysed == 0
    zh_key = {p.number: p.summary for p in zh.prs}
    en_key = {p.number: p.summary for p in en.prs}
    assert zh_key and set(zh_key) == set(en_key)
    for n in en_key:
        assert zh_key[n].startswith(f"第 {n} 号改动")
        assert en_key[n] == f"Trainer change {n} reworks checkpoint loading"
    # Each analysis is kept once, in the deployment's language.
    with store.reading() as tx:
        rows = tx.rows("select lang, count(*) as n from analyses where engine = 'llm' group by lang")
        assert [(r["lang"], r["n"]) for r in rows] == [("zh", zh.stats.merged_prs)]


def test_without_a_translation_the_other_language_tells_the_rules_summary(
    serve, store: Store, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake = serve(responder=untranslated)
    settings = llm_settings(fake)
    make_report(settings, store, DEMO, WEEK, lang="zh", save=False, now=NOW)
    en = make_report(settings, store, DEMO, WEEK, lang="en", save=False, now=NOW)
    rules = make_report(settings, store, DEMO, WEEK, lang="en", save=False, now=NOW, use_llm=False)
    rules_summary = {p.number: p.summary for p in rules.prs}
    told = {p.number: p.summary for p in en.prs}
    assert told and all(told[n] == rules_summary[n] for n in told if n in rules_summary)
    assert not any("号改动" in s for s in told.values())  # no Chinese summary in the English report
    assert analyses_asked(fake) == en.stats.merged_prs


@pytest.mark.parametrize(
    ("written", "lang", "want"),
    [
        ("en", "en", "own"),  # the report's own language
        ("", "zh", "own"),  # cached before analyses knew their language
        ("en", "zh", "translation"),
        ("zh", "en", "rules"),  # no translation given
    ],
)
def test_told_in_picks_the_summary_of_the_reports_language(written: str, lang: str, want: str) -> None:
    translations = {"zh": "翻译的摘要"} if written == "en" else {}
    llm = PRAnalysis(
        repo="a/b", number=1, summary="own", lang=written, translations=translations, importance=1, insight=1
    )
    rules = PRAnalysis(repo="a/b", number=1, summary="rules", importance=1, insight=1)
    expected = {"own": "own", "translation": "翻译的摘要", "rules": "rules"}[want]
    assert told_in(llm, rules, lang) == expected


def test_the_translation_is_a_field_the_strict_schema_asks_for() -> None:
    from prdigest.analysis.llm.schemas import PRAnalysisOut, strict_schema

    assert "summary_translated" in strict_schema(PRAnalysisOut)["required"]
