"""Chat commands in both languages, through the handlers and through the console chat."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import commit, demo_services, new_repo
from fakes.openai_api import FakeOpenAI, prdigest_answers

from prdigest.config import load_settings
from prdigest.handlers import Context, Services, handle
from prdigest.handlers.commands import COMMANDS
from prdigest.i18n import texts
from prdigest.models import Window
from prdigest.render.markdown import escape
from prdigest.sources.fixture import FixtureSource, demo_fixture_path
from prdigest.sources.git.source import GitSource
from prdigest.sources.registry import source_factory
from prdigest.storage import Store
from prdigest.storage.subscriptions import list_subscriptions

DEMO = FixtureSource(demo_fixture_path())
WEEK = DEMO.window
CONSOLE = Context(platform="console", chat_id="console", user_id="me")
LARK_USER = Context(platform="lark", chat_id="oc_group", user_id="ou_user")
LARK_ADMIN = Context(platform="lark", chat_id="oc_group", user_id="ou_admin")


@pytest.fixture
def svc(demo_store: Store) -> Services:
    return demo_services(load_settings(env={}, overrides={("admins", "lark"): ["ou_admin"]}), demo_store)


def numbers(text: str) -> list[int]:
    import re

    return [int(n) for n in re.findall(r"#(\d+)", text)]


@pytest.mark.parametrize(
    ("text", "lang"),
    [("help", "en"), ("帮助", "zh"), ("", "en"), ("/prdigest help", "en"), ("Hi!", "en"), ("你好", "zh")],
)
def test_help_lists_every_command(svc: Services, text: str, lang: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "help" and reply.lang == lang
    assert len(reply.help) == len(COMMANDS)
    assert ("explain #N" if lang == "en" else "解释 #N") in reply.text


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("show risks", "en"),
        ("@prdigest risks", "en"),
        ("风险", "zh"),
        ("上周风险", "zh"),
        ("last week risks", "en"),
        ("上周有什么风险？", "zh"),
    ],
)
def test_risks_of_last_week(svc: Services, text: str, lang: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "risks" and reply.lang == lang
    assert reply.report is not None and reply.report.window.since == WEEK.since  # last week = the demo week
    labels = {o.label: o.prs for o in reply.risks}
    assert labels["failing_checks"] == [4142] and 4127 in labels["fork_no_bot_review"]
    assert set(numbers(reply.text)) <= {p.number for p in DEMO.prs}
    assert ("Risks in" if lang == "en" else "风险观察") in reply.text


@pytest.mark.parametrize(("text", "count"), [("top 3", 3), ("重点 3", 3), ("top", 5), ("top 999999", 24)])
def test_top_prs(svc: Services, text: str, count: int) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "prs" and len(reply.prs) == count
    scores = [p.importance for p in reply.prs]
    assert scores == sorted(scores, reverse=True)
    # Each line leads with its PR; a summary may cite others after it ("follows #4105").
    leading = [numbers(line)[0] for line in reply.text.splitlines() if numbers(line)]
    assert leading[:count] == [p.number for p in reply.prs]


@pytest.mark.parametrize("text", ["authors", "作者", "上周谁是主要作者？"])
def test_authors(svc: Services, text: str) -> None:
    reply = handle(text, CONSOLE, svc)
    expected = Counter(p.author for p in DEMO.prs)
    assert reply.report is not None and reply.report.stats.authors == dict(expected)
    top_author, n = expected.most_common(1)[0]
    assert f"{top_author}: {n}" in reply.text or f"{top_author}：{n}" in reply.text


@pytest.mark.parametrize("text", ["hot files", "热点文件"])
def test_hot_files(svc: Services, text: str) -> None:
    reply = handle(text, CONSOLE, svc)
    touched = Counter(f.path for p in DEMO.prs for f in p.files or [])
    assert ".github/workflows/ci.yml: 5" in reply.text or ".github/workflows/ci.yml：5" in reply.text
    assert all(escape(path) in reply.text for path, n in touched.items() if n >= 3)


@pytest.mark.parametrize(
    ("text", "since", "until"),
    [
        ("report 2026-09-08..2026-09-09", "2026-09-08", "2026-09-09"),
        ("报告 2026-W37", "2026-09-07", "2026-09-13"),
        ("report last week", "2026-09-07", "2026-09-13"),
    ],
)
def test_ad_hoc_report_covers_the_range(svc: Services, text: str, since: str, until: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "report" and reply.report is not None
    window = Window(since=since, until=until, tz="Asia/Shanghai")
    assert (str(reply.report.window.since), str(reply.report.window.until)) == (since, until)
    assert reply.report.stats.merged_prs == sum(1 for p in DEMO.prs if window.contains(p.merged_at))
    assert reply.text.startswith("# acme-ml/trainer")
    # A report of one Monday-to-Sunday week speaks of the week; of any other period, of the period.
    weekly = since == "2026-09-07" and until == "2026-09-13"
    said = {"zh": ("本周", "本期"), "en": ("This week", "This period")}[reply.lang]
    assert (said[0] in reply.text, said[1] in reply.text) == (weekly, not weekly)


@pytest.mark.parametrize(
    ("text", "lang"),
    [("explain #4131", "en"), ("解释#4131", "zh"), ("explain 4131", "en"), ("why PR#4131", "en")],
)
def test_explain_a_cached_pr(svc: Services, text: str, lang: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "explain" and reply.pr is not None and reply.pr.number == 4131
    assert reply.analysis is not None and {r.label for r in reply.analysis.risks} >= {"unresolved_threads"}
    assert "update\\_lock is held" in reply.text  # the unresolved thread, escaped
    assert escape("trainer/rollout/sglang_engine.py") in reply.text
    assert "https://github.com/acme-ml/trainer/pull/4131" in reply.text
    assert any(r in reply.text for r in reply.analysis.reasons[:1])


@pytest.mark.parametrize(
    ("text", "lang", "example"),
    [
        ("top 3 this week", "en", "`top prs 2026-W37`"),
        ("风险 2026-W30", "zh", "`风险 2026-W37`"),
        ("hot", "en", None),
    ],
)
def test_a_period_without_prs_points_to_the_newest_cached_week(
    svc: Services, text: str, lang: str, example: str | None
) -> None:
    if example is None:  # the default week, on a clock a month after the demo week
        later = svc.clock() + timedelta(days=30)
        svc.clock = lambda: later
    reply = handle(text, CONSOLE, svc)
    assert reply.kind == "text" and reply.lang == lang and not reply.prs
    assert ("No merged PRs of acme-ml/trainer" if lang == "en" else "没有合入的 PR") in reply.text
    assert "2026-09-13" in reply.text  # the newest merge of the demo week
    assert (example or "`hot files 2026-W37`") in reply.text


def test_explain_shows_the_llms_analysis_when_one_is_configured(demo_store: Store) -> None:
    with FakeOpenAI(responder=prdigest_answers) as fake:
        env = {
            "PRDIGEST_LLM_BASE_URL": fake.url,
            "PRDIGEST_LLM_MODEL": "fake-model",
            "PRDIGEST_LLM_API_KEY": fake.key,
        }
        svc = demo_services(load_settings(env=env), demo_store)
        reply = handle("explain #4131", CONSOLE, svc)
        again = handle("explain #4131", CONSOLE, svc)
    assert reply.analysis is not None and reply.analysis.engine == "llm"
    assert "Change 4131 in one line" in reply.text  # as the weekly report would show it
    assert {r.label for r in reply.analysis.risks} >= {"unresolved_threads"}  # the rules' facts stay
    assert again.text == reply.text and fake.calls == 1  # analysed once, then read from the cache


def test_explain_fetches_an_uncached_pr_from_the_clone(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "clone")
    (repo / "a.py").write_text("x = 1\n")
    commit(repo, "fix: old bug (#7)", "2025-01-01T10:00:00+00:00")
    store = Store(tmp_path / "c.db")
    settings = load_settings(env={})
    source = GitSource(repo, repo="acme/app")
    svc = Services(
        settings=settings, store=store, default_repo="acme/app", source_for=source_factory(settings, source)
    )
    reply = handle("explain #7", CONSOLE, svc)
    assert reply.kind == "explain" and reply.pr is not None and reply.pr.title == "fix: old bug"
    assert store.get_pr("acme/app", 7) is not None  # now cached
    missing = handle("explain #8", CONSOLE, svc)
    assert missing.kind == "text" and "the local cache, the git source" in missing.text


def test_explain_without_a_source_says_where_it_looked(svc: Services) -> None:
    svc.source_for = lambda repo: None
    reply = handle("explain #1", CONSOLE, svc)
    assert "#1" in reply.text and "the local cache" in reply.text and "no source" in reply.text


def test_only_admins_change_subscriptions(svc: Services) -> None:
    refused = handle("subscribe acme-ml/trainer", LARK_USER, svc)
    assert refused.kind == "refusal" and list_subscriptions(svc.store) == []
    saved = handle("订阅 acme-ml/trainer 周五 17:00 Europe/Berlin en", LARK_ADMIN, svc)
    assert saved.kind == "subscriptions"
    (sub,) = list_subscriptions(svc.store, "lark", "oc_group")
    assert (sub.day, sub.time, sub.tz, sub.lang, sub.created_by) == (
        "fri",
        "17:00",
        "Europe/Berlin",
        "en",
        "ou_admin",
    )
    # The chat's subscription now sets the repository; a message's own language sets its answer's.
    listing = handle("subscriptions", LARK_USER, svc)
    assert "acme-ml/trainer: every Friday at 17:00 (Europe/Berlin)" in listing.text
    risks = handle("风险", LARK_USER, svc)
    assert (risks.lang, risks.repo) == ("zh", "acme-ml/trainer")
    assert handle("unsubscribe acme-ml/trainer", LARK_USER, svc).kind == "refusal"
    assert "Unsubscribed" in handle("unsubscribe acme-ml/trainer", LARK_ADMIN, svc).text
    assert list_subscriptions(svc.store) == []


def test_a_chat_with_several_repositories_asks_which(svc: Services) -> None:
    handle("subscribe acme-ml/trainer", LARK_ADMIN, svc)
    handle("subscribe acme-ml/other", LARK_ADMIN, svc)
    reply = handle("risks", LARK_USER, svc)
    assert "acme-ml/trainer, acme-ml/other" in reply.text
    assert handle("risks acme-ml/trainer", LARK_USER, svc).kind == "risks"


def test_no_repository_known(svc: Services) -> None:
    svc.default_repo = None
    reply = handle("top", Context(platform="slack", chat_id="C1", user_id="U1"), svc)
    assert "Which repository?" in reply.text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("explain", "name the PR with its number"),
        ("explain #0", "#0 is not a pull request number"),
        ("explain #-1", "#-1 is not a pull request number"),
        ("explain #99999999999", "is not a pull request number"),
        ("report 2026-02-30", "bad date '2026-02-30'"),
        ("report 2026-09-14..2026-09-01", "before it starts"),
        ("report 2026-W60", "I could not read the period '2026-W60': 2026-W60 is not an ISO week"),
        ("报告 2026-W60", "没能读懂时间段「2026-W60」"),
        # A period still ahead is said, never replaced by another.
        ("risks 2026-W50", "the period '2026-W50' (2026-12-07 to 2026-12-13) is in the future"),
        ("风险 2026-W50", "时间段「2026-W50」（2026-12-07 至 2026-12-13）还没到"),
        ("report 9999-12-25..9999-12-31", "bad date '9999-12-25'"),
        ("报告 0001-01-01", "日期「0001-01-01」超出范围"),
        ("报告 2026-09-14..2026-09-01", "结束日期 2026-09-01 早于开始日期 2026-09-14"),
        ("subscribe acme-ml/trainer 25:00", "25:00 is not a time of day"),
        ("rsks", "Did you mean `risks`?"),
        ("解释", "请写明 PR 编号"),
    ],
)
def test_malformed_input_gets_a_helpful_reply(svc: Services, text: str, fragment: str) -> None:
    reply = handle(text, CONSOLE, svc)
    assert reply.kind in ("error", "help")
    assert fragment in reply.text


def test_fuzzed_input_never_breaks_and_writes_nothing(svc: Services) -> None:
    rng = random.Random(2026)
    pieces = [
        "risks",
        "explain",
        "#",
        "#0",
        "#-1",
        "#99999999999",
        "2026-02-30",
        "..",
        "2026-09-14..2026-09-01",
        "'",
        '"',
        "{",
        "}",
        "[",
        "top",
        "报告",
        "解释",
        "😀",
        "שלום",
        "owner/name",
        "W99",
        "--last-week",
        "subscribe",
        "9" * 40,
        "<!channel>",
        "@all",
        "\x00",
        "\u202e",
    ]
    before = (svc.store.count_prs(), len(list_subscriptions(svc.store)))
    inputs = ["x" * 10_000, "😀" * 3000, "explain #" + "9" * 5000]
    inputs += [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    for text in inputs:
        reply = handle(text, LARK_USER, svc)  # a non-admin in a group: nothing may be written
        assert reply.text and reply.text != texts(reply.lang)["error_apology"], (text, reply.text)
        assert "Traceback" not in reply.text
    assert (svc.store.count_prs(), len(list_subscriptions(svc.store))) == before


def test_console_chat_as_a_subprocess(run_cli, tmp_path: Path) -> None:
    lines = "\n".join(
        [
            "help",
            "risks 2026-W37",
            "top 3 2026-W37",
            "解释 #4124",
            "subscribe acme-ml/trainer fri 17:00",
            "subscriptions",
        ]
    )
    result = run_cli("chat", "--fixture", str(demo_fixture_path()), "--lang", "en", stdin=lines)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Risks in acme-ml/trainer (2026-09-07 to 2026-09-13)" in out
    assert "merged with failing checks" in out and "#4142" in out
    assert "The 3 most important PRs of acme-ml/trainer" in out and "#4107" in out
    assert "#4124 refactor(sync)" in out and "large change with little review" in out
    assert "every Friday at 17:00" in out
    assert "Traceback" not in result.stderr


def test_demo_ends_in_the_chat_and_leaves_on_end_of_input(run_cli) -> None:
    result = run_cli("demo", "--lang", "en", stdin="top 2\n")
    assert result.returncode == 0, result.stderr
    assert "acme-ml/trainer weekly report" in result.stdout
    assert "The 2 most important PRs of acme-ml/trainer (2026-09-07 to 2026-09-13)" in result.stdout
    quiet = run_cli("demo", "--no-chat", stdin="top 2\n")
    assert quiet.returncode == 0 and "most important" not in quiet.stdout


def test_console_shows_the_platform_payloads(run_cli) -> None:
    lines = "/cards\nrisks\nexplain #4131\nsubscriptions\n"  # "risks": last week is the fixture's week
    result = run_cli("chat", "--fixture", str(demo_fixture_path()), "--lang", "en", stdin=lines)
    assert result.returncode == 0, result.stderr
    assert '"msg_type": "interactive"' in result.stdout and '"schema": "2.0"' in result.stdout
    assert '"blocks"' in result.stdout and '"msg_type": "text"' in result.stdout


def test_replies_become_cards_within_limits(svc: Services) -> None:
    from prdigest.bot.payloads import lark_payload, slack_payload
    from prdigest.render.lark import lark_request_body_bytes

    for text in ("risks", "top 5", "explain #4124", "help", "report", "subscriptions", "rsks"):
        reply = handle(text, CONSOLE, svc)
        lark, slack = lark_payload(reply), slack_payload(reply)
        if lark["msg_type"] == "interactive":
            assert lark_request_body_bytes(lark["content"]) <= 28_000
        assert slack["text"] and len(slack.get("blocks", [])) <= 50
    assert lark_payload(handle("risks", CONSOLE, svc))["msg_type"] == "interactive"
    assert lark_payload(handle("subscriptions", CONSOLE, svc))["msg_type"] == "text"
