"""A chat message -> the Intent it asks for, by rules and from the text alone (never from the cache).

The order of the decision:
1. an empty message or a greeting is help;
2. a message that starts with a command that must lead (the admin commands, `preview`, `ask`, `help`:
   `CommandSpec.leads`) is that command;
3. a rule silenced or taken back in words ("不要再提示 no_tests 了", "ignore no_tests for 1750") is mute,
   unmute, dismiss or undismiss; an admin command said in a short sentence that is no question about it
   ("please stop posting the weekly report here", "which repos does this chat follow?") is that command;
4. a PR number (`#2126`, `PR 1740`, a number alone, a number after an explain word or a misspelling of
   it, a number no year can be in a question) makes it `explain`;
5. "the riskiest PR" is a question; the words of a command anywhere in a short message ("show me the
   risks", "who contributed the most"); the most specific one wins; a message that only asks what was
   merged in a period is that period's report;
6. else a question (a question word, a question mark, a Chinese question particle, PRs said with more
   words) is `ask`, a near-miss of a command word is help suggesting it, and anything else is help.
The period is read by `prdigest.periods` wherever it stands, and taken out before the rest.
"""

from __future__ import annotations

import difflib
import re

from prdigest.analysis.asked import RISKIEST
from prdigest.analysis.taxonomy import RISK_LABELS
from prdigest.config.models import REPO_PATTERN
from prdigest.handlers.args import is_zone, pr_number
from prdigest.handlers.commands import COMMANDS, Intent, clean, ranked, spec, words
from prdigest.i18n import detect_lang
from prdigest.models import Lang
from prdigest.periods import EN_NUMBER, ZH_NUMBER, find_period, number, without

_GREETINGS = frozenset({"hi", "hello", "hey", "hallo", "yo", "你好", "您好", "嗨", "哈喽", "在吗"})
# A reply language asked for in words ("report in English", "用中文").
_ASKED_LANG: tuple[tuple[Lang, re.Pattern[str]], ...] = (
    ("en", re.compile(r"\bin english\b|英文|英语", re.I)),
    ("zh", re.compile(r"\bin chinese\b|中文", re.I)),
)
# A rule's name as written (no_tests, no-tests), and the words that silence one or take it back.
_RULE_WORD = re.compile(r"(?<![\w-])([A-Za-z]+(?:[_-][A-Za-z]+)+)(?![\w-])")
_SILENCE = re.compile(
    r"\b(?:mute|silence|ignore|dismiss|skip|suppress|hide|"
    r"stop\s+(?:flagging|warning|reporting|showing|raising|telling|mentioning|alerting)|"
    r"don'?t\s+(?:flag|show|report|warn|raise|tell|mention)|no\s+more)\b|不要再?|别再?|静音|屏蔽|忽略|不用管|跳过|关掉"
    r"|不(?:用|必|需要)再?(?:提示|提醒|报|显示)",
    re.I,
)
_UNSILENCE = re.compile(
    r"\b(?:unmute|undismiss|un-?ignore|undo|resume|restore|bring\s+back|again)\b|恢复|重新|取消静音|取消忽略",
    re.I,
)
# A message that is a number alone names a PR ("2301").
_ALONE = re.compile(r"#?\d{1,9}")
# "can you …", "please …": a request, not a question.
_POLITE = re.compile(r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)", re.I)
_GLUED = re.compile(r"\b(top|explain)(\d{1,9})(?![A-Za-z0-9_])", re.I)  # "top3", "explain2301"


