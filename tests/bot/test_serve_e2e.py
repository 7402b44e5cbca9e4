"""`prdigest serve` end to end, as a child process against a local GitHub, LLM, Lark and Slack.

Two subscriptions whose weekly time passed five minutes ago (each in its own timezone) are
delivered by the catch-up at start: one card in the Lark group, one in the Slack channel. A chat
command through each platform is answered in its thread. SIGTERM then stops the process cleanly.
Run with both platforms on their default transports (Lark's long connection, Slack's Socket Mode)
and on HTTP events posted to the served web app.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fakes.github_api import FakeGitHub, FakeRepo, iter_prs
from fakes.lark_api import FakeLark
from fakes.openai_api import FakeOpenAI, prdigest_answers
from fakes.slack_api import FakeSlack, event_callback, event_id, mention, post, signed_event
from serve_support import (
    Served,
    add_week,
    github_env,
    lark_env,
    lark_weekly,
    llm_env,
    serving,
    slack_env,
    slack_weekly,
    write_config,
)

from prdigest.clock import utc_now
from prdigest.models import Window
from prdigest.periods import last_complete_week
from prdigest.subscription import WEEKDAYS

pytestmark = pytest.mark.e2e  # `prdigest serve` as a child process against local fakes

PRS = 40
# (platform, chat, repository, timezone): one subscription each.
SUBSCRIPTIONS = [
    ("lark", "oc_e2e_team", "acme/rocket", "Asia/Shanghai"),
    ("slack", "C0E2E", "acme/probe", "America/New_York"),
]


def just_past(tz: str, minutes: int = 5) -> datetime:
    """A fire time ``minutes`` ago, to the minute, in ``tz``: the catch-up at start delivers it."""
    return (utc_now() - timedelta(minutes=minutes)).astimezone(ZoneInfo(tz)).replace(second=0, microsecond=0)


@pytest.fixture(scope="module")
def fires() -> dict[str, datetime]:
    return {platform: just_past(tz) for platform, _, _, tz in SUBSCRIPTIONS}


@pytest.fixture(scope="module")
def github(fires: dict[str, datetime]) -> Iterator[FakeGitHub]:
    """Each repository with 40 PRs in the week its subscription reports."""
    with FakeGitHub() as fake:
        for seed, (platform, _, repo, tz) in enumerate(SUBSCRIPTIONS, start=1):
            add_week(fake, repo, last_complete_week(fires[platform], tz), PRS, seed=seed * 10)
        yield fake


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI("strict", responder=prdigest_answers) as fake:
        yield fake


def week_numbers(repo: FakeRepo, window: Window) -> set[int]:
    return {pr.number for pr in iter_prs(repo, window.start, window.end)}


def ask_slack(served: Served, slack: FakeSlack, mode: str, text: str, channel: str) -> str:
    """An @mention in the channel, as Slack sends it in this mode; the text of the answer in its thread."""
    ts = f"{time.time():.6f}"
    body = event_callback(mention(text, channel=channel, ts=ts), event_id())
    if mode == "socket":
        slack.wait_connected(timeout=20)
        slack.wait_ack(slack.send_event(body))
    else:
        status, _ = post(f"{served.address}/slack/events", signed_event(body))
        assert status == 200
    answer = slack.wait_for(lambda: slack.in_thread(channel, ts), timeout=30)
    return answer[-1].all_text


def ask_lark(served: Served, lark: FakeLark, mode: str, text: str, chat_id: str) -> str:
    """A group message mentioning the bot, over the long connection or HTTP; the answer's content."""
    payload = lark.message_event(text, chat_id=chat_id)
    if mode == "ws":
        lark.ws.wait_connected()
        assert lark.push(payload).code == 200
    else:
        status, _ = lark.post_event(f"{served.address}/lark/events", payload)
        assert status == 200
    answer = lark.wait_for(lambda m: m.uuid == f"{payload['header']['event_id']}:answer", timeout=30)
    assert answer.reply_to == payload["event"]["message"]["message_id"]
    return answer.text


def delivered(served: Served, lark: FakeLark, lark_chat: str, slack: FakeSlack, channel: str) -> bool:
    """Both weekly cards are out; a failed delivery fails at once instead of waiting out the time."""
    assert not re.search(r"ERROR prdigest\.scheduler: weekly report .* failed", served.text()), (
        "a delivery failed"
    )
    return bool(lark_weekly(lark, lark_chat) and slack_weekly(slack, channel))


