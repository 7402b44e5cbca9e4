"""From GraphQL nodes to models: a PR node (completed with the follow-up pages of its overflowing lists) to a
PullRequest; a field GitHub did not answer stays None (unknown)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from prdigest.models import ChecksState, Comment, FileChange, FileStatus, PullRequest, Review, ReviewThread
from prdigest.sources.github.definitions import MAX_TEXTS, FetchedTexts, Texts, blob, wanted
from prdigest.sources.github.errors import (
    GitHubError,
    GitHubRateLimited,
    GitHubUnavailable,
    errors_at,
    messages,
    short_error,
)
from prdigest.sources.github.queries import (
    BLOBS_PER_REQUEST,
    CONNECTIONS,
    FOLLOW_UPS_PER_REQUEST,
    follow_up_query,
)
from prdigest.sources.parsing import references

if TYPE_CHECKING:
    from prdigest.sources.github.client import GitHubClient


@dataclass
class FetchOutcome:
    prs: list[PullRequest] = field(default_factory=list)
    updated_at: dict[int, datetime] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)  # number -> why it could not be read
    skipped: list[int] = field(default_factory=list)  # not asked for: the budget ran out or GitHub is down
    reason: str | None = None  # why the fetch stopped early


_CHANGE: dict[str, FileStatus] = {
    "ADDED": "added", "DELETED": "removed", "RENAMED": "renamed", "COPIED": "copied"
}  # fmt: skip
_FAILING = {"FAILURE", "TIMED_OUT", "CANCELLED", "ACTION_REQUIRED", "STARTUP_FAILURE", "ERROR"}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_pull_request(repo: str, node: dict[str, Any]) -> PullRequest:
    number = int(node["number"])
    title = node.get("title") or ""
    body = node.get("body") or ""
    closing = {int(issue["number"]) for issue in _nodes(node, "closingIssuesReferences")}
    mentioned = references(f"{title}\n{body}")
    last_commit = node.get("lastCommit") or {}
    return PullRequest(
        repo=repo,
        number=number,
        sha=(node.get("mergeCommit") or {}).get("oid"),
        title=title,
        body=body,
        author=login_of(node.get("author")),
        author_association=node.get("authorAssociation"),
        labels=_listed(node, "labels", lambda label: label["name"]),
        created_at=parse_time(node.get("createdAt")),
        ready_at=_ready_at(node),
        merged_at=merge_time(node["mergedAt"]),
        # Asked and null: a deleted account; not asked: unknown.
        merged_by=login_of(node["mergedBy"]) if "mergedBy" in node else None,
        base_branch=node.get("baseRefName"),
        additions=node.get("additions") or 0,
        deletions=node.get("deletions") or 0,
        files=_listed(node, "files", _file),
        commits=last_commit.get("totalCount"),
        reviews=_listed(node, "reviews", _review),
        review_threads=_listed(node, "reviewThreads", _thread),
        comments=_listed(node, "comments", _comment),
        checks=_checks(last_commit),
        is_fork=_is_fork(node),
        url=node.get("url"),
        related=sorted((closing | mentioned) - {number}),
        source="github",
    )


def _ready_at(node: dict[str, Any]) -> datetime | None:
    """When a draft was last marked ready for review; None for a PR never a draft (or not asked)."""
    times = [t for n in _nodes(node, "readyForReview") if (t := parse_time(n.get("createdAt")))]
    return max(times, default=None)


def _nodes(parent: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [n for n in ((parent.get(name) or {}).get("nodes") or []) if n]


def _listed(node: dict[str, Any], name: str, convert: Callable[[dict[str, Any]], Any]) -> list[Any] | None:
    """A list GitHub answered (possibly empty), or None where it gave none (unknown)."""
    if node.get(name) is None:
        return None
    return [convert(item) for item in _nodes(node, name)]


def login_of(actor: dict[str, Any] | None) -> str:
    """The actor's login; "ghost" for a deleted account; bots as GitHub's REST API names them."""
    login = (actor or {}).get("login") or "ghost"
    if (actor or {}).get("__typename") == "Bot" and not login.endswith("[bot]"):
        return f"{login}[bot]"
    return login


def is_bot(actor: dict[str, Any] | None) -> bool:
    return login_of(actor).endswith("[bot]")


def _file(node: dict[str, Any]) -> FileChange:
    return FileChange(
        path=node["path"],
        additions=node.get("additions") or 0,
        deletions=node.get("deletions") or 0,
        status=_CHANGE.get(node.get("changeType") or "", "modified"),
    )


def _review(node: dict[str, Any]) -> Review:
    return Review(
        author=login_of(node.get("author")),
        state=node["state"],
        body=node.get("body") or "",
        submitted_at=parse_time(node.get("submittedAt")),
        is_bot=is_bot(node.get("author")),
    )


def _thread(node: dict[str, Any]) -> ReviewThread:
    first = next(iter(_nodes(node, "comments")), None)
    return ReviewThread(
        path=node.get("path"),
        is_resolved=bool(node.get("isResolved")),
        is_outdated=bool(node.get("isOutdated")),
        author=login_of(first.get("author")) if first else None,
        body=(first or {}).get("body") or "",
    )


def _comment(node: dict[str, Any]) -> Comment:
    return Comment(
        author=login_of(node.get("author")),
        body=node.get("body") or "",
        created_at=parse_time(node.get("createdAt")),
        is_bot=is_bot(node.get("author")),
    )


def _checks(last_commit: dict[str, Any]) -> ChecksState | None:
    """The check runs and statuses of the merged head commit; None when GitHub reports none."""
    commits = [n for n in (last_commit.get("nodes") or []) if n]
    return rollup_checks(((commits[-1] if commits else {}).get("commit") or {}).get("statusCheckRollup"))


def rollup_checks(rollup: dict[str, Any] | None) -> ChecksState | None:
    """A commit's check runs and statuses, failing and skipped by name; None when GitHub reports none."""
    if not rollup or not rollup.get("state"):
        return None
    failing, skipped = [], []
    for context in _nodes(rollup, "contexts"):
        if context.get("__typename") == "CheckRun":
            if context.get("conclusion") in _FAILING:
                failing.append(context.get("name") or "?")
            elif context.get("conclusion") == "SKIPPED":
                skipped.append(context.get("name") or "?")
        elif context.get("state") in _FAILING:
            failing.append(context.get("context") or "?")
    return ChecksState(state=rollup["state"], failing=failing, skipped=skipped)


