"""The rules engine's shortcuts never change an answer: cached path classes answer as uncached ones, and
every substring pre-check is a necessary condition of the regex it guards."""

from __future__ import annotations

import random
import re

import pytest

from prdigest import path_kinds
from prdigest.analysis import rules
from prdigest.analysis.facts import facts
from prdigest.analysis.risks import deps as risk_deps
from prdigest.analysis.risks import rules as risk_rules
from prdigest.analysis.risks import security as risk_security
from prdigest.analysis.risks.common import folded, may_hold
from prdigest.analysis.taxonomy import is_core, parse_title
from prdigest.config import Taxonomy
from prdigest.danger import _COMMENT, _DANGEROUS, _patterns_in, comments, danger_words, is_comment
from prdigest.sources.fixture import FixtureSource, demo_fixture_path

DEMO = FixtureSource(demo_fixture_path()).prs
PATHS = [
    *sorted({f.path for p in DEMO for f in p.files or []}),
    "tests/x.py",
    "a/tests/b/c.py",
    "test_a.py",
    "pkg/a_test.go",
    "docs/index.md",
    "README.MD",
    ".github/workflows/ci.yml",
    "docker/Dockerfile.rocm",
    "requirements-dev.txt",
    "examples/run.sh",
    "src/core/engine.cu",
    "x/experimental/y.py",
    "notebooks/a.ipynb",
    ".hidden/tool.py",
    "",
    "ünïcode/tests/ß.py",
]
# The lines the guarded regexes read: the demo week's diffs, and lines written to sit at their edges.
LINES = [line for p in DEMO for line in (p.diff_excerpt or "").splitlines()] + [
    "@pytest.mark.skip(reason='flaky')",
    "@PYTEST.MARK.XFAIL",
    "@pytest.mark.ſkip",  # re.I folds "ſ" to "s": not ASCII, so the pre-check lets the regex decide
    "unittest.skip(",
    "    disabled = True",
    "DISABLED='x'",
    "diſabled = True",
    "  if: false",
    "IF: ${{ false }}",
    "# def test_a():",
    "#   class TestA:",
    "# CLASS TEST",
    "FROM python:3.11",
    "RUN pip install torch==2.1",
    "RUN PIP3 INSTALL x==1",
    "ARG VLLM_IMAGE_TAG=v0.9.1",
    "ENV CUDA_VERSION=12.4",
    "git checkout 0123abcd",
    "GIT FETCH origin deadbeef12",
    "SGLANG_COMMIT = 'abc'",
    "Version = '1.0'",
    "uv pip install flash-attn",
    "python -m pip install x",
    "frøm ℡ 𝔭ip",
    "",
]
# Fragments whose random mixes reach the regexes' odd corners: the words in any case, unicode folds.
FRAGMENTS = [
    "@pytest.mark.",
    "skip",
    "xfail",
    "if",
    "unittest.skip(",
    "disabled",
    "=",
    " ",
    "True",
    "'",
    "\n",
    "#",
    "def test_",
    "class Test",
    "if:",
    "false",
    "${{",
    "}}",
    "FROM",
    "img:1",
    "pip",
    "pip3",
    "install",
    "==",
    "ARG",
    "ENV",
    "VERSION",
    "_REF",
    "_COMMIT",
    "_TAG",
    "_SHA",
    "git",
    "checkout",
    "0123abc",
    "ſ",
    "\u212a",
    "İ",
    "ı",
    "perf regression",
    "slows down",
    "3% slower",
    "ooms again",
    "more memory",
    "throughput drops",
    "memory leak",
    "crash",
    "FileNotFoundError",
    "out-of-bounds",
    "data loss",
    "deadlocks",
    "NaN",
    "source ",
    ". ",
    "./run.sh",
    "add_argument(",
    "'--lr'",
    "Option (",
    "shell=True",
    "eval(",
    "api_key = 'abcdefghijklmnop'",
    '"MY_API_KEY": ',
    "pickle.loads(",
    "breaking change",
    "backward-incompatible",
    "breaks compatibility",
    "checkpoint format changed",
    "old configs cannot be",
    "no longer supported",
    "because",
    "trade-off",
    "root cause",
    "security fix",
    "CVE-2024",
    "vulnerable",
    "privilege escalation",
]


