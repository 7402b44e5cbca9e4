"""What is open on GitHub now, in one request per repository: the open PRs that need someone (waiting
for a review, approved but not merged, large and unreviewed) and whom they ask (the requested reviewers,
and the CODEOWNERS owners of their files), the default branch's checks, and the repository's own
``.prdigest.toml``.

The thresholds are the [attention] settings. A PR gets one reason, the most pressing: approved and
waiting to be merged, then waiting too long for a first review, then too large to leave unreviewed.
Drafts are left out: nobody is asked to act on them yet.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from prdigest.clock import utc_now
from prdigest.model_base import OpenReason
from prdigest.models import Attention, OpenPR
from prdigest.sources.github.codeowners import LOCATIONS, MAX_BYTES, CodeOwners, parse
from prdigest.sources.github.errors import (
    GitHubError,
    messages,
    raise_for_repository,
    short_error,
    split_repo,
)
from prdigest.sources.github.models import is_bot, login_of, parse_time, rollup_checks
from prdigest.sources.github.queries import (
    CODEOWNERS_FIELDS,
    OPEN_FILES,
    OPEN_PR_LIMIT,
    OPEN_QUERY,
    OPEN_REQUESTS,
)
from prdigest.sources.prepared import prepared_store
from prdigest.storage import open_states

if TYPE_CHECKING:
    from prdigest.config.models import AttentionSettings
    from prdigest.sources.github.client import GitHubClient

log = logging.getLogger(__name__)
DAY = timedelta(days=1)
# What is open changes over hours; a read this recent answers every prepared report of the repository.
FRESH = timedelta(minutes=5)
_guard = threading.Lock()
_reading: dict[tuple[str, str], threading.Lock] = {}  # one read per repository at a time


@dataclass(frozen=True)
class OpenState:
    """One repository's answer to the open-PR request, kept by its source: classified per report."""

    repo: str
    prs: list[dict[str, Any]]  # the open PR nodes, the oldest first
    default_branch: str | None
    head: dict[str, Any] | None  # the default branch's head commit (its statusCheckRollup)
    repo_file: str  # the .prdigest.toml text; "" when there is none
    codeowners: CodeOwners | None = None  # None: no CODEOWNERS, or none GitHub (or prdigest) can use


def read_open(client: GitHubClient, repo: str) -> OpenState:
    """The repository's open state. Within a prepared weekly report (``sources.prepared``), GitHub's
    answer is kept in the store and serves every report of the repository for ``FRESH``, whichever
    worker builds it (Monday's zh and en teams: one read of 4 points), and two threads asking at once
    wait for one read."""
    store = prepared_store()
    if store is None:
        return _state(repo, *_asked(client, repo), client.url)
    with _guard:
        lock = _reading.setdefault((client.url, repo.lower()), threading.Lock())
    with lock:
        kept = open_states.recent(store, client.url, repo, utc_now() - FRESH)
        if kept is not None:
            data, errors = json.loads(kept)
            return _state(repo, data, errors, client.url)
        read_at = utc_now()
        data, errors = _asked(client, repo)
        state = _state(repo, data, errors, client.url)  # an answer that is an error is not kept
        open_states.keep(store, client.url, repo, read_at, json.dumps([data, errors]))
        return state


