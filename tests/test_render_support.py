"""For the renderer tests and bench/render_bench.py: reports (the demo week, scaled weeks, a hostile
week) and the checkers of each platform's rules (Lark's documented card schema, Slack's limits).

Not a test module of its own; the render tests import it (`from test_render_support import ...`).
Reports are built with `build_report` and the rules engine directly, without the cache,
so that a 2,000-PR week takes about a second.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta

import pytest
from slack_sdk.models.blocks import Block

from prdigest.analysis import rules
from prdigest.analysis.report import build_report
from prdigest.config import load_settings
from prdigest.models import LANGS, FileChange, PeriodFigures, PullRequest, Report, ReviewThread, Theme
from prdigest.render.slack import slack_message_chars
from prdigest.sources.fixture import FixtureSource, demo_fixture_path

SIZES = (0, 1, 40, 400, 2000)

REPORT_URL = "https://reports.example.com/acme-ml/trainer/2026-W37.html"

# Each would be live markup, a mention or a link somewhere if it were not neutralised.
HOSTILE = (
    "<!channel>",
    '<at user_id="all"></at>',
    "<at id=all></at>",
    "@all",
    "@here",
    "@channel",
    "<@U123>",
    "<!here>",
    "[x](https://evil.example)",
    "www.evil.example javascript:alert(1)",
    "![i](https://evil.example/x.png)",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "*bold* _it_ ~s~ `code`",
    "x` <b>out of a code span</b> `y",
    '"\'"}{]]}',
    "${x} {{y}} </font>",
    "\u202eevil\u202c مرحبا بالعالم",
    "🚀👩🏽‍💻🎉",
)
HOSTILE_TEXT = " ".join(HOSTILE)
LONG_TITLE = ("fix " + HOSTILE_TEXT + " ") * 60  # about 10,000 characters


def demo_source() -> FixtureSource:
    return FixtureSource(demo_fixture_path())


def scaled_prs(count: int) -> list[PullRequest]:
    """The demo week's PRs cycled to `count`, renumbered, spread evenly over the same seven days."""
    source = demo_source()
    assert source.window is not None
    span = timedelta(days=7) - timedelta(hours=1)
    out = []
    for i in range(count):
        number = 10_000 + i
        out.append(
            source.prs[i % len(source.prs)].model_copy(
                update={
                    "number": number,
                    "url": f"https://github.com/{source.repo}/pull/{number}",
                    "merged_at": source.window.start + timedelta(minutes=30) + span * (i / count),
                }
            )
        )
    return out


def week_report(prs: list[PullRequest], lang: str, *, history: bool = True) -> Report:
    """The report of the demo window over `prs`, with four earlier weeks for the trend chart."""
    source = demo_source()
    window = source.window
    assert window is not None
    settings = load_settings(env={})
    taxonomy = settings.repo(source.repo).taxonomy
    analyses = {p.number: rules.analyse(p, taxonomy, lang) for p in prs if p.number}
    report = build_report(
        source.repo,
        window,
        prs,
        source="fixture",
        unavailable=source.unavailable,
        settings=settings.report,
        analyses=analyses,
        taxonomy=taxonomy,
        lang=lang,
    )
    if history:
        report.history = [
            PeriodFigures(
                unit="week",
                current=k == 0,
                since=window.since - timedelta(days=7 * k),
                until=window.until - timedelta(days=7 * k),
                merged_prs=18 + 4 * k,
                additions=1000 * k,
                deletions=300 * k,
                authors=5 + k,
            )
            for k in range(4, -1, -1)
        ]
    return report


def markdown_shown(markdown: str) -> str:
    """The Markdown with each PR link as the "#N" a reader sees."""
    return re.sub(r"\[(#\d+)\]\(https://[^)\s]+/pull/\d+\)", r"\1", markdown)


def demo_report(lang: str) -> Report:
    return week_report(demo_source().prs, lang)


# Fixtures the render tests share (each imports the ones it uses).


@pytest.fixture(
    scope="module", params=[(n, lang) for n in SIZES for lang in LANGS], ids=lambda p: f"{p[0]}-{p[1]}"
)
def week(request: pytest.FixtureRequest) -> Report:
    """A generated week of each size, in each language."""
    count, lang = request.param
    return week_report(scaled_prs(count), lang)


