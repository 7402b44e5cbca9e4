"""The judgement risk labels, each from evidence a reader can check: the diff line, the option, the sentence.

Each rule returns (evidence, where it came from) or None. The definitions are the ones the report
states: an option *of this project* removed or a default changed (not flags of other tools in CI
files or scripts), tests deleted or disabled without a replacement, dangerous code (not words in
docs), a measured regression (not its denial), logic changed without a test, a dependency's
version changed.

The rules live by concern: options, tests, performance and logic here; security in
`risk_security`, dependencies in `risk_deps`; what they share in `risk_common` (all importable
from here).
"""

from __future__ import annotations

import re

from prdigest.analysis.facts import Facts, FileDiff
from prdigest.analysis.risks.behaviour import may_change_behaviour, product_lines
from prdigest.analysis.risks.common import (
    JUDGEMENT_LABELS,
    LITERAL,
    Evidence,
    Finding,
    folded,
    may_hold,
    quote,
    sentence_around,
)
from prdigest.analysis.risks.deps import dependency_change, fold, installs_change, version_moves
from prdigest.analysis.risks.options import option_breaking
from prdigest.analysis.risks.security import security_sensitive
from prdigest.analysis.taxonomy import DEFAULT_TAGS, parse_title
from prdigest.danger import dangerous_lines, holds_danger, is_comment
from prdigest.models import PullRequest
from prdigest.path_kinds import is_ci, is_doc, is_example, is_test

__all__ = [
    "JUDGEMENT_LABELS",
    "Evidence",
    "Finding",
    "config_breaking",
    "dangerous_lines",
    "dependency_change",
    "fold",
    "holds_danger",
    "installs_change",
    "is_comment",
    "new_options",
    "no_tests",
    "option_changes",
    "option_flags",
    "perf_regression",
    "project_diffs",
    "quote",
    "security_sensitive",
    "sentence_around",
    "sourced_gone",
    "tests_removed",
    "version_moves",
]

# --- config_breaking ------------------------------------------------------------------

# An option definition: argparse, click, typer. The flag may sit on the call's line or the next ones.
_OPTION_CALL = re.compile(r"\b(add_argument|\.option|Option|add_option)\s*\(")
# _OPTION_CALL within one line of lines joined by "\n": a file without a match is not read line by line.
_OPTION_CALL_IN_LINE = re.compile(r"\b(?:add_argument|\.option|Option|add_option)[^\S\n]*\(")
_OPTION_WORDS = ("add_argument", "option", "Option")
_QUOTED_FLAG = re.compile(r"""["'](--[a-zA-Z0-9][\w-]*)["']""")
# A config field: "    name: type = default" inside a dataclass or pydantic model.
# Possessive parts: the type runs up to "=", "#" or the end, the default up to "#" (stripped by the reader),
# so a long line is read once, never split every way.
_FIELD = re.compile(r"^\s{4,}+([a-z_][a-z0-9_]*+)\s*+:\s*+[\w\[\]., |\"']++(?:=\s*+([^#]++))?(?:#.*)?$")
_CONFIG_FILE = re.compile(r"(config|settings|option|argument|args|param|flags?)[^/]*\.py$", re.I)
# An option left unset now gets a value in code: "if args.x is None: args.x = ...".
_DERIVED_DEFAULT = re.compile(
    r"if\s+args\.(\w+)\s+is\s+None\b[^\n]*:\s*\n(?:\s*#[^\n]*\n)*\s*args\.\1\s*=\s*([^\n]+)"
)
_DEFAULT = re.compile(r"\bdefault\s*=\s*([^,)]+)")
_BREAKING_TEXT = re.compile(
    r"\b(breaking change|backwards?[- ]incompatible|breaks? (backwards? )?compatibility"
    r"|no longer (supported|accepted)"
    r"|(checkpoint|ckpt|on-disk|serialization|storage) (format|layout) (changes?|changed)"
    r"|changes? the (checkpoint|ckpt|on-disk|serialization|storage) (format|layout)"
    r"|old (checkpoints?|configs?) (can no longer|cannot|can't|won't) be)\b",
    re.I,
)
# Every match of _BREAKING_TEXT holds one of these (lower case): a text without them is not searched.
_BREAKING_WORDS = (
    "breaking change", "incompatible", "compatibility", "no longer", "format", "layout", "old checkpoint",
    "old config",
)  # fmt: skip
_NEGATED = re.compile(r"\b(no|not|non|without|never)\b[\w\s-]{0,12}$", re.I)
# A script read into another: "source path/x.sh" or ". path/x.sh" (the path is what it names).
_SOURCED = re.compile(r"""(?:^|[;&|(]\s*|\s)(?:source|\.)\s+(?:"([^"]+)"|'([^']+)'|([^\s;&|)]+))""")
_SOURCING = re.compile(r"(?:source|\.)\s")  # what every match of _SOURCED holds
# _SOURCED kept within a line, over lines joined by "\n": no match reaches into the next line, so its matches
# are those of _SOURCED over each line in turn, found in one scan.
_SOURCED_IN_LINES = re.compile(
    r"""(?:^|[;&|(][^\S\n]*|[^\S\n])(?:source|\.)[^\S\n]+(?:"([^"\n]+)"|'([^'\n]+)'|([^\s;&|)]+))""", re.M
)