def cited(answer: str, numbers: set[int]) -> set[int]:
    """The PRs of ``numbers`` an answer names (#N; not the HTML entities of Lark markdown, &#40;)."""
    return numbers & {int(n) for n in re.findall(r"(?<!&)#(\d+)", answer)}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("lark_mode", "slack_mode", "engine"),
    [
        ("ws", "socket", "rules"),
        ("http", "http", "rules"),
        ("ws", "socket", "llm"),
    ],
)  # fmt: skip
def test_serve_delivers_both_weekly_cards_once_answers_both_chats_and_stops_on_sigterm(
    lark_mode: str,
    slack_mode: str,
    engine: str,
    fires: dict[str, datetime],
    github: FakeGitHub,
    llm: FakeOpenAI,
    lark: FakeLark,
    slack: FakeSlack,
    tmp_path: Path,
) -> None:
    subs = [
        {"platform": p, "chat_id": chat, "repo": repo, "tz": tz, "lang": "en",
         "day": WEEKDAYS[fires[p].weekday()], "time": fires[p].strftime("%H:%M")}
        for p, chat, repo, tz in SUBSCRIPTIONS
    ]  # fmt: skip
    config = write_config(tmp_path / "prdigest.toml", subs, web={"host": "127.0.0.1", "port": 0})
    env = {**os.environ, **github_env(github), **lark_env(lark, lark_mode), **slack_env(slack, slack_mode)}
    if engine == "llm":
        env.update(llm_env(llm))
    llm_calls = llm.calls
    command = [sys.executable, "-m", "prdigest.cli", "serve", "--config", str(config)]
    (_, lark_chat, lark_repo, lark_tz), (_, channel, slack_repo, slack_tz) = SUBSCRIPTIONS
    with serving(command, env, tmp_path / "serve.log") as served:
        assert served.get("/healthz") == (200, b"ok\n")
        served.wait_for(lambda: delivered(served, lark, lark_chat, slack, channel), 60, "both weekly cards")
        log = served.wait_log("weekly report prdigest:2:", 30)
        # A line per delivery, with its chat and time, as the README says.
        for key, chat in ((1, f"lark:{lark_chat}"), (2, f"slack:{channel}")):
            line = rf"weekly report prdigest:{key}:\S+: posted.* to {chat} in \d+ ms"
            assert re.search(line, log), log[-3000:]
        (card,) = lark_weekly(lark, lark_chat)
        (message,) = slack_weekly(slack, channel)
        # The figure, with the change against the earlier weeks after it when there were any.
        assert f"{lark_repo} · " in card.text and f"Merged PRs</font>\\n**{PRS}" in card.text
        assert f"{slack_repo} · " in message.text and f"*Merged PRs*\n{PRS}" in message.all_text
        # The details in each card's thread, each reply with its own key.
        lark_thread = [m.uuid or "" for m in lark.messages if m.reply_to == card.message_id]
        slack_thread = [m.metadata["event_payload"]["key"] for m in slack.in_thread(channel, message.ts)]
        for thread in (lark_thread, slack_thread):
            assert thread and all(re.fullmatch(r"prdigest:\d:\S+:thread:\d+", k) for k in thread), thread
        # The LLM engine wrote them (one analysis per PR, at least), or it was not asked at all.
        assert llm.calls - llm_calls >= 2 * PRS if engine == "llm" else llm.calls == llm_calls

        # "top 3" in each chat: the three most important PRs of the week just reported, in the thread.
        answer = ask_lark(served, lark, lark_mode, "top 3", lark_chat)
        week = week_numbers(github.repos[lark_repo], last_complete_week(fires["lark"], lark_tz))
        assert lark_repo in answer and len(cited(answer, week)) == 3, answer
        answer = ask_slack(served, slack, slack_mode, "top 3", channel)
        week = week_numbers(github.repos[slack_repo], last_complete_week(fires["slack"], slack_tz))
        assert slack_repo in answer and len(cited(answer, week)) == 3, answer

        assert served.terminate(timeout=15) == 0, served.text()[-3000:]
    # Nothing more went out while stopping: one card each.
    assert len(lark_weekly(lark, lark_chat)) == 1 and len(slack_weekly(slack, channel)) == 1
    assert "Traceback" not in served.text(), served.text()[-3000:]