@pytest.fixture(scope="module", params=LANGS)
def demo(request: pytest.FixtureRequest) -> Report:
    """The demo week's report, in each language."""
    return demo_report(request.param)


def hostile_report(lang: str) -> Report:
    """The demo week with hostile titles, bodies, authors, paths and review text, and hostile
    "LLM" prose in every narrative field."""
    prs = []
    for i, pr in enumerate(demo_source().prs):
        files = [replace(f, path=f"{f.path}/{HOSTILE[i % len(HOSTILE)]}") for f in pr.files or []]
        files.append(
            FileChange(path=f"tests/{HOSTILE[(i + 1) % len(HOSTILE)]}.py", additions=0, deletions=40)
        )
        files.append(FileChange(path=f"docs/{HOSTILE_TEXT}.md", additions=1, deletions=1))  # a hot file
        prs.append(
            pr.model_copy(
                update={
                    "title": LONG_TITLE if i == 0 else f"feat: {HOSTILE[i % len(HOSTILE)]} {HOSTILE_TEXT}",
                    "body": f"BREAKING CHANGE: {HOSTILE_TEXT}\nConfirmed regression: {HOSTILE_TEXT}",
                    "author": HOSTILE[(i + 2) % len(HOSTILE)],
                    "labels": [HOSTILE[(i + 3) % len(HOSTILE)]],
                    "files": files,
                    "review_threads": [ReviewThread(is_resolved=False, body=HOSTILE_TEXT, path=HOSTILE_TEXT)],
                }
            )
        )
    report = week_report(prs, lang)
    report.summary = HOSTILE_TEXT
    report.warnings = [HOSTILE_TEXT]
    report.themes = [
        Theme(title=HOSTILE_TEXT, prs=th.prs, story=f"{HOSTILE_TEXT} #{th.prs[0]}", trend=HOSTILE_TEXT)
        for th in report.themes
    ] or [Theme(title=HOSTILE_TEXT, prs=[prs[0].number or 0], story=HOSTILE_TEXT, trend=HOSTILE_TEXT)]
    for obs in report.risk_observations:
        obs.title = HOSTILE_TEXT
    for rec in report.recommendations:
        rec.text = HOSTILE_TEXT
    for p in report.prs:
        p.summary = HOSTILE_TEXT
        p.watch = [HOSTILE_TEXT]
    # Only https URLs of the PRs themselves may become links.
    report.prs[1].url = "javascript:alert(1)"
    report.prs[2].url = "http://evil.example/pull/1"
    report.prs[3].url = "https://evil.example/x)<at id=all></at>"
    return report


# --- Lark: what a card JSON 2.0 accepts (Feishu's card documentation, see render/lark.py), and no more ---


def _words(text: str) -> set[str]:
    return set(text.split())


