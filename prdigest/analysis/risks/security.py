"""The security_sensitive rule and the dangerous code it reads (eval, pickle, shell calls, unsafe loads,
TLS verification off, CI secrets, credentials in code); the diff excerpt (`sources.diffs`) reads it too,
to keep such lines in view."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain

from prdigest.analysis.facts import Facts
from prdigest.analysis.risks.common import Evidence, may_hold, quote
from prdigest.danger import danger_words, dangerous_lines
from prdigest.models import PullRequest
from prdigest.path_kinds import is_ci, is_doc, is_support, is_test

# --- security_sensitive ---------------------------------------------------------------

_SECURITY_TEXT = re.compile(
    r"\b(security (fix|issue|vulnerability)|cve-\d+|vulnerab\w*|privilege escalation)\b", re.I
)


# Every match of _SECURITY_TEXT holds one of these (lower case): a text without them is not searched.
_SECURITY_WORDS = ("security ", "cve-", "vulnerab", "privilege escalation")


_SECRET_USE = re.compile(r"\$\{\{\s*secrets\.(\w+)")
# Workflows that exist to hand the project's secrets to its own release steps.
_RELEASING = re.compile(r"publish|release|deploy|upload|docs?\b|documentation|pages", re.I)


def _routine_secret(line: str, path: str, untrusted: bool) -> bool:
    """A CI secret used as the project always uses it: GitHub's own token, or a secret in a workflow that
    publishes or releases; never where the PR lets code it does not control run with it
    (``untrusted``: it adds a ``pull_request_target`` trigger)."""
    m = _SECRET_USE.search(line)
    if m is None or untrusted:
        return False
    return m.group(1) == "GITHUB_TOKEN" or _RELEASING.search(path.rsplit("/", 1)[-1]) is not None


def _squeezed(lines: Iterable[str]) -> set[str]:
    """The lines with their runs of spaces made one (C functions mapped, not a loop: PRs run to thousands of
    lines)."""
    return set(map(" ".join, map(str.split, lines)))


def _security_code(pr: PullRequest, f: Facts) -> tuple[str, str] | None:
    """The first dangerous line added, or removed from a file that stays, outside tests and docs, that the
    other side of the diff does not hold too (a workflow split in two moves its secrets, it adds none)."""
    diffs = f.diffs_where(lambda p: not (is_test(p) or is_doc(p)))
    # The words of every file's lines at once first (each side of each file is in them): most PRs hold
    # none, and none of their files is then read alone; the others' files are searched for those alone.
    words = danger_words("\n".join(chain.from_iterable(chain(d.added, d.removed) for d in diffs)))
    if not words:
        return None
    deleted = {x.path for x in pr.files or [] if x.status == "removed"}
    untrusted = any("pull_request_target" in line for d in diffs if is_ci(d.path) for line in d.added)
    sides = []
    for how in ("added", "removed"):
        for d in diffs:
            lines = d.added if how == "added" else d.removed
            if lines and not (how == "removed" and d.path in deleted):
                found = [
                    line
                    for line in dangerous_lines(lines, product=not is_support(d.path), words=words)
                    if not (is_ci(d.path) and _routine_secret(line, d.path, untrusted))
                ]
                if found:
                    sides.append((how, found))
    if not sides:
        return None
    added = _squeezed(chain.from_iterable(d.added for d in diffs))
    removed = _squeezed(chain.from_iterable(d.removed for d in diffs))
    for how, found in sides:
        other = removed if how == "added" else added
        for line in found:
            if " ".join(line.split()) not in other:
                return line.strip(), how
    return None


# An option that lets the project run code it downloads (a model's own modelling code), declared: a config
# field, a command-line flag or a parameter.
_REMOTE_OPTION = re.compile(
    r"^\s*+(?:(?:trust|allow)_remote_code\s*:|.*[\"']--(?:trust|allow)[-_]remote[-_]code[\"']"
    r"|def\s+\w+\(.*\b(?:trust|allow)_remote_code\s*[:=])"
)


def _remote_code_option(f: Facts) -> str | None:
    """A line of shipped code that declares a new remote-code option (not one moved: the other side of
    the diff does not hold it)."""
    diffs = f.diffs_where(lambda p: p in f.product_set)
    # Every match holds "remote": the added lines are read one by one only when they hold it.
    declared = [
        line
        for line in chain.from_iterable(d.added for d in diffs)
        if "remote" in line and _REMOTE_OPTION.match(line)
    ]
    if not declared:
        return None
    removed = _squeezed(chain.from_iterable(d.removed for d in diffs))
    return next((line.strip() for line in declared if " ".join(line.split()) not in removed), None)


def security_sensitive(pr: PullRequest, f: Facts, tags: list[str], t: dict[str, str]) -> Evidence:
    found = _security_code(pr, f)
    if found:
        line, how = found
        return t[f"ev_security_{how}"].format(code=quote(line)), "diff"
    option = _remote_code_option(f)
    if option:  # a new way in: what it lets run is worth a security review
        return t["ev_security_option"].format(code=quote(option)), "diff"
    if f.paths is not None and not f.code_paths:  # a docs page about security is no risk
        return None
    for where, text in (("title", pr.title), ("body", f.body)):
        m = _SECURITY_TEXT.search(text) if may_hold(text, _SECURITY_WORDS) else None
        if m:
            return t["ev_security_text"].format(word=m.group(0)), where
    return None