# A message that says no more than "the PRs merged" (and a period) asks for that period's report: "PRs
# merged yesterday", "上周合并了哪些PR"; "which PRs touched the scheduler?" says more, and is a question.
_LISTING = words(
    r"\bprs\b",
    r"\bpull requests\b",
    r"\b(?:merged|changed|landed|shipped)\b",
    "合并",
    r"(?<![A-Za-z])PRs?(?![A-Za-z])",
)
# The word lists read best packed, several to a line.
# fmt: off
_FILLER = words(
    r"\b(?:show|me|list|give|all|the|a|of|in|on|were|was|is|are|what|which|please|prs?|pull|requests?|merged|"
    r"got|have|been|that|there|any|new|recent|recently|latest|we|our|did|from|for|changed|landed|shipped)\b",
    "合并了", "合并", "哪些", "有", "的", "了", "吗", "都", "PR", "给我", "看看", "看下", "列出", "一下",
    "最近", "新", "什么", "啥",
    r"[\s?？!！.,，。:：]",
)
# "how do I … subscribe" within a sentence's length: each "how" a search tries reads a bounded span
# (an unbounded one made a message of many "how to"s quadratic).
_HELP = words(
    r"\bwhat can you do\b", r"\bwhat do you do\b", r"\bhow (?:do i|to|can i) use\b", r"\bcommands\b",
    r"\busage\b", r"\bwho are you\b", r"\bhow (?:do|can|to)\b.{0,200}\b(?:subscribe|unsubscribe|use)\b",
    "怎么订阅", "如何订阅",
    "你能做什么", "能做什么", "怎么用", "如何使用", "能干什么", "有哪些命令", "你是谁",
    r"你会(?:干|做)?(?:什么|啥)",
)
_EXPLAIN = words(
    r"\bexplain\b", r"\btell me (?:more )?about\b", r"\bmore (?:on|about)\b",
    r"\bwhat (?:does|did|is)\b", r"\bdetails?\b", r"\bdescribe\b",
    "解释", "说明", "讲讲", "介绍", "做什么", "干什么", "改了什么",
)
_QUESTION = words(
    r"[?？]", r"^(?:what|why|how|who|whom|whose|which|when|where|is|are|was|were|does|do|did|can|could|"
    r"should|would|will|has|have|any)\b", r"\b(?:what|why|how|who|which|when|where)\b",
    "吗", "呢", "么", "什么", "为什么", "怎么", "怎样", "哪", "谁", "几", "多少", "是否", "有没有", "是不是",
)
# fmt: on
# "#2126", "PR 1740", "pull request 12", "42号PR".
# A search starts no number inside a run of digits, nor takes a run of spaces back (linear time).
_PR = re.compile(
    r"(?:#|(?<![A-Za-z0-9_])(?:pr|pull request|pull|mr)\s*+#?\s*+)(-?\d+)(?![A-Za-z0-9_])"
    r"|(?<!\d)(\d++)\s*+号\s*+(?=PR|pr)",
    re.I,
)
# Digits beside Chinese are apart ("2301是做什么的").
_BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9_#.:/-])(\d{1,9})(?![A-Za-z0-9_.:/-])")
# A count: digits anywhere, a number word after "top", "前三", "三个".
_COUNT = re.compile(
    rf"(?<![A-Za-z0-9_#.:/-])(?P<n>\d{{1,9}})(?![A-Za-z0-9_.:/-])|\btop\s+(?P<w>{EN_NUMBER})\b"
    rf"|前\s*(?P<zn>{ZH_NUMBER})|(?P<zc>{ZH_NUMBER})\s*个",
    re.I,
)
_REPO = re.compile(rf"(?<![\w./-])({REPO_PATTERN})(?![\w/-])")
# Up to this many words (or Chinese characters / 3), a message is a command said in words;
# a longer one that asks a question is a question, whatever words it uses.
SHORT_WORDS = 12


def understand(text: str) -> Intent:
    """The Intent of a chat message (see the module's docstring for the order of the rules)."""
    text = _GLUED.sub(r"\1 \2", clean(text))
    lang: Lang = detect_lang(text)
    if not text or text.lower().strip(" !！.。?？~") in _GREETINGS:
        return Intent("help", lang, placed=not text)
    leading = _leading(text)
    if leading is not None and spec(leading[0]).leads:
        only, rest = leading
        if only == "ask":
            return Intent("ask", lang, period=find_period(rest), question=rest)
        if only == "help":
            return Intent("help", lang)
        pr = _pr(rest, bare=True) if spec(only).names_pr else None
        return Intent(only, lang, pr=pr, repo=_repo(rest), args=rest)
    if (noise := _noise(text, lang)) is not None:
        return noise
    if (admin := _admin(text)) is not None:
        return Intent(admin, lang, repo=_repo(text), args=text)
    lang = next((asked for asked, words in _ASKED_LANG if words.search(text)), lang)
    period = find_period(text)
    rest = without(text, period)
    alone = _ALONE.fullmatch(rest.strip()) is not None
    pr = _pr(rest, bare=_explaining(rest, leading) or alone or _names_a_pr(rest))
    if pr is not None:
        return Intent("explain", lang, pr=pr, repo=_repo(rest))
    name = _topic(rest) if leading is None else _sharper(leading[0], rest)
    if RISKIEST.search(rest):  # "the riskiest PR": one PR, ranked, not the week's risks
        return Intent("ask", lang, period=period, question=text, placed=False)
    if name == "explain" and leading is not None and not leading[1]:  # "explain" alone: which PR?
        return Intent("explain", lang)
    if name == "explain" or (name is not None and leading is None and _long_question(rest, lang)):
        # "explain" with words but no PR, or a long question: asked as written
        return Intent("ask", lang, period=period, question=text, placed=False)
    if name is not None:
        tool = spec(name).tool
        n = _count(rest) if tool is not None and "n" in tool.model_fields else None
        return Intent(name, lang, period=period, n=n, repo=_repo(rest))
    if _HELP.search(rest):
        return Intent("help", lang, placed=False)
    if _QUESTION.search(text) or _LISTING.search(rest):  # "PRs by Jiajun last week": a question too
        return Intent("ask", lang, period=period, question=text, placed=False)
    return Intent("help", lang, question=text, suggestion=_closest(text), placed=False)


