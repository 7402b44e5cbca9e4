"""Dangerous code in a diff's lines: eval, pickle, shell calls, unsafe loads, TLS verification off, CI
secrets, credentials in code. The security rule (analysis) and the diff excerpt (sources) both read it,
so it sits below them."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

# Dangerous calls in code, each behind the word it needs in lower case (a substring test of the lowered
# text skips most patterns).
# "product": only in code that ships; a shell call in an example script runs what its author typed.
_DANGEROUS = [
    (word, re.compile(pattern), product)
    for word, pattern, product in (
        ("eval(", r"(?<![\w.])(?<!def )eval\(", False),
        ("exec(", r"(?<![\w.])(?<!def )exec\(", False),
        ("pickle", r"\bpickle\.loads?\(", False),
        ("shell", r"\bshell\s*=\s*True", True),
        ("os.system(", r"\bos\.system\(", True),
        ("yaml.load(", r"\byaml\.load\((?!.*Loader\s*=\s*yaml\.SafeLoader)", False),
        ("torch.load(", r"\btorch\.load\((?!.*weights_only\s*=\s*True)", False),
        ("verify", r"\bverify\s*=\s*False", False),
        ("0.0.0.0", r"[\"']0\.0\.0\.0[\"']", False),
        ("root'", r"(?i:user)\w*\s*[(=:]\s*'root'", False),
        ('root"', r'(?i:user)\w*\s*[(=:]\s*"root"', False),
        ("pull_request_target", r"\bpull_request_target\b", False),
        ("secrets.", r"\$\{\{\s*secrets\.\w+", False),
    )
]
# A credential: a literal that looks like one (not a model's special token), or one handed on from the
# environment ("E2B_API_KEY": os.environ[...]).
_SECRET_LITERAL = re.compile(
    r"\b(password|passwd|secret|api_key|apikey|access_token|auth_token|private_key)\s*[=:]\s*"
    r"[\"'][A-Za-z0-9_\-/+=.]{12,}[\"']",
    re.I,
)
_SECRET_FORWARD = re.compile(
    r"[\"'][A-Z][A-Z0-9_]*(API_KEY|_TOKEN|_SECRET|PASSWORD)[\"']\s*:|environ\[[\"'][A-Z0-9_]*(API_KEY|_TOKEN|_SECRET|PASSWORD)[\"']\]\s*="
)
_COMMENT = re.compile(r"^\s*(#|//|\*|/\*)")


# What a credential's line must hold, tested on a whole file first: its name as a literal's key
# (any case), or an environment variable's name (upper case).
_SECRET_KEYS = (
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "access_token",
    "auth_token",
    "private_key",
)
_SECRET_ENV_NAMES = ("API_KEY", "_TOKEN", "_SECRET", "PASSWORD")
_Pattern = tuple[str, re.Pattern[str], bool]


# The words of the lowered text that `_patterns_in` asks for (the environment names are upper case).
_LOWER_WORDS = (*(word for word, _, _ in _DANGEROUS), *_SECRET_KEYS)


def _patterns_in(
    text: str, product: bool, words: Collection[str] | None = None
) -> tuple[list[_Pattern], bool]:
    """The patterns that match somewhere in a file's lines, and whether a credential does: most files
    hold none, and their lines are then never read one by one. ``words``: `danger_words` of a text that
    holds this one (only those are looked for)."""
    lowered = text.lower()
    dangerous = _DANGEROUS if words is None else [p for p in _DANGEROUS if p[0] in words]
    keys = _SECRET_KEYS if words is None else [w for w in _SECRET_KEYS if w in words]
    names = _SECRET_ENV_NAMES if words is None else [w for w in _SECRET_ENV_NAMES if w in words]
    found = [p for p in dangerous if p[0] in lowered and (product or not p[2]) and p[1].search(text)]
    secrets = bool(
        (any(w in lowered for w in keys) and _SECRET_LITERAL.search(text))
        or (any(w in text for w in names) and _SECRET_FORWARD.search(text))
    )
    return found, secrets


def danger_words(text: str) -> frozenset[str]:
    """The words `_patterns_in` asks for before any pattern, of those the text holds. Of many files' lines
    joined: none, and no file's lines hold a dangerous call or a credential (most PRs, whose files are then
    not read one by one); else a file holds only words of these (its words are in the joined text too)."""
    lowered = text.lower()
    return frozenset(w for w in _LOWER_WORDS if w in lowered).union(w for w in _SECRET_ENV_NAMES if w in text)


def is_comment(line: str) -> bool:
    return _COMMENT.match(line) is not None


def comments(lines: list[str]) -> str:
    """The comment lines, joined by spaces (the pattern filters without a call of ours per line)."""
    return " ".join(filter(_COMMENT.match, lines))


def _dangerous(line: str, patterns: list[_Pattern], secrets: bool) -> bool:
    if secrets and (_SECRET_LITERAL.search(line) or _SECRET_FORWARD.search(line)):
        return True
    return any(pattern.search(line) for _, pattern, _ in patterns)


def holds_danger(text: str) -> bool:
    """Whether any line of the text may hold a dangerous call or a credential (a test of the whole text)."""
    patterns, secrets = _patterns_in(text, product=True)
    return bool(patterns or secrets)


def dangerous_lines(
    lines: list[str], product: bool = True, words: Collection[str] | None = None
) -> Iterator[str]:
    """The lines, comments aside, that hold a dangerous call or a credential; ``product``: code that ships;
    ``words``: `danger_words` of a text that holds these lines."""
    patterns, secrets = _patterns_in("\n".join(lines), product, words)
    if patterns or secrets:
        yield from (line for line in lines if not is_comment(line) and _dangerous(line, patterns, secrets))
