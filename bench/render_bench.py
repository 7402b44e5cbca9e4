"""Render benchmark: prints one `name=value` line per figure.

    python bench/render_bench.py [--runs 5] [--shared ../shared] [--shots DIR]

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

For the report page of a real week, miles 2026-08-10..16 (93 PRs: the shared data's bundle cloned, then
`prdigest report --format html` on a fresh database, no tokens), in headless Chromium 390 x 844:

  page_phone_px_93       the page's full height, px (<= 8000)
  page_first_screen_has  1 when the risk level, the merged-PR and key-PR tiles and the first story's title
                         all lie within the first 844 px, else 0 (the lesser of the two languages) (1)

With --shots DIR, full-page screenshots of that page 390 and 1280 px wide go to DIR (page_<lang>_<width>.png).
Size figures are the larger of the two languages.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the shared test helpers (chromium_support)
sys.path.insert(0, str(ROOT / "tests" / "render"))  # the render tests: a team digest, the first screen

from chromium_support import (  # noqa: E402
    DESKTOP,
    PHONE,
    chromium,
    full_page_screenshot,
    open_page,
    page_heights,
    page_size,
)
from test_render_page_phone import below_first_screen  # noqa: E402
from test_render_support import REPORT_URL, scaled_prs, week_report  # noqa: E402
from test_render_team import team_report  # noqa: E402

from prdigest.models import Report  # noqa: E402
from prdigest.render.html import render_html  # noqa: E402
from prdigest.render.lark import lark_request_body_bytes, render_lark_card  # noqa: E402
from prdigest.render.preview import lark_preview, preview_page, slack_preview  # noqa: E402
from prdigest.render.slack import render_slack_message, slack_message_chars  # noqa: E402

SIZES = (40, 400, 2000)
TEAMS = (3, 12)
MILES_WEEK = ("2026-08-10", "2026-08-16")


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


def miles_pages(shared: Path, workdir: Path) -> dict[str, Path]:
    """The page of the real miles week in each language, as `prdigest report` writes it from a clone of
    the bundle; {} without the bundle."""
    bundle = shared / "data" / "radixark__miles.bundle"
    if not bundle.exists():
        print(f"# {bundle} is not here: no page_* figures", file=sys.stderr)
        return {}
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "GITHUB_", "OPENAI_", "GIT_"))
    }
    clone = workdir / "miles"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True, env=env)
    pages = {}
    for lang in ("zh", "en"):
        pages[lang] = workdir / f"miles-{lang}.html"
        subprocess.run(
            [sys.executable, "-m", "prdigest.cli", "report", "--git", str(clone), "--repo", "radixark/miles",
             "--since", MILES_WEEK[0], "--until", MILES_WEEK[1], "--lang", lang, "--format", "html",
             "--out", str(pages[lang]), "--db", str(workdir / f"{lang}.db")],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    return pages


def page_figures(pages: dict[str, Path], workdir: Path, shots: Path | None) -> None:
    """page_phone_px_93 and page_first_screen_has of ``pages``; with ``shots``, their screenshots there."""
    heights, first = [], []
    with chromium(workdir / "profile") as devtools:
        for lang, page in pages.items():
            phone = open_page(devtools, page.as_uri(), PHONE)
            first.append(not below_first_screen(devtools, phone))
            heights.append(page_size(devtools, phone)[1])
            if shots is not None:
                shots.mkdir(parents=True, exist_ok=True)
                full_page_screenshot(devtools, phone, shots / f"page_{lang}_390.png")
                desktop = open_page(devtools, page.as_uri(), DESKTOP)
                tall = full_page_screenshot(devtools, desktop, shots / f"page_{lang}_1280.png")[1]
                print(f"# {lang}: {heights[-1]} px tall at 390 px, {tall} px at 1280 px", file=sys.stderr)
    print(f"page_phone_px_93={max(heights)}")
    print(f"page_first_screen_has={int(all(first))}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument(
        "--shots", type=Path, help="where to write full-page screenshots of the real week's page"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prdigest-render-bench-") as name:
        pages = miles_pages(args.shared, Path(name))
        if pages:
            page_figures(pages, Path(name), args.shots)
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