def _asked(client: GitHubClient, repo: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    owner, name = split_repo(repo)
    query = f"repo:{repo} is:pr is:open sort:created-asc"
    return client.graphql(OPEN_QUERY, {"owner": owner, "name": name, "query": query}, purpose="open")


def _state(repo: str, data: dict[str, Any], errors: list[dict[str, Any]], url: str) -> OpenState:
    raise_for_repository(errors, repo, url)
    # A CODEOWNERS GitHub failed to give costs its owners only, not the open PRs.
    unread = {_codeowners_field(e) for e in errors} - {None}
    errors = [e for e in errors if _codeowners_field(e) is None]
    search, repository = data.get("search"), data.get("repository")
    if errors or search is None or repository is None:
        raise GitHubError(f"GitHub could not list the open PRs of {repo}: {messages(errors)}")
    if search.get("issueCount", 0) > OPEN_PR_LIMIT:
        log.warning(
            "%s has %s open PRs: the %d opened first are checked for attention",
            repo,
            search["issueCount"],
            OPEN_PR_LIMIT,
        )
    branch = repository.get("defaultBranchRef") or {}  # none in an empty repository
    head = branch.get("target") or {}
    blob = repository.get("repoFile") or {}  # none: no such file (or an empty repository)
    text = blob.get("text") if blob.get("__typename") == "Blob" and not blob.get("isBinary") else None
    return OpenState(
        repo=repo,
        prs=[n for n in search.get("nodes") or [] if n and n.get("number")],
        default_branch=branch.get("name"),
        head=head if head.get("__typename") == "Commit" else None,
        repo_file=text or "",
        codeowners=_codeowners(repository, repo, unread),
    )


def _codeowners_field(error: dict[str, Any]) -> str | None:
    """The CODEOWNERS alias an error is about, if it is about one."""
    path = list(error.get("path") or [])
    return path[1] if path[:1] == ["repository"] and path[1:2] and path[1] in CODEOWNERS_FIELDS else None


def _codeowners(repository: dict[str, Any], repo: str, unread: set[str | None]) -> CodeOwners | None:
    """The first CODEOWNERS that exists, in GitHub's order, parsed. One that cannot be read names no
    owners (GitHub does not fall back to the next), and never costs the report."""
    for field, path in zip(CODEOWNERS_FIELDS, LOCATIONS, strict=True):
        if field in unread:  # it may exist: the next ones cannot stand in for it
            log.warning("GitHub failed to give %s:%s: no code owners are named", repo, path)
            return None
        blob = repository.get(field) or {}
        if blob.get("__typename") != "Blob":
            continue  # no such file (a directory of that name is none either)
        source = f"{repo}:{path}"
        if (blob.get("byteSize") or 0) >= MAX_BYTES:
            log.warning("%s is 3 MB or more: GitHub does not load it, and no code owners are named", source)
            return None
        text = blob.get("text")
        if blob.get("isBinary") or blob.get("isTruncated") or not isinstance(text, str):
            log.warning("%s cannot be read as text: no code owners are named", source)
            return None
        try:
            return parse(text, source)
        except Exception:  # the file is untrusted text: the report never pays for it
            log.warning("%s could not be parsed: no code owners are named", source, exc_info=True)
            return None
    return None


def attention(state: OpenState, thresholds: AttentionSettings, now: datetime) -> Attention:
    try:
        found = [
            pr
            for pr in (needs_attention(node, thresholds, now, state.codeowners) for node in state.prs)
            if pr
        ]
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise GitHubError(
            f"unreadable answer from GitHub on the open PRs of {state.repo}: {short_error(exc)}"
        ) from None
    found.sort(key=lambda pr: (-pr.waiting_days, pr.number))
    return Attention(
        open_prs=found[: thresholds.limit],
        default_branch=state.default_branch,
        default_branch_checks=rollup_checks((state.head or {}).get("statusCheckRollup")),
        read_at=now,
    )


def needs_attention(
    node: dict[str, Any],
    thresholds: AttentionSettings,
    now: datetime,
    codeowners: CodeOwners | None = None,
) -> OpenPR | None:
    """The PR with its most pressing reason and whom it asks, or None when it needs nobody yet (or is a
    draft)."""
    if node.get("isDraft"):
        return None
    created = parse_time(node.get("createdAt")) or now
    # A draft asked for reviews only once it was marked ready: its wait starts then.
    ready = [
        parse_time(n.get("createdAt")) for n in (node.get("readyForReview") or {}).get("nodes") or [] if n
    ]
    opened = max([created, *(r for r in ready if r)])
    author = login_of(node.get("author"))
    reviews = _reviews(node, author)
    approved = _approved_at(node, reviews)
    lines = (node.get("additions") or 0) + (node.get("deletions") or 0)
    reason: OpenReason | None = None
    since = opened
    if approved is not None and now - approved > thresholds.approved_wait_days * DAY:
        reason, since = "approved_not_merged", approved
    elif not reviews and now - opened > thresholds.review_wait_days * DAY:
        reason = "waiting_review"
    elif not reviews and lines >= thresholds.large_lines:
        reason = "large_unreviewed"
    if reason is None:
        return None
    return OpenPR(
        number=node["number"],
        title=node.get("title") or "",
        author=author,
        url=node.get("url"),
        created_at=created,
        additions=node.get("additions") or 0,
        deletions=node.get("deletions") or 0,
        reason=reason,
        waiting_days=max(0, (now - since) // DAY),
        requested=_requested(node, author),
        owners=_owners(node, author, codeowners),
    )


def _listed(node: dict[str, Any], key: str, limit: int, words: str) -> list[Any]:
    """The nodes of the PR's list ``key``, of which the request asked for ``limit``: a longer list is
    logged (``words``: how many it has, then what its first ``limit`` stand for)."""
    found = node.get(key) or {}
    if (found.get("totalCount") or 0) > limit:
        log.info("%s has %s " + words, node.get("url") or node.get("number"), found["totalCount"], limit)
    return found.get("nodes") or []


def _requested(node: dict[str, Any], author: str) -> list[str]:
    """The reviewers GitHub says are requested (those who have reviewed since are no longer), in its
    order, once each: users by login, teams as "org/team". Bots and mannequins (imported accounts) are
    nobody to nudge."""
    requests = _listed(node, "reviewRequests", OPEN_REQUESTS, "reviewers asked: the first %d are named")
    seen, names = {author.lower()}, []  # GitHub never asks the author; logins ignore case
    for request in requests:
        reviewer = (request or {}).get("requestedReviewer") or {}
        kind, name = reviewer.get("__typename"), None
        if kind == "User":
            name = reviewer.get("login")
        elif kind == "Team":
            org, slug = (reviewer.get("organization") or {}).get("login"), reviewer.get("slug")
            name = f"{org}/{slug}" if org and slug else None
        if isinstance(name, str) and name and name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    return names


def _owners(node: dict[str, Any], author: str, codeowners: CodeOwners | None) -> list[str]:
    """The code owners of the PR's changed files (of its first OPEN_FILES), without its author."""
    if codeowners is None:
        return []
    files = _listed(node, "files", OPEN_FILES, "changed files: its code owners are those of the first %d")
    paths = [f["path"] for f in files if f and isinstance(f.get("path"), str)]
    try:
        return codeowners.owners(paths, leave_out=author)
    except Exception:  # untrusted patterns and paths: a failure names no owners, and loses nothing else
        log.warning(
            "%s: the code owners of %s were not found", codeowners.source, node.get("url"), exc_info=True
        )
        return []


def _reviews(node: dict[str, Any], author: str) -> list[dict[str, Any]]:
    """The submitted reviews by others than the author and bots, oldest first."""
    found = [
        r
        for r in (node.get("reviews") or {}).get("nodes") or []
        if r
        and r.get("state") != "PENDING"
        and not is_bot(r.get("author"))
        and login_of(r.get("author")) != author
    ]
    return sorted(found, key=lambda r: r.get("submittedAt") or "")


def _approved_at(node: dict[str, Any], reviews: list[dict[str, Any]]) -> datetime | None:
    """When the PR was approved: GitHub's decision (required reviews), else its latest review; the time
    is that of the latest approving review. None when it is not approved."""
    decision = node.get("reviewDecision")
    latest = reviews[-1] if reviews else None
    if decision != "APPROVED" and (decision is not None or not latest or latest["state"] != "APPROVED"):
        return None
    approvals = [parse_time(r.get("submittedAt")) for r in reviews if r["state"] == "APPROVED"]
    return max((a for a in approvals if a), default=None)
