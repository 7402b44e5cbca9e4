"""Untrusted text stays inert: hostile PR titles, bodies, authors, paths and LLM prose in every output."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from test_render_support import (
    LANGS,
    REPORT_URL,
    check_lark_card,
    check_slack_message,
    hostile_report,
    lark_elements,
    slack_texts,
)

from prdigest.models import Report
from prdigest.render.html import render_html
from prdigest.render.lark import BODY_LIMIT, lark_request_body_bytes, render_lark_card, render_lark_view
from prdigest.render.markdown import render_markdown
from prdigest.render.sanitize import clean, lark_md, plain, safe_url, slack_text
from prdigest.render.slack import render_slack_message, render_slack_view
from prdigest.render.views import PRListView, ReportRef, RisksView

MENTION = re.compile(r"@(all|here|channel|everyone)\b|<!(channel|here|everyone)|<@[UW]|<at\b", re.I)
AUTOLINK = re.compile(r"://evil|www\.evil", re.I)  # what a client would turn into a link
OUR_PR = r"https://github\.com/acme-ml/trainer/pull/\d+"
FORMATTING = ("*bold*", "_it_", "~s~", "`code`")


@pytest.fixture(scope="module", params=LANGS)
def report(request: pytest.FixtureRequest) -> Report:
    return hostile_report(request.param)


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _assert_lark_inert(card: dict) -> None:
    check_lark_card(card)
    assert lark_request_body_bytes(card) <= BODY_LIMIT
    for text in _strings(card):
        assert not MENTION.search(text) and not AUTOLINK.search(text), text[:200]
    for element in lark_elements(card):
        if element["tag"] == "markdown":
            content = element["content"]
            tags = set(re.findall(r"<[^>]*>", content))
            assert tags <= {"<font color='grey'>", "<font color='orange'>", "</font>"}, content[:300]
            assert "![" not in content
            for label, url in re.findall(r"\[([^\]]*)\]\(([^)]*)\)", content):
                assert re.fullmatch(r"#\d+", label) and re.fullmatch(OUR_PR, url), (label, url)
        if element["tag"] == "table":
            for row in element["rows"]:
                assert re.fullmatch(rf"\[#\d+\]\({OUR_PR}\)|#\d+", row["pr"]), row["pr"]


def _slack_text_objects(node: object) -> list[dict]:
    if isinstance(node, dict):
        own = [node] if node.get("type") in ("mrkdwn", "plain_text") else []
        return own + [t for v in node.values() for t in _slack_text_objects(v)]
    if isinstance(node, list):
        return [t for v in node for t in _slack_text_objects(v)]
    return []


def _assert_slack_inert(message: dict) -> None:
    check_slack_message(message)
    for text in slack_texts(message):
        assert not MENTION.search(text) and not AUTOLINK.search(text), text[:200]
        # A name in a code span (`_it_`, `__init__.py`) shows as written: no mark inside one is read.
        assert not any(f in re.sub(r"`[\w./~-]+`", "", text) for f in FORMATTING), text[:200]
    mrkdwn = [message["text"]]
    for obj in _slack_text_objects(message["blocks"]):
        if obj["type"] == "plain_text":
            assert not re.search(r"<[!@/A-Za-z]", obj["text"]), obj["text"][:200]
        else:
            assert obj.get("verbatim") is True
            mrkdwn.append(obj["text"])
    for text in mrkdwn:  # Slack's <...> sequences: only our PR links
        for inner in re.findall(r"<([^>]*)>", text):
            assert re.fullmatch(rf"{OUR_PR}\|#\d+", inner), inner


def test_the_lark_card_is_inert(report: Report) -> None:
    _assert_lark_inert(render_lark_card(report, REPORT_URL))


def test_the_slack_message_is_inert(report: Report) -> None:
    _assert_slack_inert(render_slack_message(report, REPORT_URL))


def test_the_chat_cards_are_inert(report: Report) -> None:
    ref = ReportRef.of(report)
    views = [
        RisksView(lang=report.lang, ref=ref, risks=report.risk_observations),
        PRListView(lang=report.lang, title=report.prs[0].title, items=report.prs, ref=ref),
    ]
    for view in views:
        _assert_lark_inert(render_lark_view(view))
        _assert_slack_inert(render_slack_view(view))


def test_only_https_pr_urls_become_links(report: Report) -> None:
    card = json.dumps(render_lark_card(report), ensure_ascii=False)
    html = render_html(report)
    for p in report.prs[1:4]:  # javascript:, http:, and an https URL that is not the PR's
        assert f"[#{p.number}](" not in card and f'href="#pr-{p.number}"' in html
        assert '<a href="h' not in html.split(f'id="pr-{p.number}"')[1].split("</tr>")[0]
    assert (
        safe_url("https://evil.example/x)<at id=all></at>")
        == "https://evil.example/x%29%3Cat%20id=all%3E%3C/at%3E"
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _words(*lines: str) -> set[str]:
    return {word for line in lines for word in line.split()}


HTML_TAGS = _words(
    "html head meta title style body header nav main section h1 h2 h3 p span div b strong br wbr code",
    "a dl dt dd ul ol li details summary figure figcaption table thead tbody tr th td svg g rect text line",
)
HTML_ATTRS = _words(
    "lang charset name content http-equiv href rel id class aria-label role data-label",
    "viewbox x y x1 y1 x2 y2 width height rx fill stroke text-anchor",
)


def test_the_html_page_is_inert(report: Report) -> None:
    page = render_html(report)
    parser = _Tags()
    parser.feed(page)
    for tag, attrs in parser.tags:
        assert tag in HTML_TAGS, tag
        for name, value in attrs:
            assert name in HTML_ATTRS, (tag, name)
            if name == "href":
                assert value and (re.fullmatch(r"#[\w-]+", value) or re.fullmatch(OUR_PR, value)), value
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text


def _tokens(tokens: list) -> list:
    return [t for tok in tokens for t in [tok, *_tokens(tok.children or [])]]


def test_the_markdown_report_is_inert(report: Report) -> None:
    parser = MarkdownIt("commonmark").enable(["strikethrough", "table"])
    tokens = _tokens(parser.parse(render_markdown(report)))
    for token, shown in zip(tokens, [*tokens[1:], None], strict=True):
        if token.type == "link_open":  # only our own links to the report's PRs, shown as their number
            href = str(token.attrs["href"])
            assert re.fullmatch(OUR_PR, href) and shown, token
            assert shown.content == "#" + href.rsplit("/", 1)[1], token
            continue
        assert token.type not in ("html_inline", "html_block", "image", "s_open"), token
        if token.type == "text":  # shown as text; GFM would still link a bare URL
            assert not re.search(r"@(all|here|channel|everyone)\b", token.content), token.content
            assert not AUTOLINK.search(token.content) and "\u202e" not in token.content, token.content


def test_sanitisers_neutralise_each_platform_markup() -> None:
    assert lark_md("<at id=all></at> [x](https://e) *b*") == (
        "&#60;\u2060at id&#61;all&#62;&#60;\u2060&#47;at&#62; "
        "&#91;x&#93;&#40;https&#58;&#47;&#47;\u2060e&#41; &#42;b&#42;"
    )
    assert slack_text("<!channel> @here *b* a & b") == (
        "&lt;!channel&gt; @\u2060here \u200b*\u200bb\u200b*\u200b a &amp; b"
    )
    assert plain("<at id=all>\n@all") == "<\u2060at id=all> @\u2060all"
    assert clean("a\u202eb\x00c \n\t d", 4) == "abc…"
    assert len(plain("<" * 500, 150)) == 150  # a hard limit holds after defusing
