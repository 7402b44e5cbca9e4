"""The dependency_change rule: a dependency's version changed, read from the manifests' diffs (requirements,
pyproject, setup, environment files, package.json, go.mod, pip install lines)."""

from __future__ import annotations

import re

from prdigest.analysis.facts import Facts, FileDiff
from prdigest.analysis.risks.common import Evidence, may_hold, quote
from prdigest.models import PullRequest
from prdigest.path_kinds import is_ci, is_dependency, is_example, is_support

# --- dependency_change ----------------------------------------------------------------

_REQUIREMENT = re.compile(
    r"^\s*[\"']?([A-Za-z0-9][A-Za-z0-9_.\-\[\],]*)\s*(==|>=|<=|~=|!=|<|>|@)\s*[^\s\"',]+"
)
_PINNED = re.compile(
    r"(^[ \t]*FROM\s+\S+[:@]\S+|\bpip3? install\b.*(==|>=|@|\.whl|git\+)"
    r"|\b(ARG|ENV)\s+\w*(VERSION|_REF|_COMMIT|_TAG|_SHA)\w*="
    r"|\bgit (checkout|fetch)\b.*\b[0-9a-f]{7,40}\b"
    r"|\b[A-Z_]*(VERSION|_REF|_COMMIT|_SHA)\s*=\s*[\"']?[\w.\-]+)",
    re.I | re.M,  # read line by line: "^" is a line's start either way
)
# Every match of _PINNED holds one of these (lower case); every match of _INSTALL holds "pip". Most lines
# hold neither, and skip the regexes (_PINNED costs milliseconds on a long file).
_PINNED_WORDS = ("from", "pip", "git ", "version", "_ref", "_commit", "_tag", "_sha")
_OWN_VERSION = re.compile(r"^\s*version\s*=", re.I)


_MANIFEST = re.compile(r"(requirements[^/]*\.(txt|in)|\.toml|setup\.(py|cfg)|environment\.ya?ml|Pipfile)$")
_REQUIREMENTS_TXT = re.compile(r"requirements[^/]*\.(txt|in)$")
_JS_OR_GO = re.compile(r"^\s*(\"[\w@/.\-]+\"\s*:\s*\"[\^~]?\d|[\w./\-]+\s+v\d+\.\d+)")
_INSTALL = re.compile(r"\b(?:pip3?|uv pip|python3? -m pip) install\b(.*)")


def _specs(d: FileDiff, lines: list[str]) -> set[str]:
    """What these lines ask for: requirements in manifests; installed packages, base images and version
    pins elsewhere. Flags and line layout are not part of a spec, so a reformatted line changes nothing."""
    out: set[str] = set()
    # What kind of file it is, decided once for all its lines.
    requirements_txt = _REQUIREMENTS_TXT.search(d.path) is not None
    manifest = _MANIFEST.search(d.path) is not None
    js_or_go = d.path.endswith(("package.json", "go.mod"))
    if not (requirements_txt or manifest or js_or_go):
        # An image or a script: its lines count when they install or pin, and each of those holds "pip"
        # or a pin's word. The others are never searched (_PINNED is slow: most files install nothing).
        lines = [line for line in lines if may_hold(line, _PINNED_WORDS)]
    for line in lines:
        text = line.split("#", 1)[0].strip().strip(",").strip("\"'")
        if not text or _OWN_VERSION.match(text):
            continue
        if requirements_txt:
            out.add(text.replace(" ", ""))
        elif manifest:
            if _REQUIREMENT.search(line):
                out.add(text.replace(" ", ""))
        elif js_or_go:
            if _JS_OR_GO.search(line):
                out.add(text)
        elif m := _INSTALL.search(line):
            out.update(w for w in m.group(1).split() if not w.startswith(("-", "$", "&", "|", "\\")))
        elif _PINNED.search(line):
            out.add(text)
    return out


def _side_specs(f: Facts, d: FileDiff, side: str) -> set[str]:
    """`_specs` of one side ("added", "removed") of one of the PR's files, read once per PR: the upgrade
    and the dependency rules both ask. Read-only."""
    memo = f.once(_new_spec_memo)
    key = (id(d), side)  # the PR's facts hold ``d``: its id names no other file meanwhile
    if key not in memo:
        memo[key] = _specs(d, getattr(d, side))
    return memo[key]


def _new_spec_memo(f: Facts) -> dict[tuple[int, str], set[str]]:
    return {}


def _dependency_diffs(f: Facts) -> list[FileDiff]:
    return f.once(_dependency_diffs_of)


