"""Text crossing the LLM boundary: what goes out sealed, what comes back inert.

Out: a token estimate without a tokenizer; untrusted data redacted (``prdigest.redact``) and
unable to close the ``<untrusted_…>`` wrapper the prompts call data. Back: no mention, markup,
image, link (but ours) or direction override; no PR number the output may not name; a risk's
evidence quoted from what the model was shown of the PR.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Container, Iterable
from dataclasses import dataclass

from prdigest.path_kinds import is_test
from prdigest.redact import redact

# --- text going out: token estimate, the untrusted wrapper ------------------------------------


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` without a tokenizer: ceil(ASCII characters / 4) + 1 per other character.

    BPE tokenizers spend about four ASCII characters per token on English and code and
    about one token per CJK character; counting every other non-ASCII character (accents,
    emoji) as a whole token errs on the safe side.
    """
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // 4) + len(text) - ascii_chars


_WRAPPER_TAG = re.compile(r"<(\s*/?\s*untrusted_)", re.I)


def data_line(text: str) -> str:
    """A line of untrusted data as it goes into a prompt: redacted, unable to close its wrapper."""
    return sealed(redact(text))


def sealed(text: str) -> str:
    return _WRAPPER_TAG.sub(r"‹\1", text)


# --- text coming back: inert ---------------------------------------------------------------

_MARKUP = re.compile(r"</?[A-Za-z!@#][^<>\n]*>")  # <!channel> <@U1> <#C1> <at id=all> <a href> <img>
_BROADCAST = re.compile(r"(?<![\w.@])@+(?:(?:all|here|channel|everyone)\b|所有人)", re.I)
# No bracket inside brackets, no parenthesis inside parentheses: a search never rescans a run of them.
_MD_IMAGE = re.compile(r"!\[[^\[\]]*\]\([^()]*\)")
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>()\[\]\"'`]+|\bwww\.[^\s<>()\[\]\"'`]+", re.I)
_SPACES = re.compile(r"[ \t]{2,}")
# A URL the evidence quotes or gives as a value: inside "…", `…`, “…”, ‘…’, 「…」, right after a ' (an
# apostrophe pairs with nothing), or after "key=" or a code-like "key:" ('base_url: http://…').
_QUOTED_SPAN = re.compile(r"\"[^\"\n]*\"|`[^`\n]*`|“[^“”\n]*”|‘[^‘’\n]*’|「[^「」\n]*」")
_VALUE_BEFORE = re.compile(r"(?:'|(?<![\w.-])(?P<key>[\w.-]+)(?P<sep>[:=])[ \t]?)\Z")
_KEY_REACH = 200  # how far before a URL its key may start: each URL looks back this far, no further
_LINK_PART = re.compile(r"^(?:(?:https?|ftp)://)?(?:www\.)?", re.I)  # what makes a value autolink
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # direction overrides that make text read otherwise


def inert(text: str, links: Iterable[str] = ()) -> str:
    """``text`` without mentions, markup, images, direction overrides and links, except ``links`` (ours).

    A quoted or key-value URL is a value the evidence quotes: it stays as text, its scheme and "www."
    dropped so that no client links it ('base_url: "http://10.0.0.1:8000/v1"' keeps "10.0.0.1:8000/v1")."""
    allowed = set(links)
    quoted: list[tuple[int, int]] = []  # the quoted spans of the text the URLs are found in

    def link(match: re.Match[str]) -> str:
        url = match.group(0).rstrip(".,;:!?")
        if url in allowed:
            return match.group(0)
        rest = match.group(0)[len(url) :]
        return _LINK_PART.sub("", url) + rest if _is_value(match, quoted) else rest

    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    text = _BROADCAST.sub("", text)
    quoted += [q.span() for q in _QUOTED_SPAN.finditer(text)]  # found once, not once a URL
    text = _URL.sub(link, text)
    text = _BIDI.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _is_value(url: re.Match[str], quoted: list[tuple[int, int]]) -> bool:
    """Whether the URL is a value the text quotes (``quoted``: the text's quoted spans, in order) or
    assigns, not a link of the prose."""
    text, start = url.string, url.start()
    i = bisect.bisect_left(quoted, (start, start)) - 1  # the last span that opens before the URL
    if i >= 0 and quoted[i][0] < start < quoted[i][1]:
        return True
    before = _VALUE_BEFORE.search(text, max(0, start - _KEY_REACH), start)
    if before is None:
        return False
    key = before["key"]
    return key is None or before["sep"] == "=" or bool(_CODE_LIKE.search(key))


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut after a sentence or a word when it must be cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind(". "), head.rfind("。"), head.rfind("\n"))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return (head[: cut + 1] if cut >= limit // 2 else head).rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    return clip(" ".join(text.split()), limit)


# --- a risk's evidence, quoted from what the model was shown ---------------------------------


_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”|‘([^’\n]+)’|「([^」\n]+)」|'([^'\n]{4,})'")
_TOKEN = re.compile(r"--?[a-z][\w-]*|[\w][\w./:=+-]*\w", re.A | re.I)
# An identifier, option, path, version or constant, not a word: "--foo", "a_b", "x.py", "v0.5", "FSDP2".
_CODE_LIKE = re.compile(r"^--?\w|\w[_./:=+-]\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|^[A-Z_]{4,}$", re.A)
_WORDS = re.compile(r"\w+", re.A)
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_ELLIPSIS = re.compile(r"…|\.\.\.")
_MIN_TOKEN, _MIN_RUN, _RUN_WORDS, _CJK_RUN = 4, 12, 3, 6  # what makes a shared fragment substantial


