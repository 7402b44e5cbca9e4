"""The diff excerpt: capped, with code shown before tests and docs whatever their path order."""

from __future__ import annotations

from prdigest.sources.diffs import FIRST_SHARE, excerpt


def patch(files: dict[str, int]) -> str:
    out = []
    for path, lines in files.items():
        out += [
            f"diff --git a/{path} b/{path}",
            "index 1..2 100644",
            f"--- a/{path}",
            f"+++ b/{path}",
            "@@ -0,0 +1 @@",
        ]
        out += [f"+{path} line {i}" for i in range(lines)]
    return "\n".join(out)


def test_code_comes_first_and_every_file_keeps_a_share() -> None:
    text = excerpt(patch({"docs/guide.md": 500, "pkg/core.py": 30, "tests/test_core.py": 400}), limit=200)
    lines = text.splitlines()
    assert lines[0] == "diff --git a/pkg/core.py b/pkg/core.py"
    assert "+pkg/core.py line 29" in lines  # the small code file is whole
    assert sum(line.startswith("+docs/guide.md") for line in lines) >= FIRST_SHARE
    assert sum(line.startswith("+") for line in lines) == 200
    assert lines[-1] == f"... ({930 - 200} more changed lines)"
    assert lines.index("diff --git a/tests/test_core.py b/tests/test_core.py") < lines.index(
        "diff --git a/docs/guide.md b/docs/guide.md"
    )


def test_a_small_patch_is_whole_without_a_trailer() -> None:
    text = excerpt(patch({"a.py": 3}))
    assert text.splitlines() == ["diff --git a/a.py b/a.py", "+a.py line 0", "+a.py line 1", "+a.py line 2"]


def test_a_hunks_function_context_is_kept_once_and_costs_nothing() -> None:
    raw = "\n".join(
        [
            "diff --git a/pkg/io.py b/pkg/io.py",
            "@@ -4 +4 @@ def load(path):",
            "-    return read(path)",
            "+    return read(path, safe=True)",
            "@@ -9 +9 @@ def load(path):",
            "+    check(path)",
        ]
    )
    lines = excerpt(raw, limit=2).splitlines()
    assert lines == [
        "diff --git a/pkg/io.py b/pkg/io.py",
        "@@ def load(path):",
        "-    return read(path)",
        "+    return read(path, safe=True)",
        "... (1 more changed lines)",
    ]


def test_blank_changed_lines_are_left_out_and_counted_as_hidden() -> None:
    raw = "\n".join(["diff --git a/a.py b/a.py", "@@ -1 +1,4 @@", "+x = 1", "+", "+   ", "+y = 2", "-"])
    lines = excerpt(raw).splitlines()
    assert lines == ["diff --git a/a.py b/a.py", "+x = 1", "+y = 2", "... (3 more changed lines)"]


def test_a_dangerous_line_past_the_cap_is_kept_as_evidence() -> None:
    body = [f"+x{i} = {i}" for i in range(100)]
    raw = "\n".join(
        [
            "diff --git a/pkg/store.py b/pkg/store.py",
            "@@ -0,0 +1,102 @@",
            *body,
            "+    state = torch.load(path)",
            "+# torch.load(old)",
        ]
    )
    lines = excerpt(raw, limit=20).splitlines()
    assert "+    state = torch.load(path)" in lines  # the call the security rule quotes, found past the cap
    assert "+# torch.load(old)" not in lines  # a comment is no evidence
    assert lines[-1] == f"... ({102 - 20 - 1} more changed lines)"
    assert sum(line.startswith("+x") for line in lines) == 20
