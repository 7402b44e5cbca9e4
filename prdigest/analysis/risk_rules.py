"""The judgement risk labels, each from evidence a reader can check: the diff line, the option, the sentence.

Each rule returns (evidence, where it came from) or None. The definitions are the ones the report
states: an option *of this project* removed or a default changed (not flags of other tools in CI
files or scripts), tests deleted or disabled without a replacement, dangerous code (not words in
docs), a measured regression (not its denial), logic changed without a test, a dependency's
version changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from prdigest.analysis.facts import Facts, FileDiff
from prdigest.analysis.taxonomy import (
    is_ci,
    is_dependency,
    is_doc,
    is_example,
    is_support,
    is_test,
    parse_title,
)
from prdigest.models import PullRequest

# The labels these rules judge (the others are facts: reviews, checks, forks, core paths).
JUDGEMENT_LABELS = (
    "config_breaking",
    "tests_removed",
    "security_sensitive",
    "perf_regression",
    "no_tests",
    "dependency_change",
)


class Finding(NamedTuple):
    evidence: str
    source: str  # diff, title, body, paths, reviews, checks
    breaks: bool = False  # users break: see RiskLabel.breaks


Evidence = Finding | tuple[str, str] | None

# --- config_breaking ------------------------------------------------------------------

# An option definition: argparse, click, typer. The flag may sit on the call's line or the next ones.
_OPTION_CALL = re.compile(r"\b(add_argument|\.option|Option|add_option)\s*\(")
_OPTION_WORDS = ("add_argument", "option", "Option")
_QUOTED_FLAG = re.compile(r"""["'](--[a-zA-Z0-9][\w-]*)["']""")
# A config field: "    name: type = default" inside a dataclass or pydantic model.
_FIELD = re.compile(r"^\s{4,}([a-z_][a-z0-9_]*)\s*:\s*[\w\[\]., |\"']+?(?:=\s*(.+?))?\s*(?:#.*)?$")
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
_NEGATED = re.compile(r"\b(no|not|non|without|never)\b[\w\s-]{0,12}$", re.I)
# A script read into another: "source path/x.sh" or ". path/x.sh" (the path is what it names).
_SOURCED = re.compile(r"""(?:^|[;&|(]\s*|\s)(?:source|\.)\s+(?:"([^"]+)"|'([^']+)'|([^\s;&|)]+))""")


def option_flags(lines: list[str]) -> set[str]:
    """Flags defined in these lines: a quoted --flag on an option call's line or the two after it."""
    flags: set[str] = set()
    text = "\n".join(lines)
    if not any(word in text for word in _OPTION_WORDS):
        return flags
    for i, line in enumerate(lines):
        if _OPTION_CALL.search(line):
            for near in lines[i : i + 3]:
                flags.update(_QUOTED_FLAG.findall(near))
    return flags


def project_diffs(f: Facts) -> list[FileDiff]:
    """The project's own code: options of tests, docs, CI files and examples are not its interface
    (its launch scripts are: users run them)."""
    return f.diffs_where(
        lambda p: p.endswith(".py") and not (is_test(p) or is_doc(p) or is_ci(p) or is_example(p))
    )


def option_changes(f: Facts) -> tuple[set[str], set[str]]:
    """The project's options defined in the added lines and in the removed lines."""
    diffs = project_diffs(f)
    return {flag for d in diffs for flag in option_flags(d.added)}, {
        flag for d in diffs for flag in option_flags(d.removed)
    }


def _fields(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        m = _FIELD.match(line)
        if m:
            out[m.group(1)] = (m.group(2) or "").strip()
    return out


# A default worth comparing: a number, a string, a constant or a name; not a call whose help text changed.
_LITERAL = re.compile(r"""^(-?[\d.e_]+|True|False|None|"[^"]*"|'[^']*'|[A-Za-z_][\w.]*)$""")


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
            if old != new and _LITERAL.match(old) and _LITERAL.match(new):
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
        paths = (next(filter(None, m.groups())) for line in lines for m in _SOURCED.finditer(line))
        return {path.rsplit("/", 1)[-1] for path in paths}

    code = f.diffs_where(lambda p: not is_doc(p))
    before = sourced([line for d in code for line in d.removed])
    return sorted(deleted & before - sourced([line for d in code for line in d.added]))


def config_breaking(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    diffs = project_diffs(f)
    defined, undefined = option_changes(f)
    # Still documented or still named by the project's code (an option moved where the excerpt ends).
    mentioned = " ".join(line for d in f.diffs_where(lambda p: not is_test(p)) for line in d.added)
    removed = sorted(flag for flag in undefined - defined if not re.search(rf"{flag}(?![\w-])", mentioned))
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
            if n in after and before[n] != after[n] and _LITERAL.match(before[n]) and _LITERAL.match(after[n])
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
    parsed = parse_title(pr.title)
    if parsed.breaking or "BREAKING CHANGE" in pr.body:
        return t["ev_config_breaking_marker"], "title" if parsed.breaking else "body"
    for where, text in (("title", pr.title), ("body", f.body)):
        for m in _BREAKING_TEXT.finditer(text):
            if not _NEGATED.search(text[max(0, m.start() - 24) : m.start()]):
                return t["ev_config_text"].format(text=quote(sentence_around(text, m.start()))), where
    return None


# --- tests_removed --------------------------------------------------------------------

_DISABLED = re.compile(
    r"(@pytest\.mark\.(skip|xfail)\b(?!if)|unittest\.skip\(|\bdisabled\s*=\s*(True|[\"'])|"
    r"^\s*if:\s*(false|\$\{\{\s*false\s*\}\})\s*$|^\s*#\s*(def test_|@pytest\.mark|class Test))",
    re.I | re.M,  # multi-line, so a file's lines are tested at once before any one line
)
# "disabled='Requires a B200 runner'" gates a test on hardware it needs; it does not drop it.
_PRECONDITION = re.compile(r"(disabled|reason)\s*=\s*[\"'](requires?|needs?|only (on|with))\b", re.I)
_PARKED = re.compile(r"(^|/)(manual|disabled|deprecated|skipped|archive|attic)(/|$)", re.I)


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
        if not _DISABLED.search("\n".join(d.added)):
            continue
        hit = next(
            (line for line in d.added if _DISABLED.search(line) and not _PRECONDITION.search(line)), None
        )
        if hit is not None and not any(_DISABLED.search(line) for line in d.removed):
            return t["ev_tests_skipped"].format(code=quote(hit.strip()), path=d.path), "diff"
    return None


# --- security_sensitive ---------------------------------------------------------------

# Dangerous calls in code, each behind the word it needs (a substring test skips most patterns).
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
_SECURITY_TEXT = re.compile(
    r"\b(security (fix|issue|vulnerability)|cve-\d+|vulnerab\w*|privilege escalation)\b", re.I
)


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


def _patterns_in(text: str, product: bool) -> tuple[list[_Pattern], bool]:
    """The patterns that match somewhere in a file's lines, and whether a credential does: most files
    hold none, and their lines are then never read one by one."""
    lowered = text.lower()
    found = [p for p in _DANGEROUS if p[0].lower() in lowered and (product or not p[2]) and p[1].search(text)]
    secrets = bool(
        (any(w in lowered for w in _SECRET_KEYS) and _SECRET_LITERAL.search(text))
        or (any(w in text for w in _SECRET_ENV_NAMES) and _SECRET_FORWARD.search(text))
    )
    return found, secrets


def is_comment(line: str) -> bool:
    return _COMMENT.match(line) is not None


def _dangerous(line: str, patterns: list[_Pattern], secrets: bool) -> bool:
    if secrets and (_SECRET_LITERAL.search(line) or _SECRET_FORWARD.search(line)):
        return True
    return any(pattern.search(line) for _, pattern, _ in patterns)


def holds_danger(text: str) -> bool:
    """Whether any line of the text may hold a dangerous call or a credential (a test of the whole text)."""
    patterns, secrets = _patterns_in(text, product=True)
    return bool(patterns or secrets)


def dangerous_lines(lines: list[str], product: bool = True) -> Iterator[str]:
    """The lines, comments aside, that hold a dangerous call or a credential; ``product``: code that ships."""
    patterns, secrets = _patterns_in("\n".join(lines), product)
    if patterns or secrets:
        yield from (line for line in lines if not is_comment(line) and _dangerous(line, patterns, secrets))


def _security_code(pr: PullRequest, f: Facts) -> tuple[str, str] | None:
    """The first dangerous line added, or removed from a file that stays, outside tests and docs, that the
    other side of the diff does not hold too (a workflow split in two moves its secrets, it adds none)."""
    deleted = {x.path for x in pr.files or [] if x.status == "removed"}
    diffs = f.diffs_where(lambda p: not (is_test(p) or is_doc(p)))
    sides = []
    for how in ("added", "removed"):
        for d in diffs:
            lines = d.added if how == "added" else d.removed
            if lines and not (how == "removed" and d.path in deleted):
                found = list(dangerous_lines(lines, product=not is_support(d.path)))
                if found:
                    sides.append((how, found))
    if not sides:
        return None
    added = {" ".join(line.split()) for d in diffs for line in d.added}
    removed = {" ".join(line.split()) for d in diffs for line in d.removed}
    for how, found in sides:
        other = removed if how == "added" else added
        for line in found:
            if " ".join(line.split()) not in other:
                return line.strip(), how
    return None


def security_sensitive(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    found = _security_code(pr, f)
    if found:
        line, how = found
        return t[f"ev_security_{how}"].format(code=quote(line)), "diff"
    if f.paths is not None and not f.code_paths:  # a docs page about security is no risk
        return None
    for where, text in (("title", pr.title), ("body", f.body)):
        m = _SECURITY_TEXT.search(text)
        if m:
            return t["ev_security_text"].format(word=m.group(0)), where
    return None


# --- perf_regression ------------------------------------------------------------------

_REGRESSION = re.compile(
    r"(perf(ormance)? regression|throughput (drops?|regress\w*|loss)|\bslow(s|er|ed)? ?down\b|\bslower\b"
    r"|(drops?|regress\w*|slower|costs?) (by |about |roughly )?~?\d+(\.\d+)?\s*%"
    r"|\d+(\.\d+)?\s*% (slower|regression|drop|more memory)|\bmore memory\b|\bOOMs? (again|now)\b)",
    re.I,
)
_MEASURED_COST = re.compile(
    r"(costs?|slower|regress\w*|drops?) (by |about |roughly )?~?\d+(\.\d+)?\s*%"
    r"|\d+(\.\d+)?\s*% (slower|regression)",
    re.I,
)
_DENIAL = re.compile(
    r"\b(no|not|without|negligible|minimal|zero|avoids?|prevents?|never)\b[^.;\n]{0,30}$", re.I
)
_CONFIRMED = re.compile(r"\d+(\.\d+)?\s*%|\bmeasured\b|\bconfirmed\b|\bbenchmark", re.I)


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
        for m in pattern.finditer(text):
            if _DENIAL.search(text[max(0, m.start() - 40) : m.start()]):
                continue  # "no significant slowdown" denies the regression
            found = sentence_around(text, m.start())
            confirmed = bool(_CONFIRMED.search(found))
            key = "ev_perf_confirmed" if confirmed else "ev_perf_suspected"
            return Finding(t[key].format(text=quote(found)), where, breaks=confirmed)
    return None


# --- no_tests -------------------------------------------------------------------------

_LOGIC = re.compile(r"^\s*(?!#|//|\"\"\"|'''|import\b|from\b|logger\.|logging\.|print\()\S")
# Kinds of change that ask for a test; others (docs, CI, refactors, bumps) do not.
_TESTED_KINDS = ("bugfix", "feature", "performance")
_NOT_TESTED_KINDS = ("docs", "ci", "dependency", "revert", "refactor", "testing")


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
    diffs = f.diffs_where(lambda p: p in f.product_paths)
    if f.diffs and not any(_LOGIC.match(line) for d in diffs for line in d.added + d.removed):
        return None  # only comments, imports and logging changed
    dropped = any(x.status == "removed" and x.path in f.product_paths for x in pr.files or [])
    if dropped and not any(_LOGIC.match(line) for d in diffs for line in d.added):
        return None  # code deleted with its module: nothing new to test
    more = f" (+{len(f.product_paths) - 2})" if len(f.product_paths) > 2 else ""
    return t["ev_no_tests"].format(paths=", ".join(f.product_paths[:2]) + more), "paths"


# --- dependency_change ----------------------------------------------------------------

_REQUIREMENT = re.compile(
    r"^\s*[\"']?([A-Za-z0-9][A-Za-z0-9_.\-\[\],]*)\s*(==|>=|<=|~=|!=|<|>|@)\s*[^\s\"',]+"
)
_PINNED = re.compile(
    r"(^\s*FROM\s+\S+[:@]\S+|\bpip3? install\b.*(==|>=|@|\.whl|git\+)"
    r"|\b(ARG|ENV)\s+\w*(VERSION|_REF|_COMMIT|_TAG|_SHA)\w*="
    r"|\bgit (checkout|fetch)\b.*\b[0-9a-f]{7,40}\b"
    r"|\b[A-Z_]*(VERSION|_REF|_COMMIT|_SHA)\s*=\s*[\"']?[\w.\-]+)",
    re.I | re.M,  # multi-line: a file is tested whole before its lines
)
_OWN_VERSION = re.compile(r"^\s*version\s*=", re.I)


_MANIFEST = re.compile(r"(requirements[^/]*\.(txt|in)|\.toml|setup\.(py|cfg)|environment\.ya?ml|Pipfile)$")
_REQUIREMENTS_TXT = re.compile(r"requirements[^/]*\.(txt|in)$")
_JS_OR_GO = re.compile(r"^\s*(\"[\w@/.\-]+\"\s*:\s*\"[\^~]?\d|[\w./\-]+\s+v\d+\.\d+)")
_INSTALL = re.compile(r"\b(?:pip3?|uv pip|python3? -m pip) install\b(.*)")


def _specs(d: FileDiff, lines: list[str]) -> set[str]:
    """What these lines ask for: requirements in manifests; installed packages, base images and version
    pins elsewhere. Flags and line layout are not part of a spec, so a reformatted line changes nothing."""
    out: set[str] = set()
    pinned_only = not (
        _REQUIREMENTS_TXT.search(d.path)
        or _MANIFEST.search(d.path)
        or d.path.endswith(("package.json", "go.mod"))
    )
    if pinned_only and not (_INSTALL.search(joined := "\n".join(lines)) or _PINNED.search(joined)):
        return out  # an image or script file that installs and pins nothing
    for line in lines:
        text = line.split("#", 1)[0].strip().strip(",").strip("\"'")
        if not text or _OWN_VERSION.match(text):
            continue
        if _REQUIREMENTS_TXT.search(d.path):
            out.add(text.replace(" ", ""))
        elif _MANIFEST.search(d.path):
            if _REQUIREMENT.search(line):
                out.add(text.replace(" ", ""))
        elif d.path.endswith(("package.json", "go.mod")):
            if _JS_OR_GO.search(line):
                out.add(text)
        elif m := _INSTALL.search(line):
            out.update(w for w in m.group(1).split() if not w.startswith(("-", "$", "&", "|", "\\")))
        elif _PINNED.search(line):
            out.add(text)
    return out


def _dependency_diffs(f: Facts) -> list[FileDiff]:
    return f.diffs_where(lambda p: is_dependency(p) or (is_support(p) and "docker" in p.lower()))


# A package and the release a spec pins: "flash-attn[cuda]==2.7.0", "ARG VLLM_IMAGE_TAG=v0.9.1", "img:1.2".
_VERSIONED = re.compile(r"([A-Za-z][\w.\-]*?)(?:\[[\w,.\-]+\])?\s*(?:==|~=|>=|=|:)\s*[\"']?v?(\d+(?:\.\d+)+)")


def fold(name: str) -> str:
    """A package name as titles and manifests both spell it: "Flash_Attn" -> "flashattn"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def version_moves(f: Facts) -> list[tuple[str, str, str]]:
    """Packages whose pinned release this PR moves: (name, old, new)."""

    def releases(side: str) -> dict[str, tuple[str, str]]:
        return {
            fold(m.group(1)): (m.group(1), m.group(2))
            for d in _dependency_diffs(f)
            for spec in _specs(d, getattr(d, side))
            for m in _VERSIONED.finditer(spec)
        }

    before = releases("removed")
    if not before:
        return []
    return [
        (name, before[key][1], new)
        for key, (name, new) in sorted(releases("added").items())
        if key in before and before[key][1] != new
    ]


def dependency_change(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    diffs = _dependency_diffs(f)
    # Netted over all files: requirements moved from one file to another change nothing.
    added = {spec: d.path for d in diffs for spec in _specs(d, d.added)}
    # An example that drops a requirement changes nothing users install; one that adds a pin does.
    removed = {spec: d.path for d in diffs if not is_example(d.path) for spec in _specs(d, d.removed)}
    new, gone = sorted(set(added) - set(removed)), sorted(set(removed) - set(added))
    if new or gone:
        paths = sorted({added[s] for s in new} | {removed[s] for s in gone})
        shown = new[:3] + [f"-{spec}" for spec in gone[: max(0, 3 - len(new))]]
        return t["ev_dependency_lines"].format(
            paths=", ".join(paths[:3]), lines=quote("; ".join(shown))
        ), "diff"
    if not f.diffs:  # no diff to read (a GitHub week without diffs): the files alone tell
        deps = [p for p in f.paths or [] if is_dependency(p)]
        if deps:
            return t["ev_dependency"].format(paths=", ".join(deps[:3])), "paths"
    return None


# --- shared helpers -------------------------------------------------------------------


def _line_at(text: str, index: int) -> str:
    start, end = text.rfind("\n", 0, index) + 1, text.find("\n", index)
    return text[start : end if end != -1 else len(text)].strip()


def _code(value: str) -> str:
    return value if len(value) <= 40 else value[:39] + "…"


def quote(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def sentence_around(text: str, index: int) -> str:
    """The sentence that holds text[index] ("8.5%" does not end a sentence)."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, index)), default=0)
    end = _SENTENCE_END.search(text, index)
    return text[start : end.start() if end else len(text)].strip()