# Per component, the properties §1-2 of the notes list for it.
_COMMON = _words("tag element_id margin")
_LAYOUT = _words("direction padding horizontal_spacing vertical_spacing horizontal_align vertical_align")
LARK_COMPONENTS: dict[str, set[str]] = {
    "markdown": _COMMON | _words("content text_size text_align icon i18n_content"),
    "div": _COMMON | _words("width text icon fields"),
    "hr": _COMMON,
    "column_set": _COMMON
    | _words("columns flex_mode horizontal_spacing horizontal_align background_style action"),
    "column": _COMMON | _LAYOUT | _words("elements width weight background_style action"),
    "table": _COMMON
    | _words("columns rows page_size row_height row_max_height freeze_first_column header_style"),
    "chart": _COMMON | _words("chart_spec aspect_ratio color_theme preview height"),
    "button": _COMMON
    | _words("text type size width icon hover_tips disabled disabled_tips confirm behaviors"),
}
LARK_TOP = _words("schema config card_link header body")
LARK_CONFIG = _words(
    "streaming_mode streaming_config summary locales enable_forward update_multi width_mode "
    "use_custom_translation enable_forward_interaction style"
)
LARK_HEADER = _words("title subtitle text_tag_list i18n_text_tag_list template icon padding")
LARK_BODY = _LAYOUT | {"elements"}
LARK_TEXT = _words("tag content i18n_content")
LARK_TEMPLATES = _words(
    "blue wathet turquoise green yellow orange red carmine violet purple indigo grey default"
)
LARK_TAG_COLOURS = _words(
    "neutral blue turquoise lime orange violet indigo wathet green yellow red purple carmine"
)
LARK_BUTTON_TYPES = _words(
    "default primary danger text primary_text danger_text primary_filled danger_filled laser"
)
LARK_TABLE_COLUMN = _words(
    "name display_name width vertical_align horizontal_align data_type format date_format"
)
LARK_HEADER_STYLE = _words("text_align text_size background_style text_color bold lines")
LARK_DATA_TYPES = _words("text lark_md markdown number options persons date")
LARK_CHART_SPEC = _words(
    "type data xField yField seriesField categoryField valueField innerRadius direction title media"
)
LARK_CHART_TYPES = _words("line area bar pie funnel radar scatter wordCloud linearProgress circularProgress")
LARK_BEHAVIORS = {
    "open_url": {"type", "default_url", "pc_url", "ios_url", "android_url"},
    "callback": {"type", "value"},
}
LARK_MAX_ELEMENTS = 200
LARK_MAX_DEPTH = 5


def _keys(obj: dict, allowed: set[str], where: str) -> None:
    assert isinstance(obj, dict), where
    unknown = set(obj) - allowed
    assert not unknown, f"{where}: undocumented properties {sorted(unknown)}"


def _text(obj: dict, where: str) -> None:
    _keys(obj, LARK_TEXT, where)
    assert obj["tag"] in ("plain_text", "lark_md") and isinstance(obj["content"], str), where


def check_lark_card(card: dict) -> None:
    """Only components and properties the notes list, within the card's documented limits."""
    _keys(card, LARK_TOP, "card")
    assert card["schema"] == "2.0"
    _keys(card["config"], LARK_CONFIG, "config")
    assert card["config"]["update_multi"] is True
    assert card["config"].get("width_mode", "default") in ("default", "compact", "fill")
    header = card["header"]
    _keys(header, LARK_HEADER, "header")
    _text(header["title"], "header.title")
    if "subtitle" in header:
        _text(header["subtitle"], "header.subtitle")
    assert header.get("template", "default") in LARK_TEMPLATES
    assert len(header.get("text_tag_list", [])) <= 3
    for tag in header.get("text_tag_list", []):
        _keys(tag, {"tag", "element_id", "text", "color"}, "text_tag")
        assert tag["tag"] == "text_tag" and tag["color"] in LARK_TAG_COLOURS
        _text(tag["text"], "text_tag.text")
    _keys(card["body"], LARK_BODY, "body")
    counts = {"elements": 0, "tables": 0, "ids": []}
    for i, element in enumerate(card["body"]["elements"]):
        _check_element(element, f"body.elements[{i}]", depth=1, root=True, counts=counts)
    assert counts["elements"] <= LARK_MAX_ELEMENTS
    assert counts["tables"] <= 5
    assert len(counts["ids"]) == len(set(counts["ids"]))


def _check_element(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    tag = element.get("tag")
    assert tag in LARK_COMPONENTS, f"{where}: undocumented component {tag!r}"
    _keys(element, LARK_COMPONENTS[tag], where)
    assert depth <= LARK_MAX_DEPTH, f"{where}: nested too deep"
    counts["elements"] += 1
    if "element_id" in element:
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,19}", element["element_id"]), where
        counts["ids"].append(element["element_id"])
    _CHECKS.get(tag, lambda *_: None)(element, where, depth, root, counts)


