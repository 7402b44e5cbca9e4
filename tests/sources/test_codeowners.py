"""A repository's CODEOWNERS read as GitHub reads it: gitignore patterns (without negation or ranges),
the last matching line winning, owners as written; and bounded, whatever the file or the paths hold."""

from __future__ import annotations

import itertools
import logging
import random
import time

import pytest

from prdigest.sources.github import codeowners
from prdigest.sources.github.codeowners import MAX_PATH, MAX_RULES, CodeOwners, parse, parse_line


def owners_of(text: str, path: str) -> tuple[str, ...]:
    found = parse(text)
    assert found is not None
    return found.owners_of(path)


def matches(pattern: str, path: str) -> bool:
    rule = parse_line(f"{pattern} @owner")
    assert rule is not None, pattern
    return CodeOwners([rule]).owners_of(path) == ("owner",)


FILE = """\
# Everything not owned below: the maintainers.
*                   @maintainers
*.py                @acme/python        # inline comment: not an owner
/docs/              @writer
build/              @release
/scripts/*          ops@example.com     @ana
**/fixtures         @qa
/src/**/gen/*.h     @codegen
/src/vendored       # no owners: nobody reviews vendored code
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", ("maintainers",)),
        ("tool.py", ("acme/python",)),  # the later *.py wins over *
        ("deep/down/tool.py", ("acme/python",)),  # no slash in the pattern: any depth
        ("docs/guide.md", ("writer",)),
        ("docs/api/ref.py", ("writer",)),  # /docs/ comes after *.py: it wins, at any depth below
        ("src/docs/guide.md", ("maintainers",)),  # a leading slash anchors at the root
        ("build/out.txt", ("release",)),
        ("src/build/x/out.txt", ("release",)),  # "build/": a directory of that name anywhere
        ("build", ("maintainers",)),  # a file named build is not the directory
        ("scripts/deploy.sh", ("ops@example.com", "ana")),  # an email, as written
        ("scripts/ci/run.sh", ("maintainers",)),  # "scripts/*": its own files, not deeper ones
        ("fixtures/a.json", ("qa",)),
        ("tests/unit/fixtures/b.json", ("qa",)),  # **/ at any depth
        ("src/gen/api.h", ("codegen",)),  # ** also matches no level at all
        ("src/a/b/gen/api.h", ("codegen",)),
        ("src/a/gen/sub/api.h", ("maintainers",)),
        ("src/vendored/lib.py", ()),  # a line without owners leaves its files unowned
        ("src/vendored", ()),
        ("src/vendored_not/lib.c", ("maintainers",)),
    ],
)
def test_the_last_matching_line_wins(path: str, expected: tuple[str, ...]) -> None:
    assert owners_of(FILE, path) == expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "a/b/c.py", True),
        ("*.py", "a.pyc", False),
        ("*.py", "apy", False),
        ("/*.py", "a.py", True),
        ("/*.py", "lib/a.py", False),
        ("docs", "docs/a.md", True),  # a name alone: a file or a directory, anywhere
        ("docs", "x/docs", True),
        ("docs", "docsx/a.md", False),
        ("/docs", "x/docs/a.md", False),
        ("docs/", "docs", False),  # a trailing slash: only below a directory
        ("docs/", "x/docs/a.md", True),
        ("/docs/", "x/docs/a.md", False),
        ("src/gen", "src/gen/a.c", True),  # a slash inside anchors at the root
        ("src/gen", "lib/src/gen/a.c", False),
        ("docs/*", "docs/a.md", True),
        ("docs/*", "docs/sub/a.md", False),
        ("docs/**", "docs/sub/a.md", True),
        ("docs/**", "docs", False),
        ("**", "any/thing", True),
        ("**/", "top", False),
        ("**/", "a/b", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b/c", True),
        ("a/**/b", "x/a/b", False),
        ("f?o", "foo", True),
        ("f?o", "fo", False),
        ("f?o", "f/o", False),
        ("*a*b", "xaxb", True),
        ("*a*b", "xbxa", False),
        ("te*st*", "test", True),
        ("My\\ Docs/", "My Docs/a.md", True),  # an escaped space is part of the pattern
        ("f\\*o", "f*o", True),
        ("f\\*o", "foo", False),
        ("Docs/", "docs/a.md", False),  # paths are case-sensitive, as on GitHub
    ],
)
def test_gitignore_patterns(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_comments_and_an_escaped_hash() -> None:
    text = "* @all\n# /docs/ @nobody\n   # indented comment\n\\#notes.md @x\n*.md @md # @not-an-owner\n"
    found = parse(text)
    assert found is not None
    assert [r.pattern for r in found.rules] == ["*", "*.md"]
    # GitHub does not honour "\#": the line stays a comment, and "#notes.md" keeps the owner of *.
    assert found.owners_of("#notes.md") == ("md",)
    assert found.owners_of("#notes.txt") == ("all",)
    assert found.owners_of("guide.md") == ("md",)


@pytest.mark.parametrize(
    "line",
    [
        "!*.md @x",  # negation does not work in CODEOWNERS
        "*.[ch] @x",  # nor do ranges
        "src/ bob",  # neither "@login" nor an email
        "src/ @acme/team/sub",
        "src/ @",
        "src/ @bad!name",
        "src/ a@b",  # an email needs a domain with a dot
        "src//lib @x",  # an empty level
        "/ @x",
        "src\\",  # a pattern ending in a lone backslash
        "x" * (codeowners.MAX_PATTERN + 1) + " @x",
        "src/ @x" + " " * codeowners.MAX_LINE,
    ],
)
def test_a_line_github_would_reject_is_skipped_and_neither_owns_nor_unowns(line: str) -> None:
    assert parse_line(line) is None
    found = parse(f"* @all\n{line}\n")
    assert found is not None and found.owners_of("src/lib/a.md") == ("all",)


def test_owners_as_written_each_once_and_a_line_without_owners() -> None:
    rule = parse_line("  /api/  @Ana @acme/Web-Team dev.ops@example.co.uk @ana  @Ana ")
    assert rule is not None
    assert rule.owners == ("Ana", "acme/Web-Team", "dev.ops@example.co.uk", "ana")
    unowned = parse_line("/api/legacy/")
    assert unowned is not None and unowned.owners == ()


def test_owners_of_several_paths_first_seen_order_without_the_author() -> None:
    found = parse("* @lead\n*.py @Ana @bob\n/web/ @carol @ana\n/web/vendor/\n")
    assert found is not None
    paths = ["web/app.js", "core/x.py", "web/vendor/lib.js", "README.md"]
    assert found.owners(paths) == ["carol", "ana", "bob", "lead"]  # logins ignore case: Ana is ana
    assert found.owners(paths, leave_out="ANA") == ["carol", "bob", "lead"]
    assert found.owners(["web/vendor/lib.js"]) == []


def test_a_byte_order_mark_and_windows_line_ends() -> None:
    assert owners_of("\ufeff*.py @py\r\n/docs/ @writer\r\n", "docs/a.py") == ("writer",)
    assert owners_of("\ufeff*.py @py\r\n", "a.py") == ("py",)


# --- agreement with gitignore --------------------------------------------------------------


def test_patterns_match_as_pathspecs_gitignore_does() -> None:
    """Every pattern of a small alphabet (stars, ``**``, ``?``, anchors, trailing slashes) against every
    path of up to three levels: the same answer as pathspec's gitignore patterns."""
    pathspec = pytest.importorskip("pathspec.patterns.gitignore.basic")
    levels = ["a", "ab", "*", "**", "a*", "*b", "?", "a?b", "*a*"]
    names = ["a", "b", "ab", "ba", "aab", "axb"]
    paths = ["/".join(p) for depth in (1, 2, 3) for p in itertools.product(names, repeat=depth)]
    patterns = {
        lead + "/".join(body) + trail
        for depth in (1, 2, 3)
        for body in itertools.product(levels, repeat=depth)
        for lead, trail in [("", ""), ("/", ""), ("", "/"), ("/", "/")]
    }
    sample = sorted(patterns)[:: max(1, len(patterns) // 800)]
    differ = []
    for pattern in sample:
        rule = parse_line(f"{pattern} @x")
        assert rule is not None, pattern
        ours = CodeOwners([rule])
        theirs = pathspec.GitIgnoreBasicPattern(pattern)
        differ += [
            (pattern, path)
            for path in paths
            if bool(ours.owners_of(path)) != (theirs.match_file(path) is not None)
        ]
    assert len(sample) > 700 and differ == []


# --- untrusted text ------------------------------------------------------------------------


def test_a_file_github_would_not_load_names_nobody(caplog: pytest.LogCaptureFixture) -> None:
    started = time.perf_counter()
    assert parse("* @x\n" + "#" * codeowners.MAX_BYTES) is None
    assert parse("".join(f"/dir{i}/ @x\n" for i in range(MAX_RULES + 1))) is None
    assert time.perf_counter() - started < 3
    assert "3 MB or more" in caplog.text and f"over {MAX_RULES} rules" in caplog.text


def test_patterns_that_backtrack_cost_linear_time() -> None:
    """Patterns on which a backtracking regex takes minutes, against long crafted paths."""
    hostile = ["**/*a*a*a*a*a*b", "a/**/a/**/a/**/a/**/b", "*a?a?a?a?a?a?a?a?a?b*", "/**/**/a*a*a*a*b/**"]
    found = parse("".join(f"{p} @x\n" for p in hostile) + "*c @c\n")
    assert found is not None
    paths = ["a" * 1000, "a/" * 500 + "c", "/".join(["a" * 40] * 24), "a" * 999 + "b"]
    started = time.perf_counter()
    got = [found.owners_of(path) for path in paths]
    assert time.perf_counter() - started < 1
    assert got == [(), ("c",), (), ("x",)]


def test_matching_work_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    rules = "* @all\n" + "".join(f"**/a/**/a/**/a/**/n{i}* @o{i}\n" for i in range(MAX_RULES - 1))
    found = parse(rules)
    assert found is not None
    paths = [f"{'a/' * 60}n{i}x{k}" for k in range(40) for i in range(0, MAX_RULES, 997)]
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING):
        got = [found.owners_of(path) for path in paths]
    assert time.perf_counter() - started < 5
    assert "matching took too long" in caplog.text
    assert got[:2] == [("o0",), ("o997",)] and got[-1] == ()  # the first paths were matched, not the last


def test_a_path_too_long_to_be_real_has_no_owners() -> None:
    found = parse("* @all\n")
    assert found is not None
    assert found.owners_of("a" * MAX_PATH) == ("all",)
    assert found.owners_of("a" * (MAX_PATH + 1)) == ()
    assert found.owners_of("") == () and found.owners_of("a//b") == ()


def test_garbage_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "ab*?/\\[]!#@ .\t\x00\u2028é中-_"
    for _ in range(3000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        rule = parse_line(line)
        if rule is not None:
            CodeOwners([rule]).owners_of("a/b/c.py")
    text = "".join(rng.choice(alphabet + "\n") for _ in range(20_000))
    found = parse(text)
    assert found is not None
    found.owners(["a", "a/b", "é/中"])
