"""The taxonomy is the one definition of tags and risk labels: the rules engine, the stories, the chat's
noise controls and the translations follow its data, and every tag and label has its texts in zh and en."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from prdigest import LANGS
from prdigest.analysis import report as report_builder
from prdigest.analysis import rules
from prdigest.analysis.risks.common import JUDGEMENT_LABELS
from prdigest.analysis.stories.text import KINDS
from prdigest.analysis.taxonomy import DEFAULT_TAGS, RISK_LABELS, RISKS, TAGS, tags_for
from prdigest.config import Taxonomy
from prdigest.handlers import noise
from prdigest.i18n import risk_name, texts
from prdigest.i18n.report import RISK_NAMES
from prdigest.i18n.tags import TAG_NAMES, tag_name
from prdigest.models import PRAnalysis, PullRequest, RiskLabel, RiskObservation

_NOW = datetime(2026, 9, 8, tzinfo=UTC)


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)


def test_tags_and_labels_are_each_defined_once() -> None:
    # A word or label that named two tags would tag a PR by whichever the mapping happened to keep.
    types = [word for tag in DEFAULT_TAGS for word in tag.types]
    labels = [label for tag in DEFAULT_TAGS for label in (tag.name, *tag.labels)]
    assert len(types) == len(set(types))
    assert len(labels) == len(set(labels))
    assert len(TAGS) == len(set(TAGS)) and len(RISK_LABELS) == len(set(RISK_LABELS))
    # Two kinds with the same rank would leave the title's first kind word to the tuple's order.
    ranks = [tag.word_rank for tag in DEFAULT_TAGS if tag.words]
    assert len(ranks) == len(set(ranks))
    judged = [risk.judged for risk in RISKS if risk.judged is not None]
    assert len(judged) == len(set(judged))


def test_the_rules_and_the_chat_follow_the_taxonomy() -> None:
    # Each PR's label has its rule, found in this order; a week's label is found of its PRs together.
    weekly = tuple(risk.name for risk in RISKS if risk.weekly)
    assert tuple(rules.RISK_RULES) == tuple(label for label in RISK_LABELS if label not in weekly)
    assert weekly == ("review_concentration",)
    assert all(rule.__name__ == label for label, rule in rules.RISK_RULES.items())
    assert {risk.name: risk.weight for risk in RISKS} == rules.RISK_WEIGHT
    assert set(JUDGEMENT_LABELS) < set(RISK_LABELS)
    assert noise.RULES == RISK_LABELS  # what an admin may mute is what the rules find
    assert {tag.story for tag in DEFAULT_TAGS} - {None} <= set(KINDS)


def test_a_titles_first_kind_word_follows_the_word_rank_not_the_report_order() -> None:
    # "add" (feature) comes before "fix" in the title and in the report's order; a fix still names it.
    pr = PullRequest(repo="a/b", number=1, title="Add a guard to fix the crash", author="a", merged_at=_NOW)
    assert tags_for(pr, Taxonomy()) == ["bugfix"]
    # Words of an always-told kind add it beside the kind the title names.
    pr = pr.model_copy(update={"title": "fix: faster loader with a new flag"})
    assert tags_for(pr, Taxonomy()) == ["bugfix", "performance", "configuration"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_tag_and_risk_label_has_its_name(lang: str) -> None:
    for tag in TAGS:
        # Chinese names every built-in tag ("CI" as it is); English shows the tag as the taxonomy writes it.
        name = tag_name(tag, lang)
        assert (_has_cjk(name) or name == "CI") if lang == "zh" else name == tag
    for label in RISK_LABELS:
        name = risk_name(label, lang)
        assert name != label and (_has_cjk(name) == (lang == "zh"))
    # The translations name nothing the taxonomy lacks.
    assert set(TAG_NAMES.get(lang, {})) <= set(TAGS)
    assert set(RISK_NAMES[lang]) <= set(RISK_LABELS)


@pytest.mark.parametrize("lang", LANGS)
def test_the_texts_keyed_by_a_tag_or_label_name_one_of_the_taxonomy(lang: str) -> None:
    t = texts(lang)
    for label in JUDGEMENT_LABELS:
        assert f"cost_{label}" in t  # a story names what a judged risk costs its reader
    for tag in DEFAULT_TAGS:
        if tag.story:
            assert f"story_kind_{tag.story}" in t
    costs = {key.removeprefix("cost_") for key in t if key.startswith("cost_")}
    judged = {key.removeprefix("judge_") for key in t if key.startswith("judge_")}
    assert costs == set(JUDGEMENT_LABELS)
    assert judged - {"mixed"} <= set(TAGS)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("label", RISK_LABELS)
def test_every_risk_label_has_a_recommendation(label: str, lang: str) -> None:
    # One PR carrying the label: the report recommends something for it, in the report's language.
    risk = RiskLabel(label=label, evidence="--old-flag removed", evidence_source="diff")
    analysis = PRAnalysis(repo="a/b", number=3, summary="Fix it.", importance=5, insight=2, risks=[risk])
    obs = RiskObservation(title=label, prs=[3], evidence="", label=label)
    recs = report_builder._recommend(obs, {3: analysis}, texts(lang))
    assert recs and all("#3" in r.text and _has_cjk(r.text) == (lang == "zh") for r in recs)