def _check_column_set(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    assert element.get("flex_mode", "none") in ("none", "stretch", "flow", "bisect", "trisect"), where
    for j, column in enumerate(element["columns"]):
        assert column.get("tag") == "column", f"{where}: a column_set holds only columns"
        _check_element(column, f"{where}.columns[{j}]", depth + 1, False, counts)


def _check_column(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    assert element.get("width", "auto") in ("auto", "weighted") or str(element["width"]).endswith("px"), where
    for k, child in enumerate(element.get("elements", [])):
        assert child.get("tag") not in ("table", "form"), f"{where}: no table or form in a column"
        _check_element(child, f"{where}.elements[{k}]", depth + 1, False, counts)


def _check_table(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    assert root, f"{where}: a table only at the body's root"
    counts["tables"] += 1
    assert 1 <= element.get("page_size", 5) <= 10
    _keys(element.get("header_style", {}), LARK_HEADER_STYLE, f"{where}.header_style")
    names = set()
    for column in element["columns"]:
        _keys(column, LARK_TABLE_COLUMN, f"{where}.columns")
        assert column.get("data_type", "text") in LARK_DATA_TYPES
        names.add(column["name"])
    for row in element["rows"]:
        assert set(row) <= names, f"{where}: row keys not in columns"
        assert all(isinstance(v, str | int | float) for v in row.values()), where


def _check_chart(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    spec = element["chart_spec"]
    _keys(spec, LARK_CHART_SPEC, f"{where}.chart_spec")
    assert spec["type"] in LARK_CHART_TYPES
    assert element.get("aspect_ratio", "16:9") in ("1:1", "2:1", "4:3", "16:9")
    assert element.get("color_theme", "brand") in ("brand", "rainbow", "complementary", "converse", "primary")
    json.dumps(spec)  # pure JSON, no functions


def _check_button(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    assert element.get("type", "default") in LARK_BUTTON_TYPES, where
    _text(element["text"], f"{where}.text")
    assert element["text"]["tag"] == "plain_text" and len(element["text"]["content"]) <= 100
    assert element["behaviors"], f"{where}: a button needs behaviors"
    for behavior in element["behaviors"]:
        _keys(behavior, LARK_BEHAVIORS[behavior["type"]], f"{where}.behaviors")
        if behavior["type"] == "callback":
            assert isinstance(behavior["value"], dict)


def _check_markdown(element: dict, where: str, depth: int, root: bool, counts: dict) -> None:
    assert isinstance(element["content"], str) and element["content"], where


_CHECKS = {
    "column_set": _check_column_set,
    "column": _check_column,
    "table": _check_table,
    "chart": _check_chart,
    "button": _check_button,
    "markdown": _check_markdown,
}


def lark_elements(card: dict) -> list[dict]:
    """Every component of the card, depth first."""
    out: list[dict] = []

    def walk(elements: list[dict]) -> None:
        for element in elements:
            out.append(element)
            walk(
                element.get("columns", []) if element["tag"] == "column_set" else element.get("elements", [])
            )

    walk(card["body"]["elements"])
    return out


# --- Slack -------------------------------------------------------------------------------------

SLACK_MAX_BLOCKS = 50
SLACK_MAX_CHARS = 12_000


def check_slack_message(message: dict) -> None:
    """Slack's own validators pass on every block, and the limits they do not check hold."""
    blocks = message["blocks"]
    assert 1 <= len(blocks) <= SLACK_MAX_BLOCKS
    for raw in blocks:
        block = Block.parse(raw)
        assert block is not None and block.to_dict() == raw  # to_dict() runs the validators
        if raw["type"] == "section":
            assert len(raw.get("text", {}).get("text", "")) <= 3000
            assert len(raw.get("fields", [])) <= 10
            assert all(len(f["text"]) <= 2000 for f in raw.get("fields", []))
        if raw["type"] == "header":
            assert len(raw["text"]["text"]) <= 150
        if raw["type"] == "actions":
            ids = [e["action_id"] for e in raw["elements"]]
            assert len(ids) == len(set(ids)) and len(ids) <= 25
    assert slack_message_chars(message) < SLACK_MAX_CHARS
    assert message["text"]


def slack_texts(message: dict) -> list[str]:
    """Every text of the message: the fallback and each text object's text."""
    out = [message["text"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                out.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(message["blocks"])
    return out


def strings_of(node: object) -> list[str]:
    """Every string in a card or message payload, depth first."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in strings_of(value)]
    if isinstance(node, list):
        return [s for value in node for s in strings_of(value)]
    return []
