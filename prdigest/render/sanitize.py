"""Untrusted text (PR titles, bodies, author names, LLM prose) made inert, one function per output context.

Every renderer passes untrusted text through the function of its output context:
Lark markdown `lark_md`, Slack mrkdwn `slack_text`, plain-text fields of either `plain`;
the HTML page relies on jinja2's autoescape. All of them first reduce the text to one
clean line (`clean`) and `defuse` what a client could turn into a mention or a link.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

# Control characters and bidi overrides/isolates, which can reorder what a reader sees.
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPACE = re.compile(r"\s+")
_WORD_JOINER = "\u2060"
_ZWSP = "\u200b"
# A word joiner after these stops @all/@here, <at …>/<!channel> and bare-URL autolinks in every client.
_DEFUSE = re.compile(r"(@|<|://|(?i:\bwww)(?=\.))")
# Lark markdown reads these as markup; the notes say to write them as numeric entities.
_LARK_ENTITIES = {ord(c): f"&#{ord(c)};" for c in "&*_~<>[]()#:+-!`$\\/\"'|{}="}
_SLACK_ENTITIES = {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
# Slack mrkdwn has no escape for its formatting characters: zero-width spaces keep them from pairing up
# where they could, beside a space, a punctuation mark or the text's ends. Bold, italic and strike marks
# inside a word (weight_sync.py, a*b) pair with nothing and are left alone, so the word copies as written;
# a backtick is fenced wherever it is.
_SLACK_FORMAT = re.compile(r"`|(?<![^\W_])[*_~]|[*_~](?![^\W_])")
# A code span of the text's own, as Slack pairs backticks (not starting or ending with a space), or a
# path or identifier whose marks would be fenced (__init__.py, _private, ~/.cache): a code span, where
# Slack reads no marks, so it copies as written. A name touching a backtick is not made one: two spans
# side by side would run together.
_SLACK_SPAN = re.compile(
    r"(?P<code>`(?=[^`\s])[^`]*(?<=[^`\s])`)"
    r"|(?<![\w./~`-])[\w./~-]*[_~][\w./~-]*(?![\w./~`-])"
)
_URL_SAFE = ":/?#=&%-._~,;@+!"  # "&": a query of several parameters (a signed page link) stays one


def clean(text: str, limit: int | None = None) -> str:
    """One line: no invisible characters, whitespace collapsed, at most `limit` characters (… marks a cut)."""
    return _cut(_SPACE.sub(" ", _INVISIBLE.sub("", text)).strip(), limit)


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…" if limit > 0 else ""


def defuse(text: str) -> str:
    return _DEFUSE.sub(lambda m: m.group(0) + _WORD_JOINER, text)


def lark_md(text: str, limit: int | None = None) -> str:
    """For a Lark `markdown` component or a `lark_md` text."""
    return defuse(clean(text, limit)).translate(_LARK_ENTITIES)


def plain(text: str, limit: int | None = None) -> str:
    """For a `plain_text` field (Lark or Slack), a Lark table `text` cell or a chart label.

    Cut after defusing: plain-text limits (Slack's 150-character header) are hard."""
    return _cut(defuse(clean(text)), limit)


def slack_text(text: str, limit: int | None = None) -> str:
    """For a Slack mrkdwn text object, sent with verbatim=True so Slack parses no mentions or URLs.

    The text's own code spans (`name.get`) stay code spans: Slack reads no marks inside one, so it needs
    no fence and copies as written; only a backtick with no partner is fenced."""
    text, out, last = slack_literal(text, limit), [], 0
    for span in _SLACK_SPAN.finditer(text):
        shown = span.group(0)
        if span["code"] or _SLACK_FORMAT.search(shown):
            out += [_fence(text[last : span.start()]), shown if span["code"] else f"`{shown}`"]
            last = span.end()
    return "".join([*out, _fence(text[last:])])


def _fence(text: str) -> str:
    return _SLACK_FORMAT.sub(lambda m: f"{_ZWSP}{m.group(0)}{_ZWSP}", text)


def slack_literal(text: str, limit: int | None = None) -> str:
    """For a Slack text Slack shows as it is (``mrkdwn: false``): no markup to fence, only its entities."""
    return defuse(clean(text, limit).translate(_SLACK_ENTITIES))  # "<" is "&lt;" first: no mark needed


def safe_url(url: str | None, *, allow_http: bool = False) -> str | None:
    """The URL if it is a plain https (or, when allowed, http) address, percent-quoted; else None."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme not in schemes or not parts.hostname or "@" in parts.netloc:
        return None
    return quote(url.strip(), safe=_URL_SAFE)
