"""Render benchmark: prints one `name=value` line per figure.

    python bench/render_bench.py [--runs 5]

For weeks of N = 40, 400 and 2,000 PRs (the demo week's PRs cycled over the same seven days,
the reports built as the render tests build them), in zh and en, with a public report URL:

  lark_body_bytes_N  Lark im.v1 request body of the report card, as lark-oapi sends it (<= 28000)
  slack_blocks_N     blocks of the Slack report message (<= 50)
  slack_chars_N      characters of text in that message (< 12000)
  render_ms_N        Lark card + Slack message + HTML page for the zh report, median of runs (2000: < 500)
  card_phone_px_N    height of the Lark card and of the Slack message as prdigest's preview shows them
                     in headless Chromium 390 px wide, the larger of the two (<= 1400)
  card_phone_px_team_R  the same for a team digest of R = 3 and 12 repositories (tests/test_render_team.py
                     builds them: 1 to 40 PRs each) (<= 1400)

Size figures are the larger of the two languages.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the shared test helpers (chromium_support)
sys.path.insert(0, str(ROOT / "tests" / "render"))  # the render tests' week builder

from chromium_support import page_heights  # noqa: E402
from test_render_support import REPORT_URL, scaled_prs, week_report  # noqa: E402
from test_render_team import team_report  # noqa: E402

from prdigest.models import Report  # noqa: E402
from prdigest.render.html import render_html  # noqa: E402
from prdigest.render.lark import lark_request_body_bytes, render_lark_card  # noqa: E402
from prdigest.render.preview import lark_preview, preview_page, slack_preview  # noqa: E402
from prdigest.render.slack import render_slack_message, slack_message_chars  # noqa: E402

SIZES = (40, 400, 2000)
TEAMS = (3, 12)


def render_all(report: Report) -> tuple[dict, dict, str]:
    return render_lark_card(report, REPORT_URL), render_slack_message(report, REPORT_URL), render_html(report)


def render_ms(report: Report, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        render_all(report)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def phone_px(outputs: list[tuple[dict, dict, str]]) -> float:
    """The tallest card or message of ``outputs`` in the preview, 390 px wide."""
    pages = [preview_page(lark_preview(card)) for card, _, _ in outputs]
    pages += [preview_page(slack_preview(message)) for _, message, _ in outputs]
    with tempfile.TemporaryDirectory() as workdir:
        return max(page_heights(pages, Path(workdir), ".lark, .slack"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for size in SIZES:
        prs = scaled_prs(size)
        reports = {lang: week_report(prs, lang) for lang in ("zh", "en")}
        outputs = [render_all(r) for r in reports.values()]
        print(f"lark_body_bytes_{size}={max(lark_request_body_bytes(card) for card, _, _ in outputs)}")
        print(f"slack_blocks_{size}={max(len(message['blocks']) for _, message, _ in outputs)}")
        print(f"slack_chars_{size}={max(slack_message_chars(message) for _, message, _ in outputs)}")
        print(f"render_ms_{size}={render_ms(reports['zh'], args.runs):.1f}")
        print(f"card_phone_px_{size}={phone_px(outputs):.0f}", flush=True)
    for repos in TEAMS:
        outputs = [render_all(team_report(repos, lang)) for lang in ("zh", "en")]
        print(f"card_phone_px_team_{repos}={phone_px(outputs):.0f}", flush=True)


if __name__ == "__main__":
    main()