def _samples(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8))]
        text = "".join(p.upper() if rng.random() < 0.3 else p for p in parts)
        out.append(text)
    return out


GUARDS = [
    (risk_deps._PINNED, risk_deps._PINNED_WORDS),
    (risk_rules._REGRESSION, risk_rules._REGRESSION_WORDS),
    (risk_rules._MEASURED_COST, risk_rules._REGRESSION_WORDS),
    (risk_rules._BREAKING_TEXT, risk_rules._BREAKING_WORDS),
    (rules._WHY, rules._WHY_WORDS),
    (risk_security._SECURITY_TEXT, risk_security._SECURITY_WORDS),
]


@pytest.mark.parametrize(("pattern", "words"), GUARDS)
def test_pre_check_is_necessary(pattern: re.Pattern[str], words: tuple[str, ...]) -> None:
    """Wherever the regex matches, the pre-check lets it run: the verdict is the regex's alone."""
    texts = LINES + _samples(1, 20_000) + ["\n".join(LINES)]
    for text in texts:
        if pattern.search(text):
            assert may_hold(text, words), text
    assert all(word == word.lower() for word in words)


def test_install_pre_check_is_necessary() -> None:
    for text in LINES + _samples(2, 20_000):
        if risk_deps._INSTALL.search(text):
            assert "pip" in text, text


def test_pre_check_folds_as_re_i_outside_ascii() -> None:
    assert may_hold("diſabled = True", ("disabled",))
    assert risk_rules._DISABLED.search("diſabled = True")  # why: re.I folds beyond str.lower
    assert may_hold("DİSABLED", ("disabled",))  # "İ".lower() is two characters
    assert not may_hold("nothing here", ("disabled",))
    assert not may_hold("nöthing here", ("disabled",))


def test_danger_words_are_lower_case() -> None:
    """The dangerous patterns' words are tested against lowered text as they are."""
    assert all(word == word.lower() for word, _, _ in _DANGEROUS)


def test_comments_are_the_comment_lines() -> None:
    assert comments(LINES) == " ".join(line for line in LINES if is_comment(line))
    assert [bool(_COMMENT.match(line)) for line in LINES] == [is_comment(line) for line in LINES]


@pytest.mark.parametrize(
    "kind",
    [
        path_kinds.is_test,
        path_kinds.is_doc,
        path_kinds.is_ci,
        path_kinds.is_example,
        path_kinds.is_support,
        path_kinds.is_dependency,
    ],
)
def test_cached_path_kinds_answer_as_uncached(kind: object) -> None:
    for path in PATHS * 2:  # the second round reads the cache
        assert kind(path) == kind.__wrapped__(path), path  # type: ignore[attr-defined]


def test_cached_glob_matches_answer_as_uncached() -> None:
    globs = [
        path_kinds.TEST_GLOBS,
        path_kinds.DOC_GLOBS,
        path_kinds.DEFAULT_CORE_GLOBS,
        ("trainer/backends/**",),
        ["**/megatron/**"],
        (),
    ]
    for glob in globs:
        for path in PATHS * 2:
            expected = path_kinds._glob_pattern(tuple(glob)).match(path) is not None
            assert path_kinds.matches(path, glob) == expected, (path, glob)
    taxonomy = Taxonomy(core_paths=["trainer/backends/**"])
    assert [is_core(p, taxonomy) for p in PATHS] == [
        not (path_kinds.is_test(p) or path_kinds.is_doc(p))
        and path_kinds._glob_pattern(("trainer/backends/**",)).match(p) is not None
        for p in PATHS
    ]