@dataclass(frozen=True)
class Shown:
    """What the model was shown of one PR (title, description, file paths, diff lines): a risk's
    evidence must quote it. Quotes sit in prose of any language, so fragments are looked for:
    quoted text, identifiers and options, runs of words, runs of CJK characters."""

    text: str  # lowercased, whitespace collapsed
    words: str  # its ASCII words, space-separated and padded: " a b c "
    tests_touched: bool | None = None  # None: the file list is unknown

    @classmethod
    def of(cls, texts: Iterable[str], paths: list[str] | None) -> Shown:
        text = " ".join(" ".join(texts).lower().split())
        touched = None if paths is None else any(map(is_test, paths))
        return cls(text, f" {' '.join(_WORDS.findall(text))} ", touched)

    def supports(self, label: str, evidence: str) -> bool:
        if label == "no_tests" and self.tests_touched is False:
            return True  # an absence cannot be quoted: the file list confirms it
        return any(map(self._found, _fragments(evidence)))

    def _found(self, fragment: str) -> bool:
        fragment = " ".join(fragment.lower().split())
        if fragment in self.text:
            return True
        words = _WORDS.findall(fragment)
        return len(words) >= _RUN_WORDS and f" {' '.join(words)} " in self.words


def _fragments(evidence: str) -> Iterable[str]:
    """The substantial fragments of ``evidence`` that a quote of the PR would share with it."""
    quoted = [q for groups in _QUOTED.findall(evidence) for q in groups if q]
    for part in (p.strip(" ,;:()[]") for q in quoted for p in _ELLIPSIS.split(q)):
        if _substantial(part):
            yield part
    for token in _TOKEN.findall(evidence):
        if len(token) >= _MIN_TOKEN and _CODE_LIKE.search(token):
            yield token
    for run in _NOT_ASCII.split(evidence):  # runs of words: any three in a row
        words = _WORDS.findall(run)
        for i in range(len(words) - _RUN_WORDS + 1):
            window = words[i : i + _RUN_WORDS]
            if sum(map(len, window)) >= _MIN_RUN:
                yield " ".join(window)
    for run in _CJK.findall(evidence):
        yield from (run[i : i + _CJK_RUN] for i in range(len(run) - _CJK_RUN + 1))


def _substantial(fragment: str) -> bool:
    if sum(map(len, _CJK.findall(fragment))) >= _CJK_RUN:
        return True
    if len(fragment) >= _MIN_TOKEN and _CODE_LIKE.search(fragment):
        return True
    return len(fragment) >= _MIN_RUN and len(_WORDS.findall(fragment)) >= 2


_PR_REF = re.compile(
    r"(?P<sep>(?<!\s)\s*(?:[,，、/]|\band\b|\bor\b|和|及|或)\s*)?"
    r"(?:[(（\[]\s*(?:PR\s*)?#(?P<a>\d+)\s*[)）\]]|(?:\b(?:PR|pull request)\s*)?#(?P<b>\d+)\b)",
    re.I,
)
_SPACE_BEFORE_PUNCT = re.compile(r"(?<![ \t])[ \t]+(?=[,.;:!?，。；：！？、)）])")


def scrub_prs(text: str, keep: Container[int]) -> str:
    """``text`` without the PR numbers ("#12", "(#12)", "PR #12") that are not in ``keep``."""

    def drop(match: re.Match[str]) -> str:
        return match[0] if int(match["a"] or match["b"]) in keep else ""

    out = _PR_REF.sub(drop, text)
    return out if out == text else _SPACES.sub(" ", _SPACE_BEFORE_PUNCT.sub("", out)).strip()