def _dependency_diffs_of(f: Facts) -> list[FileDiff]:
    return f.diffs_where(lambda p: is_dependency(p) or (is_support(p) and "docker" in p.lower()))


# A package and the release a spec pins: "flash-attn[cuda]==2.7.0", "ARG VLLM_IMAGE_TAG=v0.9.1", "img:1.2".
# The name starts where no name character precedes it: a search never restarts inside a long name.
_VERSIONED = re.compile(
    r"(?<![\w.\-])([A-Za-z][\w.\-]*?)(?:\[[\w,.\-]+\])?\s*(?:==|~=|>=|=|:)\s*[\"']?v?(\d+(?:\.\d+)+)"
)


def fold(name: str) -> str:
    """A package name as titles and manifests both spell it: "Flash_Attn" -> "flashattn"."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def version_moves(f: Facts) -> list[tuple[str, str, str]]:
    """Packages whose pinned release this PR moves: (name, old, new)."""

    def releases(side: str) -> dict[str, tuple[str, str]]:
        return {
            fold(m.group(1)): (m.group(1), m.group(2))
            for d in _dependency_diffs(f)
            for spec in sorted(_side_specs(f, d, side))  # a set: sorted, so one release wins every run
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


# A CI step or job that runs another repository's action or workflow at a pinned ref.
_ACTION = re.compile(r"^\s*(?:-\s*)?uses:\s*[\"']?([\w.\-]+/[\w.\-/]+)@([\w.\-]+)")


def _action_moves(f: Facts) -> list[tuple[str, str, str]]:
    """(CI file, action, its new ref) of each action or reusable workflow whose pinned ref the PR moves.
    A workflow that starts or stops using an action moves nothing: the same ref the project runs
    elsewhere."""
    moves = []
    for d in f.diffs_where(is_ci):
        before = {m[1]: m[2] for line in d.removed if (m := _ACTION.match(line))}
        after = {m[1]: m[2] for line in d.added if (m := _ACTION.match(line))}
        moves += [(d.path, name, ref) for name, ref in sorted(after.items()) if before.get(name, ref) != ref]
    return moves


def _changed_specs(f: Facts) -> tuple[dict[str, str], dict[str, str]]:
    """(spec -> path) of the specs the PR adds and of those it drops, netted over all files:
    requirements moved from one file to another change nothing. Read once per PR (the risk rule and the
    importance both ask), so read-only."""
    return f.once(_changed_specs_of)


def _changed_specs_of(f: Facts) -> tuple[dict[str, str], dict[str, str]]:
    diffs = _dependency_diffs(f)
    added = {spec: d.path for d in diffs for spec in sorted(_side_specs(f, d, "added"))}
    # An example that drops a requirement changes nothing users install; one that adds a pin does.
    removed = {
        spec: d.path for d in diffs if not is_example(d.path) for spec in sorted(_side_specs(f, d, "removed"))
    }
    return (
        {s: p for s, p in added.items() if s not in removed},
        {s: p for s, p in removed.items() if s not in added},
    )


# A version range's bound: ">=0.14", "<=0.23.0", "<2", "~=1.4", "!=1.2.3", "^1.2" (npm), "~1.2".
_RANGE = re.compile(r"(?:[<>]=?|~=|!=)\s*v?\d|[\^~]\d")
_PACKAGE = re.compile(r"[A-Za-z0-9@][\w.\-/@]*")


def installs_change(f: Facts) -> bool:
    """Whether what every user's environment gets changes: a package added or dropped, or a pin moved (==,
    an image tag, a commit, an exact version). A moved bound of a range only reaches the users at its
    edge: those below a raised floor, or those who upgrade past a raised ceiling."""
    new, gone = _changed_specs(f)

    def package(spec: str) -> str:
        m = _PACKAGE.match(spec)
        return fold(m.group(0)) if m else spec

    kept = {package(s) for s in new} & {package(s) for s in gone}
    return any("==" in spec or not _RANGE.search(spec) or package(spec) not in kept for spec in (*new, *gone))


def dependency_change(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    moved = _action_moves(f)
    if moved:
        where = sorted({path for path, _, _ in moved})
        pins = "; ".join(f"{name}@{ref}" for _, name, ref in moved[:3])
        return t["ev_dependency_lines"].format(paths=", ".join(where[:3]), lines=quote(pins)), "diff"
    added, removed = _changed_specs(f)
    new, gone = sorted(added), sorted(removed)
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