def test_cached_titles_parse_as_uncached() -> None:
    titles = [p.title for p in DEMO] + ["[ci, megatron] fix(scope)!: text", "(1/4) [3/7] feat: x", ""]
    for title in titles * 2:
        assert parse_title(title) == parse_title.__wrapped__(title)


def test_severity_as_before() -> None:
    """The comments are read last and only when needed: the harm found is the one found reading all."""
    for pr in DEMO:
        f = facts(pr, Taxonomy())
        old = " ".join(line for line in f.diff_added if is_comment(line))
        expected = next((m.group(0) for t in (pr.title, f.body, old) if (m := rules._SEVERE.search(t))), None)
        assert rules.severity(pr, f) == expected


def _texts(seed: int) -> list[str]:
    return LINES + _samples(seed, 20_000) + ["\n".join(LINES)]


def test_folding_covers_every_character_re_i_folds_into_ascii() -> None:
    """`folded` writes as ASCII exactly the characters outside it that re.I matches to an ASCII letter."""
    letter = re.compile("[a-z]", re.I)
    folds = {chr(c) for c in range(0x80, 0x110000) if letter.fullmatch(chr(c))}
    assert folds == {"\u0130", "\u0131", "\u017f", "\u212a"}
    for char in folds:
        assert re.fullmatch(folded(char), char, re.I), char


def test_disabled_pre_check_is_necessary() -> None:
    for text in _texts(3):
        if risk_rules._DISABLED.search(text):
            assert risk_rules._may_disable(text), text
    assert risk_rules._may_disable("#   dEf TeSt_x")


def test_severity_pre_check_is_necessary() -> None:
    for text in _texts(4):
        if rules._SEVERE.search(text):
            assert rules._harm_in(text) is not None, text
        assert rules._harm_in(text) == (m.group(0) if (m := rules._SEVERE.search(text)) else None)


def test_option_calls_found_in_joined_lines_are_the_lines_calls() -> None:
    """The joined scan finds a call exactly when some line holds one: it decides for all lines at once."""
    rng = random.Random(5)
    for _ in range(5_000):
        lines = [t for t in _samples(rng.randint(0, 10**9), rng.randint(0, 6)) if "\n" not in t]
        per_line = any(risk_rules._OPTION_CALL.search(line) for line in lines)
        assert bool(risk_rules._OPTION_CALL_IN_LINE.search("\n".join(lines))) == per_line, lines


def test_sourced_scripts_read_at_once_as_line_by_line() -> None:
    rng = random.Random(6)
    samples = [*LINES, "source a.sh; . 'b c.sh' && (. ./d.sh)", 'x "source" . "e.sh"', "foo. bar", "ſource x"]
    for _ in range(5_000):
        lines = [t for t in rng.sample(samples, rng.randint(0, 6)) + _samples(rng.randint(0, 10**9), 2)]
        lines = [line for text in lines for line in text.splitlines()]
        one_by_one = [m.groups() for line in lines for m in risk_rules._SOURCED.finditer(line)]
        joined = "\n".join(lines)
        assert [m.groups() for m in risk_rules._SOURCED_IN_LINES.finditer(joined)] == one_by_one, lines
        if one_by_one:
            assert risk_rules._SOURCING.search(joined)


def test_danger_words_hold_every_files_words() -> None:
    """Searched for the words of all files' lines, each file finds the patterns it finds alone."""
    rng = random.Random(7)
    for _ in range(3_000):
        files = [[t for t in _samples(rng.randint(0, 10**9), rng.randint(0, 4))] for _ in range(3)]
        files = [[line for text in lines for line in text.splitlines()] for lines in files]
        words = danger_words("\n".join(line for lines in files for line in lines))
        for lines, product in zip(files, (True, False, True), strict=True):
            text = "\n".join(lines)
            assert _patterns_in(text, product, words) == _patterns_in(text, product), lines