def _leading(text: str) -> tuple[str, str] | None:
    """The command whose registered word starts the text, and the text after it."""
    lowered = text.lower()
    words = [(w, c.name, "en") for c in COMMANDS for w in c.en]
    words += [(w, c.name, "zh") for c in COMMANDS for w in c.zh]
    for word, name, lang in sorted(words, key=lambda item: -len(item[0])):  # "show risks" before "show"
        if lowered.startswith(word):
            rest = text[len(word) :]
            # English words end at a word boundary; Chinese ones may run into their argument ("解释#3128").
            if lang == "zh" or not rest or not (rest[0].isalnum() or rest[0] == "_"):
                return name, rest.strip(" :：,，")
    return None


def _pr(text: str, bare: bool) -> int | None:
    """The PR a text names ("#12", "PR 12"); with ``bare`` (the command is about a PR), or after a word
    that asks to explain, a number alone too."""
    if match := _PR.search(text):
        return pr_number(match.group(1) or match.group(2))
    if (bare or _EXPLAIN.search(text)) and (match := _BARE_NUMBER.search(text)):
        return pr_number(match.group(1))
    return None


def _names_a_pr(text: str) -> bool:
    """A question about a number of three digits or more that is no year ("why is 2301 flagged?")."""
    match = _BARE_NUMBER.search(text)
    if match is None or _QUESTION.search(text) is None:
        return False
    number = match.group(1)
    return len(number) >= 3 and not (len(number) == 4 and 1970 <= int(number) <= 2100)


def _explaining(text: str, leading: tuple[str, str] | None) -> bool:
    """Whether the message starts with explain's word, or a misspelling of it ("expalin 1750")."""
    if leading is not None:
        return leading[0] == "explain"
    first = text.split(maxsplit=1)[0].lower() if text.split() else ""
    return bool(difflib.get_close_matches(first, spec("explain").en, n=1, cutoff=0.75))


def _admin(text: str) -> str | None:
    """An admin command said in a short sentence that is not a question about it ("how do I subscribe?"),
    or one whose words ask a question ("which repos does this chat follow?")."""
    if len(text.split()) > SHORT_WORDS:
        return None
    asking = _QUESTION.search(_POLITE.sub("", text)) is not None and _repo(text) is None
    said = (name for name, words in _said(leads=True) if words.search(text))
    return next((name for name in said if spec(name).asked or not asking), None)


def _noise(text: str, lang: Lang) -> Intent | None:
    """Silencing a rule said in a sentence: "不要再提示 no_tests 了" mutes it, "ignore no_tests for 1750"
    dismisses it on one PR; "show no_tests again" and "恢复 no_tests" take it back. None without a rule."""
    rule = next((w for w in _RULE_WORD.findall(text) if w.lower().replace("-", "_") in RISK_LABELS), None)
    if rule is None or len(text.split()) > SHORT_WORDS:
        return None
    undo = _UNSILENCE.search(text) is not None
    if not undo and _SILENCE.search(text) is None:
        return None
    pr, repo = _pr(text.replace(rule, " "), bare=True), _repo(text)
    if pr is None:
        return Intent("unmute" if undo else "mute", lang, repo=repo, args=f"{rule} {repo or ''}")
    return Intent("undismiss" if undo else "dismiss", lang, pr=pr, repo=repo, args=f"#{pr} {rule}")


def _sharper(leading: str, text: str) -> str:
    """A leading generic word ("top", "report") gives way to a more specific topic ("top 3 authors")."""
    order = [name for name, _ in _said(leads=False)]
    topic = _topic(text)
    if leading in ("top", "report") and topic is not None and order.index(topic) < order.index(leading):
        return topic
    return leading


def _said(leads: bool) -> list[tuple[str, re.Pattern[str]]]:
    """The commands said in a sentence, the most specific first: those that otherwise must lead (the admin
    commands: "please unsubscribe owner/name"), or the questions ("show me the risks")."""
    return [(c.name, c.said) for c in ranked(lambda c: c.specific) if c.leads == leads and c.said is not None]


def _topic(text: str) -> str | None:
    found = next((name for name, said in _said(leads=False) if said.search(text)), None)
    if found is None and _LISTING.search(text) and not _FILLER.sub("", text):
        return "report"
    return found


def _long_question(text: str, lang: Lang) -> bool:
    size = len(re.sub(r"\s", "", text)) // 3 if lang == "zh" else len(text.split())
    return size > SHORT_WORDS and bool(_QUESTION.search(text))


def _count(text: str) -> int | None:
    match = _COUNT.search(_REPO.sub(" ", text))
    if match is None:
        return None
    return number(next(group for group in match.groups() if group))


def _repo(text: str) -> str | None:
    for match in _REPO.finditer(text):
        candidate = match.group(1)
        if not (candidate.replace("/", "").isdigit() or is_zone(candidate)):
            return candidate
    return None


def _closest(text: str) -> str | None:
    """A short message whose first word nearly spells a command word."""
    tokens = text.lower().split()
    if not tokens or len(tokens) > 3:
        return None
    words = [w for c in COMMANDS for w in c.en + c.zh if " " not in w]
    match = difflib.get_close_matches(tokens[0], words, n=1, cutoff=0.75)
    return match[0] if match else None
