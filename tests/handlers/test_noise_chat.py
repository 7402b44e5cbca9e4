"""mute, unmute, dismiss from chat: one subscription's reports lose a rule, one PR loses a label; admins."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import demo_monday_after, demo_services, demo_source
from fakes.openai_api import Request, analysis_json, pr_number, prdigest_answers
from test_delivery import Recorder

from prdigest.bot.delivery import deliver_subscription
from prdigest.config import LLMSettings, load_settings
from prdigest.config.models import AdminSettings
from prdigest.handlers import Context, handle
from prdigest.handlers.understand import understand
from prdigest.pipeline.single import make_report
from prdigest.storage import Store
from prdigest.storage.subscriptions import list_subscriptions, save_subscription
from prdigest.subscription import Subscription

DEMO = demo_source()
ADMIN = Context(platform="slack", chat_id="C1", user_id="U-admin")
WATCH_NO_TESTS = "no test pins the new behaviour"  # the rules' reviewer point drawn from no_tests


def _settings():
    return load_settings(env={}).model_copy(update={"admins": AdminSettings(slack=["U-admin"])})


def _subscribe(store: Store, chat: str) -> Subscription:
    return save_subscription(store, Subscription(platform="slack", chat_id=chat, repo=DEMO.repo, lang="en"))


def _say(store: Store, text: str, ctx: Context = ADMIN):
    return handle(text, ctx, demo_services(_settings(), store))


def test_a_mute_leaves_the_rule_out_of_that_subscriptions_next_report_only(demo_store: Store) -> None:
    muted, other = _subscribe(demo_store, "C1"), _subscribe(demo_store, "C2")
    reply = _say(demo_store, "mute no_tests")
    assert reply.kind == "subscriptions" and "no_tests" in reply.text
    (muted,) = list_subscriptions(demo_store, "slack", "C1")
    assert muted.muted == ["no_tests"]
    slack = Recorder()
    quiet = deliver_subscription(_settings(), demo_store, muted, {"slack": slack}, now=demo_monday_after())
    loud = deliver_subscription(_settings(), demo_store, other, {"slack": slack}, now=demo_monday_after())
    assert quiet.report is not None and loud.report is not None
    assert (
        "no_tests" not in quiet.report.model_dump_json()
        and WATCH_NO_TESTS not in quiet.report.model_dump_json()
    )
    assert "no_tests" not in {o.label for o in quiet.report.risk_observations}
    assert loud.report.stats.risks["no_tests"] == 2 and "no_tests" in {
        o.label for o in loud.report.risk_observations
    }
    assert {p.number for p in loud.report.prs if "no_tests" in p.risks} == {4108, 4133}
    # The rest of the muted report is the other's: the same PRs, the other labels counted alike.
    assert quiet.report.stats.merged_prs == loud.report.stats.merged_prs == 30
    assert quiet.report.stats.risks == {k: v for k, v in loud.report.stats.risks.items() if k != "no_tests"}
    # Subscribing again (another day) keeps the mute.
    _say(demo_store, f"subscribe {DEMO.repo} fri 10:00")
    (again,) = list_subscriptions(demo_store, "slack", "C1")
    assert (again.day, again.time, again.muted) == ("fri", "10:00", ["no_tests"])
    assert "no_tests" in _say(demo_store, "unmute no_tests").text
    assert list_subscriptions(demo_store, "slack", "C1")[0].muted == []


def test_non_admins_are_refused_and_nothing_changes(demo_store: Store) -> None:
    _subscribe(demo_store, "C1")
    stranger = ADMIN.model_copy(update={"user_id": "U-someone"})
    for text in ("mute no_tests", "静音 no_tests", "dismiss #4108 no_tests", "忽略 #4108 no_tests"):
        assert _say(demo_store, text, stranger).kind == "refusal"
    assert list_subscriptions(demo_store)[0].muted == []
    assert _report(demo_store).dismissed == []


def test_unknown_rules_several_subscriptions_and_none_get_clear_answers(demo_store: Store) -> None:
    assert "subscribe" in _say(demo_store, "mute no_tests").text  # no subscription yet
    _subscribe(demo_store, "C1")
    save_subscription(demo_store, Subscription(platform="slack", chat_id="C1", repo="other/repo"))
    unknown = _say(demo_store, "mute no_test")
    assert "named no_test." in unknown.text and "no_tests" in unknown.text and "core_path" in unknown.text
    several = _say(demo_store, "静音 no_tests")
    assert "other/repo" in several.text and list_subscriptions(demo_store)[0].muted == []
    named = _say(demo_store, f"静音 no_tests {DEMO.repo}")
    assert "已静音" in named.text
    assert [s.muted for s in list_subscriptions(demo_store)] == [["no_tests"], []]


def _report(store: Store):
    return make_report(_settings(), store, None, DEMO.window, repo=DEMO.repo, lang="en", save=False)


def test_a_dismissal_takes_one_prs_label_off_and_survives_a_restart(
    demo_store: Store, tmp_path: Path
) -> None:
    _subscribe(demo_store, "C1")
    reply = _say(demo_store, "dismiss #4108 no_tests")
    assert "4108" in reply.text and "no_tests" in reply.text
    db = tmp_path / "demo.db"
    demo_store.close()
    again = Store(db)  # a restart: a new store on the same file
    try:
        report = _report(again)
        (dismissal,) = report.dismissed
        assert (dismissal.number, dismissal.label, dismissal.by) == (4108, "no_tests", "U-admin")
        assert {p.number for p in report.prs if "no_tests" in p.risks} == {4133}  # the other PR keeps it
        assert report.stats.risks["no_tests"] == 1
        assert "4108" not in str(next(o.prs for o in report.risk_observations if o.label == "no_tests"))
        assert "4108" in _say(again, "undismiss #4108 no_tests").text
        assert _report(again).stats.risks["no_tests"] == 2
    finally:
        again.close()


@pytest.mark.parametrize(
    ("text", "answer"),
    [("dismiss #99999 no_tests", "no PR #99999"), ("dismiss #4102 security_sensitive", "does not carry"),
     ("dismiss no_tests", "Which PR"), ("忽略 #4102 no_tests", "没有 no_tests")],
)  # fmt: skip
def test_a_dismissal_of_a_pr_or_label_the_cache_does_not_hold_is_refused(
    demo_store: Store, text: str, answer: str
) -> None:
    _subscribe(demo_store, "C1")
    assert answer in _say(demo_store, text).text
    assert _report(demo_store).dismissed == []


@pytest.mark.parametrize(
    ("text", "command"),
    [("mute no_tests", "mute"), ("unmute no_tests", "unmute"), ("静音 no_tests", "mute"),
     ("取消静音 no_tests", "unmute"), ("dismiss #12 no_tests", "dismiss"), ("忽略 #12 no_tests", "dismiss"),
     ("undismiss #12 no_tests", "undismiss"), ("取消忽略 #12 no_tests", "undismiss"),
     ("preview acme/x", "preview"), ("预览 acme/x", "preview"), ("risks with no tests", "risks"),
     ("explain #12", "explain")],
)  # fmt: skip
def test_the_noise_commands_are_read_from_their_leading_word(text: str, command: str) -> None:
    intent = understand(text)
    assert intent.command == command
    assert intent.pr == (12 if "#12" in text else None)  # dismiss names its PR as explain does


def test_the_chats_risks_answer_follows_a_dismissal_at_once(demo_store: Store) -> None:
    _subscribe(demo_store, "C1")
    svc = demo_services(_settings(), demo_store)  # one session: its week's report is memoised

    def no_tests_prs() -> list[int]:
        return next(o.prs for o in handle("risks", ADMIN, svc).risks if o.label == "no_tests")

    assert no_tests_prs() == [4108, 4133]
    assert handle("risks", ADMIN, svc).report is handle("risks", ADMIN, svc).report  # from the memo
    handle("dismiss #4108 no_tests", ADMIN, svc)
    assert no_tests_prs() == [4133]
    handle("undismiss #4108 no_tests", ADMIN, svc)
    assert no_tests_prs() == [4108, 4133]


def test_a_label_only_the_llm_gave_can_be_dismissed(demo_store: Store, serve) -> None:
    target = DEMO.prs[0]
    assert target.number is not None

    def answers(request: Request) -> str:  # the model finds a regression in one PR, quoting its title
        if "<untrusted_pr_data>" in request.user and pr_number(request) == target.number:
            risk = {"label": "perf_regression", "evidence": target.title, "evidence_source": "title"}
            return analysis_json(target.number, risks=[risk])
        return prdigest_answers(request)

    fake = serve(responder=answers)
    llm = LLMSettings(base_url=fake.url, api_key=fake.key, model="fake-model", timeout=5, max_retries=0)
    settings = _settings().model_copy(update={"llm": llm})
    _subscribe(demo_store, "C1")
    svc = demo_services(settings, demo_store)
    week = DEMO.window
    assert week is not None
    shown = make_report(settings, demo_store, DEMO, week, lang="en", save=False)
    assert "perf_regression" in next(p.risks for p in shown.prs if p.number == target.number)
    reply = handle(f"dismiss #{target.number} perf_regression", ADMIN, svc)
    assert "perf_regression" in reply.text
    after = make_report(settings, demo_store, DEMO, week, lang="en", save=False)
    assert "perf_regression" not in next(p.risks for p in after.prs if p.number == target.number)
    assert [(d.number, d.label, d.by) for d in after.dismissed] == [
        (target.number, "perf_regression", "U-admin")
    ]
