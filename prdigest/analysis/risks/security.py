"""The security_sensitive rule and the dangerous code it reads (eval, pickle, shell calls, unsafe loads,
TLS verification off, CI secrets, credentials in code); the diff excerpt (`sources.diffs`) reads it too,
to keep such lines in view."""

from __future__ import annotations

import re

from prdigest.analysis.facts import Facts
from prdigest.analysis.risks.common import Evidence, quote
from prdigest.danger import dangerous_lines
from prdigest.models import PullRequest
from prdigest.path_kinds import is_doc, is_support, is_test

# --- security_sensitive ---------------------------------------------------------------

_SECURITY_TEXT = re.compile(
    r"\b(security (fix|issue|vulnerability)|cve-\d+|vulnerab\w*|privilege escalation)\b", re.I
)


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