def _is_fork(node: dict[str, Any]) -> bool | None:
    # A PR from another repository is a PR from a fork, even when that fork was deleted since.
    if node.get("isCrossRepository") is not None:
        return bool(node["isCrossRepository"])
    head = node.get("headRepository")
    return bool(head["isFork"]) if head and head.get("isFork") is not None else None


def parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def merge_time(value: str | None) -> datetime:
    """A merged PR's merge time, which GitHub always gives."""
    if not value:
        raise ValueError("mergedAt: a merged pull request without its merge time")
    return datetime.fromisoformat(value)


# --- completing the nodes ----------------------------------------------------------


class Reader:
    """Completes raw PR nodes with the follow-up pages of their overflowing lists and the texts of the
    definition files their options are read from (sources/github/definitions.py), then converts them."""

    def __init__(self, client: GitHubClient, repo: str):
        self.client = client
        self.repo = repo
        self._texts: Texts = {}
        self._unread: list[str] = []  # texts still to read, sent beside follow-up pages

    def complete(self, raw: dict[int, dict[str, Any]]) -> FetchOutcome:
        outcome = FetchOutcome()
        specs = (wanted((n.get("mergeCommit") or {}).get("oid"), _files(n)) for _, n in sorted(raw.items()))
        self._unread = list(dict.fromkeys(spec for found in specs for spec in found))[:MAX_TEXTS]
        pending = _overflowing(raw)
        while pending and outcome.reason is None:
            for start in range(0, len(pending), FOLLOW_UPS_PER_REQUEST):
                chunk = [(n, name) for n, name in pending[start : start + FOLLOW_UPS_PER_REQUEST] if n in raw]
                try:
                    self._follow_up(chunk, raw, outcome)
                except (GitHubRateLimited, GitHubUnavailable) as exc:
                    failed = {n for n, _ in chunk} if isinstance(exc, GitHubUnavailable) else set()
                    stop(outcome, exc, failed)
                    break
            pending = _overflowing(raw)
        while self._unread and outcome.reason is None:
            try:
                self._follow_up([], raw, outcome)
            except (GitHubRateLimited, GitHubUnavailable):
                break  # the PRs are whole: only the options of those whose texts are unread stay unknown
        # A PR whose lists are still incomplete is not stored truncated: the next sync reads it again.
        unfinished = sorted({n for n, _ in pending} - set(outcome.failed))
        outcome.skipped.extend(unfinished)
        for number in [*unfinished, *outcome.failed]:
            raw.pop(number, None)
        texts = FetchedTexts(self._texts)
        for number, node in sorted(raw.items()):
            try:
                pr = to_pull_request(self.repo, node)
                pr = pr.model_copy(update={"options": texts.changes_of(pr)})
            except (ValidationError, KeyError, TypeError, ValueError) as exc:
                outcome.failed[number] = f"unreadable answer from GitHub: {short_error(exc)}"
                continue
            outcome.prs.append(pr)
            outcome.updated_at[number] = parse_time(node.get("updatedAt")) or EPOCH
        return outcome

    def _follow_up(
        self, chunk: list[tuple[int, str]], raw: dict[int, dict[str, Any]], outcome: FetchOutcome
    ) -> None:
        variables: dict[str, Any] = {}
        for i, (number, name) in enumerate(chunk):
            variables[f"id{i}"] = raw[number]["id"]
            variables[f"after{i}"] = raw[number][name]["pageInfo"]["endCursor"]
        specs, self._unread = self._unread[:BLOBS_PER_REQUEST], self._unread[BLOBS_PER_REQUEST:]
        if specs:
            variables["owner"], _, variables["name"] = self.repo.partition("/")
            variables.update({f"f{j}": spec for j, spec in enumerate(specs)})
        query = follow_up_query([name for _, name in chunk], len(specs))
        data, errors = self.client.graphql(query, variables)
        for j, spec in enumerate(
            specs
        ):  # a text GitHub failed to give stays unread: its PR's options unknown
            if not errors_at(errors, ["files", f"f{j}"]) and data.get("files") is not None:
                self._texts[spec] = blob(data["files"].get(f"f{j}"))
        for i, (number, name) in enumerate(chunk):
            if number not in raw:
                continue  # an earlier list of this PR failed
            page = (data.get(f"o{i}") or {}).get(name) or {}
            problem = errors_at(errors, [f"o{i}"])
            if not problem and not page.get("nodes"):
                # Also guards against a page that promises more and brings nothing: no endless loop.
                problem = messages(errors) if errors else "GitHub returned an empty follow-up page"
            if problem:
                outcome.failed[number] = problem
                del raw[number]
                continue
            known = raw[number][name]
            known["nodes"] = [*(known.get("nodes") or []), *(page.get("nodes") or [])]
            known["pageInfo"] = page["pageInfo"]


def _files(node: dict[str, Any]) -> list[FileChange]:
    return [_file(item) for item in _nodes(node, "files")]


def _overflowing(raw: dict[int, dict[str, Any]]) -> list[tuple[int, str]]:
    return [
        (number, name)
        for number, node in sorted(raw.items())
        for name in CONNECTIONS
        if ((node.get(name) or {}).get("pageInfo") or {}).get("hasNextPage")
    ]


def stop(outcome: FetchOutcome, exc: GitHubError, failed: Iterable[int]) -> None:
    outcome.reason = str(exc)
    for number in failed:
        outcome.failed[number] = str(exc)