def option_flags(lines: list[str]) -> set[str]:
    """Flags defined in these lines: a quoted --flag on an option call's line or the two after it."""
    flags: set[str] = set()
    text = "\n".join(lines)
    if not any(word in text for word in _OPTION_WORDS) or not _OPTION_CALL_IN_LINE.search(text):
        return flags
    for i, line in enumerate(lines):
        if _OPTION_CALL.search(line):
            for near in lines[i : i + 3]:
                flags.update(_QUOTED_FLAG.findall(near))
    return flags


def project_diffs(f: Facts) -> list[FileDiff]:
    """The project's own code: options of tests, docs, CI files and examples are not its interface
    (its launch scripts are: users run them). One list per PR, shared by its readers: read it only."""
    return f.once(_project_diffs)


def _project_diffs(f: Facts) -> list[FileDiff]:
    return f.diffs_where(
        lambda p: p.endswith(".py") and not (is_test(p) or is_doc(p) or is_ci(p) or is_example(p))
    )


def option_changes(f: Facts) -> tuple[frozenset[str], frozenset[str]]:
    """The project's options defined in the added lines and in the removed lines (read once per PR: the
    risk rules, the importance and the summary all ask)."""
    return f.once(_option_changes)


def _option_changes(f: Facts) -> tuple[frozenset[str], frozenset[str]]:
    diffs = project_diffs(f)
    return frozenset(flag for d in diffs for flag in option_flags(d.added)), frozenset(
        flag for d in diffs for flag in option_flags(d.removed)
    )


# A config class in a hunk's context ("class TrainConfig(BaseModel):"): its fields are options users set.
_CONFIG_CLASS = re.compile(r"\bclass\s+(\w*(?:Config|Args|Arguments|Settings|Options|Params))\b")
# A field of a class body with its default, one level in: "    lr: float = 1e-3".
_CLASS_FIELD = re.compile(r"^(?: {4}|\t)([a-z][a-z0-9_]*)\s*:\s*[A-Za-z_\[\"'][^=]*?=")


def new_options(f: Facts) -> list[str]:
    """Options users can set that the PR adds: quoted flags of option calls, and fields with a default of
    the config classes its hunks sit in (``DataConfig.fraction``); a renamed or moved one is not new."""
    return list(f.once(_new_options))  # a copy: the importance and the summary both ask


def _new_options(f: Facts) -> list[str]:
    defined, undefined = option_changes(f)
    found = sorted(defined - undefined)
    for d in project_diffs(f):
        owners = [m.group(1) for c in d.contexts if (m := _CONFIG_CLASS.search(c))]
        if owners:
            before = {m.group(1) for line in d.removed if (m := _CLASS_FIELD.match(line))}
            added = {m.group(1) for line in d.added if (m := _CLASS_FIELD.match(line))}
            found += [f"{owners[0]}.{name}" for name in sorted(added - before)]
    return found


