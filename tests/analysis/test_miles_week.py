"""The replayed miles week: the report's figures against a recomputation straight from `git log`."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

SHANGHAI = ZoneInfo("Asia/Shanghai")


def recompute(repo: Path) -> dict:
    """An independent reading of the week: one plain `git log --numstat`, parsed line by line."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--numstat", "--format=@@%cI|%an|%ae|%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    authors: Counter[str] = Counter()
    per_day: Counter[str] = Counter()
    touched: dict[str, set[int]] = defaultdict(set)
    number = None
    for line in out.splitlines():
        if line.startswith("@@"):
            committed, name, email, subject = line[2:].split("|", 3)
            day = datetime.fromisoformat(committed).astimezone(SHANGHAI).date()
            match = re.search(r"\(#(\d+)\)$", subject)
            number = None
            if "2026-08-10" <= day.isoformat() <= "2026-08-16" and match:
                number = int(match.group(1))
                login = (
                    email.split("@")[0].split("+")[-1] if email.endswith("users.noreply.github.com") else name
                )
                authors[login] += 1
                per_day[day.isoformat()] += 1
        elif line.strip() and number is not None:
            touched[line.split("\t")[2]].add(number)
    hot = {path: sorted(nums) for path, nums in touched.items() if len(nums) >= 3}
    return {"authors": dict(authors), "per_day": dict(per_day), "hot": hot, "count": sum(authors.values())}


def test_miles_week_figures_equal_git_log(miles_repo: Path, run_cli) -> None:
    result = run_cli(
        "report",
        "--git",
        str(miles_repo),
        "--since",
        "2026-08-10",
        "--until",
        "2026-08-16",
        "--tz",
        "Asia/Shanghai",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # stdout carries the report and nothing else
    expected = recompute(miles_repo)
    stats = report["stats"]
    assert stats["merged_prs"] == expected["count"] == 93
    assert stats["direct_pushes"] == 0
    assert stats["authors"] == expected["authors"]
    assert {k: v for k, v in stats["per_day"].items() if v} == expected["per_day"]
    assert len(stats["per_day"]) == 7
    assert {h["path"]: h["prs"] for h in stats["hot_files"]} == expected["hot"]
    assert len(report["prs"]) == 93
    assert report["window"] == {"since": "2026-08-10", "until": "2026-08-16", "tz": "Asia/Shanghai"}
    # A clone supplies no reviews, labels, forks or checks: the report says so.
    assert {"reviews", "labels", "is_fork", "checks"} <= set(report["unavailable"])


def test_json_contract_keys(miles_repo: Path, run_cli) -> None:
    result = run_cli("report", "--git", str(miles_repo), "--week", "2026-W33", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    for key in (
        "repo",
        "window",
        "engine",
        "stats",
        "prs",
        "themes",
        "risk_observations",
        "recommendations",
        "unavailable",
    ):
        assert key in report, key
    for key in (
        "merged_prs",
        "key_prs",
        "avg_importance",
        "avg_insight",
        "tags",
        "authors",
        "hot_files",
        "risks",
        "per_day",
    ):
        assert key in report["stats"], key
    pr = report["prs"][0]
    for key in (
        "number",
        "title",
        "author",
        "summary",
        "importance",
        "insight",
        "tags",
        "risks",
        "key",
        "related",
    ):
        assert key in pr, key
    assert report["repo"] == "local/miles"