def _fields(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        m = _FIELD.match(line)
        if m:
            out[m.group(1)] = (m.group(2) or "").strip()
    return out


def _changed_default(d: FileDiff) -> tuple[str, str, str] | None:
    """An option line changed in its default alone: (its flag or the file, old default, new default)."""
    removed = {
        _DEFAULT.sub("default=", " ".join(line.split())): line for line in d.removed if _DEFAULT.search(line)
    }
    for line in d.added:
        after = _DEFAULT.search(line)
        before_line = removed.get(_DEFAULT.sub("default=", " ".join(line.split()))) if after else None
        if after and before_line:
            before = _DEFAULT.search(before_line)
            assert before is not None
            old, new = before.group(1).strip(), after.group(1).strip()
            if old != new and LITERAL.match(old) and LITERAL.match(new):
                flags = _QUOTED_FLAG.findall(line) or sorted(option_flags(d.removed))
                return (flags[0] if len(flags) == 1 else d.path.rsplit("/", 1)[-1]), old, new
    return None


def sourced_gone(pr: PullRequest, f: Facts) -> list[str]:
    """Deleted files that the project's scripts sourced and source no more: users' launch scripts are
    copies of those and still source them."""
    deleted = {x.path.rsplit("/", 1)[-1] for x in pr.files or [] if x.status == "removed"}
    if not deleted:
        return []

    def sourced(lines: list[str]) -> set[str]:
        text = "\n".join(lines)
        if not _SOURCING.search(text):  # one scan that skips to an "s" or a "."
            return set()
        paths = (next(filter(None, m.groups())) for m in _SOURCED_IN_LINES.finditer(text))
        return {path.rsplit("/", 1)[-1] for path in paths}

    code = f.diffs_where(lambda p: not is_doc(p))
    before = sourced([line for d in code for line in d.removed])
    return sorted(deleted & before - sourced([line for d in code for line in d.added]))


def config_breaking(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    diffs = project_diffs(f)
    defined, undefined = option_changes(f)
    # Still documented or still named by the project's code (an option moved where the excerpt ends);
    # the added lines are joined only when an option went.
    dropped = undefined - defined
    mentioned = (
        " ".join(line for d in f.diffs_where(lambda p: not is_test(p)) for line in d.added) if dropped else ""
    )
    removed = sorted(flag for flag in dropped if not re.search(rf"{flag}(?![\w-])", mentioned))
    if removed:
        return Finding(t["ev_config_removed"].format(flags=", ".join(removed[:4])), "diff", breaks=True)
    scripts = sourced_gone(pr, f)
    if scripts:
        more = f" (+{len(scripts) - 3})" if len(scripts) > 3 else ""
        return Finding(
            t["ev_config_sourced"].format(files=", ".join(scripts[:3]) + more), "diff", breaks=True
        )
    for d in diffs:
        m = _DERIVED_DEFAULT.search("\n".join(d.added)) if _CONFIG_FILE.search(d.path) else None
        if m and f"--{m.group(1).replace('_', '-')}" not in defined - undefined:  # not an option added here
            flag = f"--{m.group(1).replace('_', '-')}"
            return t["ev_config_derived"].format(
                name=flag, value=_code(m.group(2).strip()), path=d.path
            ), "diff"
    for d in diffs:
        if not _CONFIG_FILE.search(d.path):
            continue
        before, after = _fields(d.removed), _fields(d.added)
        gone = [name for name in before if name not in after and not name.startswith("_")]
        if gone and not after:  # fields removed, none added in their place in this file
            return Finding(
                t["ev_config_field_removed"].format(fields=", ".join(gone[:4]), path=d.path), "diff", True
            )
        if gone and after:
            new = [name for name in after if name not in before]
            if new:
                text = t["ev_config_field_renamed"].format(old=gone[0], new=new[0], path=d.path)
                return Finding(text, "diff", breaks=True)
        changed = [
            n
            for n in before
            if n in after and before[n] != after[n] and LITERAL.match(before[n]) and LITERAL.match(after[n])
        ]
        if changed:
            name = changed[0]
            return t["ev_config_default"].format(
                name=name, old=_code(before[name]), new=_code(after[name]), path=d.path
            ), "diff"
        changed_default = _changed_default(d)
        if changed_default:
            name, before_value, after_value = changed_default
            return t["ev_config_default"].format(
                name=name, old=_code(before_value), new=_code(after_value), path=d.path
            ), "diff"
    exposed = option_breaking(pr.options, f, t)
    if exposed is not None:
        return exposed
    parsed = parse_title(pr.title)
    if parsed.breaking or "BREAKING CHANGE" in pr.body:
        return t["ev_config_breaking_marker"], "title" if parsed.breaking else "body"
    for where, text in (("title", pr.title), ("body", f.body)):
        if not may_hold(text, _BREAKING_WORDS):
            continue
        for m in _BREAKING_TEXT.finditer(text):
            if not _NEGATED.search(text[max(0, m.start() - 24) : m.start()]):
                return t["ev_config_text"].format(text=quote(sentence_around(text, m.start()))), where
    return None


# --- tests_removed --------------------------------------------------------------------

_DISABLED = re.compile(
    r"(@pytest\.mark\.(skip|xfail)\b(?!if)|unittest\.skip\(|\bdisabled\s*=\s*(True|[\"'])|"
    r"^[ \t]*if:\s*(false|\$\{\{\s*false\s*\}\})\s*$|^[ \t]*#\s*(def test_|@pytest\.mark|class Test))",
    re.I | re.M,  # multi-line, so a file's lines are tested at once before any one line
)
# Every match of _DISABLED holds one of these (lower case), or a commented-out test: most files hold
# neither, and skip the regex (every test file holds "def test_", so the words are the markers').
_DISABLED_WORDS = ("@pytest.mark.skip", "@pytest.mark.xfail", "unittest.skip(", "disabled", "if:")
_DISABLED_COMMENTED = re.compile(r"#\s*(?:def test_|@pytest\.mark|class test)")  # of `folded` text


def _may_disable(text: str) -> bool:
    """False only when _DISABLED cannot match ``text``."""
    lowered = folded(text)
    return any(map(lowered.__contains__, _DISABLED_WORDS)) or _DISABLED_COMMENTED.search(lowered) is not None


# "disabled='Requires a B200 runner'" gates a test on hardware it needs; it does not drop it.
_PRECONDITION = re.compile(r"(disabled|reason)\s*=\s*[\"'](requires?|needs?|only (on|with))\b", re.I)
_PARKED = re.compile(r"(^|/)(manual|disabled|deprecated|skipped|archive|attic)(/|$)", re.I)


_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)")
_MARKER_SPAN = 12  # lines from a marker to the test it decorates (a multi-line condition and reason)


def _marks_new_test(d: FileDiff, i: int) -> bool:
    """Whether the disabling marker at ``d.added[i]`` decorates a test the PR adds: a new test that starts
    skipped or expected to fail removes nothing."""
    removed = {m.group(1) for line in d.removed if (m := _TEST_DEF.match(line))}
    for line in d.added[i + 1 : i + 1 + _MARKER_SPAN]:
        m = _TEST_DEF.match(line)
        if m:
            return m.group(1) not in removed
    return False


def tests_removed(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    files = pr.files or []
    gone = [x for x in files if x.status == "removed" and is_test(x.path)]
    lost = sum(x.deletions or 0 for x in gone)
    written = sum(x.additions or 0 for x in files if is_test(x.path) and x.status != "removed")
    if gone and written * 2 < lost:  # a test rewritten elsewhere with as much coverage is no loss
        return t["ev_tests_removed"].format(paths=", ".join(x.path for x in gone[:3])), "paths"
    parked = [
        x
        for x in files
        if x.status == "renamed" and is_test(x.previous_path or "") and _PARKED.search(x.path)
    ]
    if parked:
        return t["ev_tests_parked"].format(paths=", ".join(x.path for x in parked[:3])), "paths"
    new = {x.path for x in files if x.status == "added"}  # a new test that starts disabled removes nothing
    for d in f.diffs_where(lambda p: (is_test(p) or is_ci(p)) and p not in new):
        added = "\n".join(d.added)
        if not (_may_disable(added) and _DISABLED.search(added)):
            continue
        hit = next(
            (
                line
                for i, line in enumerate(d.added)
                if _DISABLED.search(line) and not _PRECONDITION.search(line) and not _marks_new_test(d, i)
            ),
            None,
        )
        if hit is not None and not any(_DISABLED.search(line) for line in d.removed):
            return t["ev_tests_skipped"].format(code=quote(hit.strip()), path=d.path), "diff"
    return None


# --- perf_regression ------------------------------------------------------------------

_REGRESSION = re.compile(
    r"(perf(ormance)? regression|throughput (drops?|regress\w*|loss)|\bslow(s|er|ed)? ?down\b|\bslower\b"
    r"|(drops?|regress\w*|slower|costs?) (by |about |roughly )?~?\d+(\.\d+)?\s*%"
    r"|(?<![\d.])\d+(\.\d+)?\s*% (slower|regression|drop|more memory)|\bmore memory\b|\bOOMs? (again|now)\b)",
    re.I,
)
_MEASURED_COST = re.compile(
    r"(costs?|slower|regress\w*|drops?) (by |about |roughly )?~?\d+(\.\d+)?\s*%"
    r"|(?<![\d.])\d+(\.\d+)?\s*% (slower|regression)",
    re.I,
)
# Every match of _REGRESSION holds one of these (lower case); every match of _MEASURED_COST holds "%".
_REGRESSION_WORDS = ("regress", "throughput", "slow", "%", "more memory", "oom")
_DENIAL = re.compile(
    r"\b(no|not|without|negligible|minimal|zero|avoids?|prevents?|never)\b[^.;\n]{0,30}$", re.I
)
_CONFIRMED = re.compile(r"(?<![\d.])\d+(\.\d+)?\s*%|\bmeasured\b|\bconfirmed\b|\bbenchmark", re.I)


def perf_regression(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    code = [d.added for d in f.diffs_where(lambda p: not (is_test(p) or is_doc(p)))]
    # A cost a comment names is a percentage: files without one are not read line by line.
    comments = "\n".join(
        line for lines in code if "%" in "".join(lines) for line in lines if is_comment(line)
    )
    for where, text, pattern in (
        ("title", pr.title, _REGRESSION),
        ("body", f.body, _REGRESSION),
        ("diff", comments, _MEASURED_COST),  # a code comment counts when it names its cost
    ):
        if not may_hold(text, _REGRESSION_WORDS):  # most titles and bodies name no cost: no regex over them
            continue
        for m in pattern.finditer(text):
            if _DENIAL.search(text[max(0, m.start() - 40) : m.start()]):
                continue  # "no significant slowdown" denies the regression
            found = sentence_around(text, m.start())
            confirmed = bool(_CONFIRMED.search(found))
            key = "ev_perf_confirmed" if confirmed else "ev_perf_suspected"
            return Finding(t[key].format(text=quote(found)), where, breaks=confirmed)
    return None


# --- no_tests -------------------------------------------------------------------------

# Kinds of change that ask for a test; others (docs, CI, refactors, bumps) do not.
_TESTED_KINDS = tuple(tag.name for tag in DEFAULT_TAGS if tag.tested)
_NOT_TESTED_KINDS = tuple(tag.name for tag in DEFAULT_TAGS if tag.tested is False)
# A change for one kind of hardware: what no CI runner holds, so no test could run it (SPEC: "where a
# test would be expected").
_HARDWARE = re.compile(
    r"\b(hardware|(?:non-)?nvlink|neuron|npu|rocm|mi\d{3}x?|blackwell|hopper|sm\d{2,3}|gb\d{3}|[hab]\d{3}"
    r"|tpu|xpu|hpu|gaudi|ascend|multi-?node)\b",
    re.I,
)
# What a run reports rather than what it computes: metrics and logs, which tests seldom pin down.
_TELEMETRY = re.compile(r"\b(metrics?|logging|logs?|log_\w+|telemetry|wandb|tensorboard)\b", re.I)


def no_tests(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    if f.paths is None or f.test_paths or not f.product_paths:
        return None
    kinds = [tag for tag in tags if tag in _TESTED_KINDS]
    if not kinds and any(tag in _NOT_TESTED_KINDS for tag in tags):
        return None
    parsed = parse_title(pr.title)
    if parsed.scope in ("docs", "doc", "ci", "build") or any(
        b in ("docs", "ci", "doc") for b in parsed.brackets
    ):
        return None
    dropped = any(x.status == "removed" and x.path in f.product_set for x in pr.files or [])
    if f.diffs and not may_change_behaviour(product_lines(f), parsed.text, dropped):
        return None
    more = f" (+{len(f.product_paths) - 2})" if len(f.product_paths) > 2 else ""
    evidence = t["ev_no_tests"].format(paths=", ".join(f.product_paths[:2]) + more)
    # For hardware no CI runner holds a test may be impossible, and what a run reports is seldom tested:
    # worth a look, not a risk of the week.
    weak = _HARDWARE.search(pr.title) or _TELEMETRY.search(parsed.text)
    return Finding(evidence, "paths", strength="weak" if weak else "strong")


def _code(value: str) -> str:
    return value if len(value) <= 40 else value[:39] + "…"
