"""A local GitHub that PyGithub talks to over HTTP: GraphQL and the REST endpoints a naive client uses.

GraphQL is executed by graphql-core against ``github_schema.graphql`` (a subset of GitHub's
schema) over repositories generated in code. Like GitHub, it checks the token, returns
at most 1,000 search results (``issueCount`` stays the true count), charges each GraphQL query
its cost by GitHub's formula against a budget per credential and resource that resets hourly
(fakes.github_rate; ``clock`` moves it), sends the X-RateLimit-* headers and ``rateLimit``,
answers 403 (or ``rate_limited_status``) once a budget is spent, and answers an unknown
repository with NOT_FOUND. It counts the requests in flight (``peak_in_flight``), and
``hold()`` keeps answers back until the test lets them go. It counts requests per path and can
be told to fail: ``fail("502")``, ``fail("timeout")``, ``fail("secondary")``, ``fail("exhaust")``,
``fail("rate-limited")``; ``FakePR.broken`` makes one PR unreadable. Open PRs (``is_open``, drafts,
review decisions, requested reviewers: users, teams and bots), a default branch's head checks
(``FakeRepo.head_checks``), files at HEAD (``FakeRepo.files``: a .prdigest.toml, a CODEOWNERS) and
owners' repository lists (forks, archived ones) answer the open-PR and owner queries. A GitHub App
(``add_app``, fakes.github_app) finds its installations and gets installation tokens, which the API accepts.

    with FakeGitHub() as fake:
        fake.add_repo(FakeRepo.generate("acme/rocket", ...))
        Github(base_url=fake.url, auth=Auth.Token(TOKEN), ...)
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import graphql

from prdigest.sources.github.budget import forget as forget_budgets

from .github_app import FakeApp
from .github_rate import INSTALLATION_LIMIT, TOKEN_LIMIT, WINDOW, Budget, Meter, RateLimits, query_cost

TOKEN = "ghp_fake0123456789"
SEARCH_CAP = 1000
SCHEMA_PATH = Path(__file__).with_name("github_schema.graphql")
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID ABCD:1234."
)
_DOCS = "https://docs.github.com/rest"

# --- the data ----------------------------------------------------------------------------


@dataclass
class FakeFile:
    path: str
    additions: int
    deletions: int
    change: str = "MODIFIED"  # a PatchStatus
    # Its text at the merge commit's parent and at the merge commit (None: no text, as for an absent file).
    before: str | None = None
    after: str | None = None


@dataclass
class FakeReview:
    author: str | None  # "name[bot]" for a bot, None for a deleted account
    state: str
    body: str
    submitted_at: datetime


@dataclass
class FakeThread:
    path: str
    resolved: bool
    outdated: bool
    comments: list[tuple[str | None, str]]  # (author, body)


@dataclass
class FakeComment:
    author: str | None
    body: str
    created_at: datetime


@dataclass
class FakeChecks:
    state: str  # a StatusState
    runs: list[tuple[str, str | None]] = field(default_factory=list)  # (name, conclusion)
    statuses: list[tuple[str, str]] = field(default_factory=list)  # (context, state)


@dataclass
class FakePR:
    repo: str
    number: int
    title: str
    created_at: datetime
    merged_at: datetime | None  # None: closed without merging, or open
    updated_at: datetime
    author: str | None = "alice"
    body: str = ""
    association: str = "MEMBER"
    labels: list[str] = field(default_factory=list)
    merged_by: str | None = "maintainer"
    base: str = "main"
    files: list[FakeFile] = field(default_factory=list)
    commits: int = 1
    cross_repo: bool = False
    reviews: list[FakeReview] = field(default_factory=list)
    threads: list[FakeThread] = field(default_factory=list)
    comments: list[FakeComment] = field(default_factory=list)
    closing: list[int] = field(default_factory=list)
    checks: FakeChecks | None = None
    broken: bool = False  # GraphQL fails to resolve it, like GitHub's "Something went wrong"
    huge_diff: bool = False  # the diff media type answers 406, as GitHub does past 20,000 lines
    is_open: bool = False
    draft: bool = False
    ready_at: datetime | None = None  # when a draft was marked ready for review
    review_decision: str | None = None  # APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED; None: not required
    # Reviewers asked, in order: a login, "org/team" for a team, "name[bot]" for a bot. As on GitHub, a
    # user's request is gone once they have submitted a review.
    requested: list[str] = field(default_factory=list)

    @property
    def node_id(self) -> str:
        return "PR_" + base64.b64encode(f"{self.repo}#{self.number}".encode()).decode().rstrip("=")

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)

    def diff(self) -> str:
        parts = []
        for f in self.files:
            parts.append(
                f"diff --git a/{f.path} b/{f.path}\nindex 1111111..2222222 100644\n"
                f"--- a/{f.path}\n+++ b/{f.path}\n"
                f"@@ -1,{f.deletions + 1} +1,{f.additions + 1} @@\n context\n"
            )
            parts.extend(f"-old {f.path} {i}\n" for i in range(f.deletions))
            parts.extend(f"+new {f.path} {i}\n" for i in range(f.additions))
        return "".join(parts)


USERS = ("alice", "bob", "chen", "dmitri", "eve", "farah", "gus", "hana")
PATHS = (
    "core/engine.py",
    "core/scheduler.py",
    "api/routes.py",
    "kernels/attention.cu",
    "docs/guide.md",
    "tests/test_engine.py",
    "ci/workflow.yml",
)
LABELS = ("bug", "enhancement", "performance", "docs", "ci")


@dataclass
class FakeRepo:
    name: str
    prs: dict[int, FakePR] = field(default_factory=dict)
    default_branch: str = "main"
    head_checks: FakeChecks | None = None  # the default branch's head commit's checks
    files: dict[str, str] = field(default_factory=dict)  # path -> text at the default branch's head
    empty: bool = False  # no commit yet: no default branch, no files
    fork: bool = False
    archived: bool = False
    private: bool = False  # the bot's token reads it all the same
    broken_texts: set[str] = field(default_factory=set)  # paths whose texts GitHub fails to give

    def add(self, number: int | None = None, **fields: Any) -> FakePR:
        number = number or max(self.prs, default=0) + 1
        merged_at = fields.get("merged_at")
        fields.setdefault("created_at", (merged_at or datetime(2026, 9, 1, tzinfo=UTC)) - timedelta(hours=20))
        fields.setdefault("updated_at", merged_at or fields["created_at"])
        fields.setdefault("title", f"Change {number}")
        pr = FakePR(repo=self.name, number=number, **fields)
        self.prs[number] = pr
        return pr

    def touch(self, number: int, comment: str, at: datetime) -> None:
        """A new comment: GitHub moves the PR's updatedAt."""
        pr = self.prs[number]
        pr.comments.append(FakeComment("bob", comment, at))
        pr.updated_at = at

    def generate(
        self,
        count: int,
        start: datetime,
        end: datetime,
        *,
        seed: int = 1,
        rich: bool = True,
        overflow_every: int = 0,
        closed_every: int = 15,
    ) -> list[FakePR]:
        """``count`` PRs merged evenly in [start, end), plus a few closed without merging."""
        rng = random.Random(seed)
        made = []
        for i in range(count):
            merged = start + (end - start) * (i + 0.5) / count
            pr = self.add(merged_at=merged, **_details(rng, i, merged, rich, overflow_every))
            made.append(pr)
            if closed_every and i % closed_every == closed_every - 1:
                self.add(merged_at=None, title="abandoned idea", created_at=merged - timedelta(days=3))
        return made


def _details(rng: random.Random, i: int, merged: datetime, rich: bool, overflow_every: int) -> dict[str, Any]:
    """Varied, deterministic PR contents: bots, ghosts, forks, failing checks, unresolved threads."""
    author = "dependabot[bot]" if i % 19 == 7 else (None if i % 37 == 11 else USERS[i % len(USERS)])
    details: dict[str, Any] = {
        "title": f"{rng.choice(['feat', 'fix', 'perf', 'docs'])}: change {i}",
        "body": f"Part of the work in #{i + 1000}.\n\nFixes #{i + 5000}" if i % 3 == 0 else "",
        "author": author,
        "association": "CONTRIBUTOR" if i % 6 == 0 else "MEMBER",
        "created_at": merged - timedelta(hours=rng.randint(1, 72)),
        "updated_at": merged + timedelta(minutes=rng.randint(0, 600)),
        "labels": rng.sample(LABELS, i % 3),
        "cross_repo": i % 6 == 0,
        "commits": 1 + i % 4,
        "closing": [i + 5000] if i % 3 == 0 else [],
        "checks": _checks(i),
        "files": [
            FakeFile(PATHS[(i + k) % len(PATHS)], rng.randint(1, 40), rng.randint(0, 20))
            for k in range(1 + i % 4)
        ],
    }
    if not rich:
        return details
    big = bool(overflow_every) and i % overflow_every == 0
    reviewers = [*USERS, "copilot-pull-request-reviewer[bot]"]
    details["reviews"] = [
        FakeReview(
            reviewers[(i + k) % len(reviewers)], "APPROVED" if k == 0 else "COMMENTED", f"review {k}", merged
        )
        for k in range(60 if big else 1 + i % 3)
    ]
    details["threads"] = [
        FakeThread(
            PATHS[k % len(PATHS)], resolved=k % 3 != 1, outdated=k % 4 == 3, comments=[("eve", f"nit {k}")]
        )
        for k in range(70 if big else i % 4)
    ]
    details["comments"] = [
        FakeComment("codecov[bot]" if k == 0 else "bob", f"comment {k}", merged - timedelta(minutes=k))
        for k in range(120 if big else i % 5)
    ]
    if big:
        details["files"] = [FakeFile(f"src/module_{k}.py", 3, 1, "ADDED") for k in range(150)]
    return details


def _checks(i: int) -> FakeChecks | None:
    if i % 11 == 10:
        return None  # no CI ran
    if i % 7 == 3:
        return FakeChecks(
            "FAILURE", runs=[("build", "SUCCESS"), ("test-gpu", "FAILURE")], statuses=[("lint", "SUCCESS")]
        )
    if i % 5 == 2:
        return FakeChecks("SUCCESS", runs=[("build", "SUCCESS"), ("docs", "SKIPPED")])
    return FakeChecks("SUCCESS", runs=[("build", "SUCCESS"), ("test", "SUCCESS")])


# --- GraphQL -----------------------------------------------------------------------------


class FakeGraphQLError(Exception):
    """Becomes one entry of ``errors``, with GitHub's ``type`` field."""

    def __init__(self, type_: str | None, message: str):
        super().__init__(message)
        self.type = type_


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str) -> int:
    return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])


def _page(
    items: list[Any], first: int | None = None, after: str | None = None, last: int | None = None, **_: Any
):
    """A connection page, with GitHub's bounds on first/last."""
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= 100:
            raise FakeGraphQLError(
                "EXCESSIVE_PAGINATION",
                f"Requesting {value} records on the connection exceeds the `{name}` limit",
            )
    start = _index(after) + 1 if after else 0
    stop = len(items)
    if first is not None:
        stop = min(stop, start + first)
    elif last is not None:
        start = max(start, stop - last)
    nodes = items[start:stop]
    return {
        "totalCount": len(items),
        "nodes": nodes,
        "pageInfo": {
            "hasNextPage": stop < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(start) if nodes else None,
            "endCursor": _cursor(stop - 1) if nodes else None,
        },
    }


def _actor(login: str | None) -> dict[str, Any] | None:
    if login is None:
        return None  # a deleted account
    if login.endswith("[bot]"):
        return {"__typename": "Bot", "login": login.removesuffix("[bot]")}  # GraphQL drops the suffix
    return {"__typename": "User", "login": login}


def _pr_node(pr: FakePR) -> dict[str, Any]:
    """The PullRequest object; lists are built only when the query asks for them."""
    return {
        "__typename": "PullRequest",
        "id": pr.node_id,
        "number": pr.number,
        "title": pr.title,
        "body": pr.body,
        "url": f"https://github.com/{pr.repo}/pull/{pr.number}",
        "createdAt": _iso(pr.created_at),
        "mergedAt": _iso(pr.merged_at) if pr.merged_at else None,
        "updatedAt": _iso(pr.updated_at),
        "merged": pr.merged_at is not None,
        "state": "OPEN" if pr.is_open else "MERGED" if pr.merged_at else "CLOSED",
        "isDraft": pr.draft,
        "reviewDecision": pr.review_decision,
        "author": _actor(pr.author),
        "authorAssociation": pr.association,
        "mergedBy": _actor(pr.merged_by) if pr.merged_at else None,
        "mergeCommit": {"__typename": "Commit", "oid": f"{pr.number:040x}"} if pr.merged_at else None,
        "baseRefName": pr.base,
        "additions": pr.additions,
        "deletions": pr.deletions,
        "changedFiles": len(pr.files),
        "isCrossRepository": pr.cross_repo,
        "headRepository": {"__typename": "Repository", "isFork": pr.cross_repo},
        "labels": lambda **a: _page([{"name": name} for name in pr.labels], **a),
        "files": lambda **a: _page(
            [
                {"path": f.path, "additions": f.additions, "deletions": f.deletions, "changeType": f.change}
                for f in pr.files
            ],
            **a,
        ),
        "reviews": lambda **a: _page(
            [
                {
                    "state": r.state,
                    "body": r.body,
                    "submittedAt": _iso(r.submitted_at),
                    "author": _actor(r.author),
                }
                for r in pr.reviews
            ],
            **a,
        ),
        "reviewThreads": lambda **a: _page(
            [
                {
                    "isResolved": t.resolved,
                    "isOutdated": t.outdated,
                    "path": t.path,
                    "comments": lambda t=t, **b: _page(
                        [{"body": body, "author": _actor(who)} for who, body in t.comments], **b
                    ),
                }
                for t in pr.threads
            ],
            **a,
        ),
        "comments": lambda **a: _page(
            [
                {"body": c.body, "createdAt": _iso(c.created_at), "author": _actor(c.author)}
                for c in pr.comments
            ],
            **a,
        ),
        "closingIssuesReferences": lambda **a: _page(
            [{"__typename": "Issue", "number": n} for n in pr.closing], **a
        ),
        "commits": lambda **a: _page(_commits(pr), **a),
        "reviewRequests": lambda **a: _page(_review_requests(pr), **a),
        "timelineItems": lambda itemTypes=None, **a: _page(_timeline(pr, itemTypes), **a),
    }


def _commits(pr: FakePR) -> list[dict[str, Any]]:
    commits: list[dict[str, Any]] = [
        {"commit": {"oid": f"{pr.number:020x}{k:020x}", "statusCheckRollup": None}} for k in range(pr.commits)
    ]
    commits[-1]["commit"]["statusCheckRollup"] = _rollup(pr.checks)
    return commits


def _review_requests(pr: FakePR) -> list[dict[str, Any]]:
    """The pending requests: a user who has reviewed since is no longer asked (a team still is)."""
    reviewed = {r.author for r in pr.reviews if r.state != "PENDING"}
    requests = []
    for k, name in enumerate(pr.requested):
        if name in reviewed:
            continue
        org, slash, slug = name.partition("/")
        if slash:
            organization = {"__typename": "Organization", "id": f"O_{org}", "login": org}
            reviewer = {"__typename": "Team", "id": f"T_{name}", "slug": slug, "organization": organization}
        else:
            reviewer = {"id": f"U_{name}", **(_actor(name) or {})}  # a User, or a Bot for "name[bot]"
        requests.append(
            {"__typename": "ReviewRequest", "id": f"RR_{pr.number}_{k}", "requestedReviewer": reviewer}
        )
    return requests


def _timeline(pr: FakePR, types: list[str] | None) -> list[dict[str, Any]]:
    """The PR's timeline: only its last "ready for review" event is kept."""
    if pr.ready_at is None or (types is not None and "READY_FOR_REVIEW_EVENT" not in types):
        return []
    ready = {"__typename": "ReadyForReviewEvent", "id": f"RFR_{pr.number}", "createdAt": _iso(pr.ready_at)}
    return [ready]


def _rollup(checks: FakeChecks | None) -> dict[str, Any] | None:
    if checks is None:
        return None
    contexts = [
        {"__typename": "CheckRun", "name": name, "conclusion": conclusion, "status": "COMPLETED"}
        for name, conclusion in checks.runs
    ] + [{"__typename": "StatusContext", "context": name, "state": state} for name, state in checks.statuses]
    return {"state": checks.state, "contexts": lambda **a: _page(contexts, **a)}


def _repo_node(repo: FakeRepo, get_pr: Callable[[int], Any] | None = None) -> dict[str, Any]:
    name = repo.name.split("/")[1]
    head = {
        "__typename": "Commit",
        "id": f"C_{repo.name}",
        "oid": "c" * 40,
        "statusCheckRollup": _rollup(repo.head_checks),
    }
    branch = {"__typename": "Ref", "id": f"REF_{repo.default_branch}", "name": repo.default_branch}
    return {
        "__typename": "Repository",
        "id": f"R_{repo.name}",
        "name": name,
        "nameWithOwner": repo.name,
        "defaultBranchRef": None if repo.empty else {**branch, "target": head},
        "isFork": repo.fork,
        "isArchived": repo.archived,
        "object": lambda expression=None, **_: _object(repo, expression),
        "pullRequest": get_pr,
    }


def _object(repo: FakeRepo, expression: str | None) -> dict[str, Any] | None:
    """``HEAD:path`` (or ``<default branch>:path``): the file's blob at the head; ``<merge oid>:path`` and
    ``<merge oid>^:path``: a merged PR's file after and before it. None when there is none."""
    ref, _, path = (expression or "").partition(":")
    if path in repo.broken_texts:
        raise graphql.GraphQLError("Something went wrong while executing your query.")
    if repo.empty:
        return None
    text = repo.files.get(path) if ref in ("HEAD", repo.default_branch) else _pr_file_text(repo, ref, path)
    if text is None:
        return None
    size = len(text.encode())
    blob_id = hashlib.sha1(f"blob {size}\0{text}".encode()).hexdigest()
    return {
        "__typename": "Blob", "id": f"B_{blob_id}", "oid": blob_id, "text": text, "isBinary": False,
        "byteSize": size, "isTruncated": False,
    }  # fmt: skip


def _pr_file_text(repo: FakeRepo, ref: str, path: str) -> str | None:
    """A file of a merged PR at its merge commit (``<oid>``) or that commit's parent (``<oid>^``)."""
    oid, parent = ref.removesuffix("^"), ref.endswith("^")
    pr = repo.prs.get(int(oid, 16)) if re.fullmatch(r"[0-9a-f]{40}", oid) else None
    if pr is None or pr.merged_at is None:
        return None
    found = next((f for f in pr.files if f.path == path), None)
    if found is None:
        return None
    return found.before if parent else found.after


def _search_terms(query: str) -> dict[str, Any]:
    """``repo:o/r is:pr is:merged merged:A..B`` (A, B: dates or datetimes with offsets; ``*`` open)."""
    terms: dict[str, Any] = {"is": set()}
    for token in query.split():
        key, _, value = token.partition(":")
        if key == "is":
            terms["is"].add(value)
        elif key == "merged":
            low, _, high = value.partition("..")
            terms["merged"] = (_bound(low, start=True), _bound(high, start=False))
        elif key in ("repo", "sort"):
            terms[key] = value
        else:
            raise FakeGraphQLError(None, f"the fake does not understand the search term {token!r}")
    return terms


def _bound(text: str, start: bool) -> datetime | None:
    if text in ("", "*"):
        return None
    if len(text) == 10:  # a whole day, in UTC like GitHub
        day = datetime.fromisoformat(text).replace(tzinfo=UTC)
        return day if start else day + timedelta(days=1, seconds=-1)
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Root:
    """The Query type's fields, for one request."""

    def __init__(self, fake: FakeGitHub, budget: Budget, cost: int):
        self.fake = fake
        self.budget = budget
        self.cost = cost

    def rateLimit(self, **_: Any) -> dict[str, Any]:  # GitHub's field name
        remaining = max(self.budget.remaining["graphql"], 0)
        return {
            "cost": self.cost,
            "limit": self.budget.limit,
            "remaining": remaining,
            "used": self.budget.limit - remaining,
            "resetAt": _iso(datetime.fromtimestamp(self.budget.reset_at, UTC)),
            "nodeCount": 0,
        }

    def repository(self, owner: str, name: str, **_: Any) -> dict[str, Any]:
        repo = self._repo(f"{owner}/{name}")
        return _repo_node(
            repo,
            lambda number: self._pr(
                repo.prs.get(number), f"Could not resolve to a PullRequest with the number of {number}."
            ),
        )

    def repositoryOwner(self, login: str) -> dict[str, Any] | None:  # GitHub's field name
        """A user or organization: the owner of a repository, or one ``add_owner`` made (null otherwise,
        as GitHub answers an unknown login)."""
        owned = [r for r in self.fake.repos.values() if r.name.split("/")[0].lower() == login.lower()]
        kind = self.fake.owners.get(login.lower(), "Organization" if owned else None)
        if kind is None:
            return None

        def repositories(
            isFork: bool | None = None, isArchived: bool | None = None, orderBy: Any = None, **page: Any
        ) -> dict[str, Any]:
            kept = [
                r
                for r in owned
                if (isFork is None or r.fork == isFork) and (isArchived is None or r.archived == isArchived)
            ]
            kept.sort(key=lambda r: r.name.lower(), reverse=(orderBy or {}).get("direction") == "DESC")
            return _page([_repo_node(r) for r in kept], **page)

        return {"__typename": kind, "id": f"O_{login}", "login": login, "repositories": repositories}

    def search(self, query: str, type: str, **page: Any) -> dict[str, Any]:
        terms = _search_terms(query)
        repo = self.fake.repos.get(terms.get("repo", ""))
        if repo is None or type != "ISSUE":
            raise FakeGraphQLError(
                "INVALID",
                "The listed users and repositories cannot be searched either because the resources "
                "do not exist or you do not have permission to view them.",
            )
        low, high = terms.get("merged", (None, None))
        hits = [
            pr
            for pr in repo.prs.values()
            if ("merged" not in terms["is"] or pr.merged_at is not None)
            and ("open" not in terms["is"] or pr.is_open)
            and (low is None or (pr.merged_at and pr.merged_at >= low))
            and (high is None or (pr.merged_at and pr.merged_at <= high))
        ]
        hits.sort(key=lambda pr: (pr.created_at, pr.number))
        self.fake.searches.append(query)
        result = _page([_pr_node(pr) for pr in hits[:SEARCH_CAP]], **page)
        return {"issueCount": len(hits), "nodes": result["nodes"], "pageInfo": result["pageInfo"]}

    def node(self, id: str) -> Any:
        return self._pr(self.fake.find_node(id), f"Could not resolve to a node with the global id of '{id}'")

    def nodes(self, ids: list[str]) -> list[Any]:
        # An exception in the list becomes an error at its index and a null item: GitHub's partial answer.
        return [self._node_or_error(i) for i in ids]

    def _node_or_error(self, node_id: str) -> Any:
        try:
            return self.node(node_id)
        except FakeGraphQLError as exc:
            return exc

    def _repo(self, name: str) -> FakeRepo:
        repo = self.fake.repos.get(name)
        if repo is None:
            raise FakeGraphQLError("NOT_FOUND", f"Could not resolve to a Repository with the name '{name}'.")
        return repo

    def _pr(self, pr: FakePR | None, missing: str) -> dict[str, Any]:
        if pr is None:
            raise FakeGraphQLError("NOT_FOUND", missing)
        if pr.broken:
            raise FakeGraphQLError(
                None, "Something went wrong while executing your query. Please include `F00D` ..."
            )
        return _pr_node(pr)


def _resolve(source: Any, info: graphql.GraphQLResolveInfo, **args: Any) -> Any:
    value = (
        source.get(info.field_name) if isinstance(source, dict) else getattr(source, info.field_name, None)
    )
    return value(**args) if callable(value) else value


def _type_of(value: Any, *_: Any) -> str:
    return value["__typename"]


# --- HTTP --------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # "502", "timeout", "secondary", "exhaust", "rate-limited" (GraphQL's 200 with an error)
    retry_after: int | None = 60
    delay: float = 5.0
    path: str | None = None  # only requests whose path contains this
    operation: str | None = None  # only GraphQL requests of this operation ("PullRequests")
    min_ids: int = 0  # only GraphQL requests for this many node ids or more: a query too heavy to answer

    def matches(self, path: str, operation: str | None, ids: int) -> bool:
        return (
            (self.path is None or self.path in path)
            and (self.operation is None or self.operation == operation)
            and ids >= self.min_ids
        )


def _operation(payload: dict[str, Any]) -> str | None:
    match = re.match(r"\s*(?:query|mutation)\s+(\w+)", str(payload.get("query") or ""))
    return match.group(1) if match else None


class FakeGitHub:
    """The server. ``url`` is the base URL to give PyGithub."""

    def __init__(
        self,
        token: str = TOKEN,
        *,
        prefix: str = "",
        limit: int = TOKEN_LIMIT,
        installation_limit: int = INSTALLATION_LIMIT,
        clock: Callable[[], float] = time.time,
        window: int = WINDOW,  # seconds a rate-limit budget lasts
        rate_limited_status: int = 403,  # GitHub answers a spent budget with 403 or 429
        graphql_cost: int | None = None,  # None: GitHub's formula; N: every query's (tests counting queries)
        latency: float = 0.0,
    ):
        self.token = token
        self.latency = latency  # seconds every request waits before its answer (a distant GitHub)
        self.prefix = prefix  # "/api/v3" for GitHub Enterprise
        self.rate_limits = RateLimits(limit, installation_limit, clock, window)
        self.rate_limited_status = rate_limited_status
        self.graphql_cost = graphql_cost
        self.repos: dict[str, FakeRepo] = {}
        self.owners: dict[str, str] = {}  # lowercase login -> "User" or "Organization", beyond repo owners
        self.in_flight = 0  # requests being answered now
        self.peak_in_flight = 0
        self._released = threading.Event()  # hold(): answers wait for it
        self._released.set()
        self.counts: Counter[str] = Counter()  # "POST /graphql", "GET /repos/o/r/pulls/1", ...
        self.points_spent: Counter[str] = Counter()  # rate-limit points charged, by resource
        self.operations: Counter[str] = Counter()  # GraphQL operation names
        self.searches: list[str] = []  # search query strings, in order
        self.faults: deque[Fault] = deque()
        self.app: FakeApp | None = None
        self._lock = threading.Condition()
        self._closing = threading.Event()
        self._schema = graphql.build_schema(SCHEMA_PATH.read_text())
        self._documents: dict[str, tuple[graphql.DocumentNode, list[graphql.GraphQLError]]] = {}
        self._server: ThreadingHTTPServer | None = None

    # --- control ------------------------------------------------------------------

    def add_repo(self, repo: FakeRepo) -> FakeRepo:
        self.repos[repo.name] = repo
        return repo

    def add_app(self, app: FakeApp) -> FakeApp:
        """The GitHub App whose JWTs and installation tokens this GitHub accepts."""
        self.app = app
        return app

    def add_owner(self, login: str, kind: str = "Organization") -> None:
        """A user or organization, with or without repositories."""
        self.owners[login.lower()] = kind

    def find_node(self, node_id: str) -> FakePR | None:
        try:
            name, _, number = base64.b64decode(node_id.removeprefix("PR_") + "==").decode().rpartition("#")
            return self.repos[name].prs[int(number)]
        except (ValueError, KeyError):
            return None

    @property
    def budget(self) -> dict[str, int]:
        """The token's points left by resource; a test may set them."""
        with self._lock:
            return self.rate_limits.of(self.token).remaining

    def installation_budget(self, installation_id: int) -> dict[str, int]:
        """An App installation's points left by resource, shared by its tokens."""
        with self._lock:
            return self.rate_limits.of(installation_id).remaining

    def hold(self) -> None:
        """Answers wait from now on until ``release``."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def wait_in_flight(self, count: int, timeout: float = 5.0) -> bool:
        """Whether ``count`` requests came to be in flight at once within ``timeout`` seconds."""
        with self._lock:
            return self._lock.wait_for(lambda: self.in_flight >= count, timeout)

    def fail(self, kind: str, times: int = 1, **options: Any) -> None:
        """The next ``times`` requests fail this way."""
        self.faults.extend(Fault(kind, **options) for _ in range(times))

    @property
    def requests(self) -> int:
        return sum(self.counts.values())

    def reset_counts(self) -> None:
        self.counts.clear()
        self.operations.clear()
        self.searches.clear()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.prefix}"

    def start(self) -> FakeGitHub:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        # A new GitHub, perhaps on a port an earlier test's used: prdigest's budgets of that one do not apply.
        forget_budgets(self.url)
        threading.Thread(target=server.serve_forever, args=(0.05,), name="fake-github", daemon=True).start()
        return self

    def stop(self) -> None:
        self._closing.set()  # releases slow responses
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # --- requests -----------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: Message, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self._lock.notify_all()
        try:
            self._released.wait()  # hold(): stop() releases it too
            return self._answer(method, target, headers, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(
        self, method: str, target: str, headers: Message, body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(target)
        path = url.path
        graphql_path = path in ("/graphql", "/api/graphql")
        payload = json.loads(body or b"{}") if graphql_path and method == "POST" else {}
        operation = _operation(payload)
        authorization = headers.get("Authorization", "")
        credential = authorization.split(" ", 1)[-1]
        installation = self.app.installation_of(credential) if self.app is not None else None
        known = bool(authorization) and (credential == self.token or installation is not None)
        with self._lock:
            self.counts[f"{method} {path}"] += 1
            ids = len((payload.get("variables") or {}).get("ids") or [])
            fault = next((f for f in self.faults if f.matches(path, operation, ids)), None)
            if fault is not None:
                self.faults.remove(fault)
            # An unknown credential (an App's JWT, a wrong token) is shown the token's budget.
            budget = self.rate_limits.of(installation if installation is not None else self.token)
        meter = Meter(budget, "graphql" if graphql_path else "core")
        if self.latency:
            self._closing.wait(self.latency)
        if fault is not None:
            answer = self._fault(fault, meter)
            if answer is not None:
                return answer
        if self.app is not None:  # the App's own endpoints take its JWT
            answer = self.app.handle(
                method, path.removeprefix(self.prefix), authorization, set(self.repos), self.url
            )
            if answer is not None:
                return self._json(*answer, meter)
        if not known:
            return self._json(401, {"message": "Bad credentials", "documentation_url": _DOCS}, meter)
        if path.removeprefix(self.prefix) == "/rate_limit":
            return self._json(200, self._rate_limit_body(budget), meter)
        checked = self._checked(payload.get("query") or "") if graphql_path and method == "POST" else None
        cost = 1
        if checked is not None and checked[0] is not None and not checked[1]:
            cost = self.graphql_cost or query_cost(checked[0], payload.get("variables") or {})
        with self._lock:
            if budget.remaining[meter.resource] < cost:
                return self._json(
                    self.rate_limited_status,
                    {"message": "API rate limit exceeded for user ID 1.", "documentation_url": _DOCS},
                    meter,
                )
            budget.remaining[meter.resource] -= cost
            self.points_spent[meter.resource] += cost
        if checked is not None:
            return self._json(200, self._graphql(payload, operation, checked, budget, cost), meter)
        if method == "GET":
            return self._rest(path.removeprefix(self.prefix), parse_qs(url.query), headers, meter)
        return self._json(404, {"message": "Not Found", "documentation_url": _DOCS}, meter)

    def _fault(self, fault: Fault, meter: Meter) -> tuple[int, dict[str, str], bytes] | None:
        if fault.kind == "502":
            return (
                502,
                self._headers(meter, "text/html"),
                b"<html><body><h1>502 Bad Gateway</h1></body></html>",
            )
        if fault.kind == "timeout":
            self._closing.wait(fault.delay)
            return None  # then answer, too late for a client that gave up
        if fault.kind == "secondary":
            headers = self._headers(meter)
            if fault.retry_after is not None:
                headers["Retry-After"] = str(fault.retry_after)
            return (
                403,
                headers,
                json.dumps({"message": SECONDARY_MESSAGE, "documentation_url": _DOCS}).encode(),
            )
        if fault.kind == "rate-limited":
            error = {"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}
            return self._json(200, {"errors": [error]}, meter)
        if fault.kind == "exhaust":
            with self._lock:
                meter.budget.remaining[meter.resource] = 0
            return None
        raise ValueError(f"unknown fault {fault.kind!r}")

    def _headers(self, meter: Meter, content_type: str = "application/json; charset=utf-8") -> dict[str, str]:
        with self._lock:
            return {"Content-Type": content_type, **meter.headers()}

    def _json(self, status: int, value: Any, meter: Meter, headers: dict[str, str] | None = None):
        return status, {**self._headers(meter), **(headers or {})}, json.dumps(value).encode()

    def _rate_limit_body(self, budget: Budget) -> dict[str, Any]:
        def one(resource: str) -> dict[str, int]:
            limit = budget.limit_of(resource)
            remaining = budget.remaining[resource]
            used = limit - remaining
            return {"limit": limit, "remaining": remaining, "used": used, "reset": budget.reset_at}

        with self._lock:
            return {"resources": {name: one(name) for name in budget.remaining}, "rate": one("core")}

    def _checked(self, query: str) -> tuple[graphql.DocumentNode | None, list[graphql.GraphQLError]]:
        """The query parsed (None: it does not parse) and its errors, once per text: validating is most of a
        request's CPU, and a client sends the same few queries thousands of times (the benches)."""
        with self._lock:
            known = self._documents.get(query)
        if known is None:
            try:
                document = graphql.parse(query)
            except graphql.GraphQLError as exc:
                known = None, [exc]
            else:
                known = document, graphql.validate(self._schema, document)
            with self._lock:
                self._documents[query] = known
        return known

    def _graphql(
        self,
        payload: dict[str, Any],
        operation: str | None,
        checked: tuple[graphql.DocumentNode | None, list[graphql.GraphQLError]],
        budget: Budget,
        cost: int,
    ) -> dict[str, Any]:
        document, invalid = checked
        if document is None or invalid:
            return {
                "errors": [{"message": e.message, "locations": e.formatted.get("locations")} for e in invalid]
            }
        with self._lock:
            self.operations[operation or "anonymous"] += 1
        result = graphql.execute_sync(
            self._schema,
            document,
            root_value=_Root(self, budget, cost),
            variable_values=payload.get("variables") or {},
            field_resolver=_resolve,
            type_resolver=_type_of,
        )
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [_github_error(e) for e in result.errors]
        return answer

    # --- REST ---------------------------------------------------------------------

    def _rest(self, path: str, query: dict[str, list[str]], headers: Message, meter: Meter):
        parts = path.strip("/").split("/")
        if len(parts) < 3 or parts[0] != "repos" or f"{parts[1]}/{parts[2]}" not in self.repos:
            return self._json(404, {"message": "Not Found", "documentation_url": _DOCS}, meter)
        repo = self.repos[f"{parts[1]}/{parts[2]}"]
        rest = parts[3:]
        if not rest:
            return self._json(200, self._repo_json(repo), meter)
        if rest == ["pulls"]:
            return self._list(path, query, self._pulls(repo, query), meter)
        pr = repo.prs.get(int(rest[1])) if len(rest) >= 2 and rest[1].isdigit() else None
        if pr is None or rest[0] not in ("pulls", "issues"):
            return self._json(404, {"message": "Not Found", "documentation_url": _DOCS}, meter)
        if rest[0] == "pulls" and len(rest) == 2:
            if "diff" in headers.get("Accept", ""):
                if pr.huge_diff:
                    message = "Sorry, the diff exceeded the maximum number of lines (20000)"
                    return self._json(406, {"message": message, "documentation_url": _DOCS}, meter)
                return 200, self._headers(meter, "text/plain; charset=utf-8"), pr.diff().encode()
            return self._json(200, self._pr_json(pr, full=True), meter)
        lists: dict[tuple[str, str], Callable[[], list[dict[str, Any]]]] = {
            ("pulls", "files"): lambda: [_file_json(f) for f in pr.files],
            ("pulls", "reviews"): lambda: [_review_json(k, r) for k, r in enumerate(pr.reviews)],
            ("pulls", "comments"): lambda: _review_comments_json(pr),
            ("issues", "comments"): lambda: [_comment_json(k, c) for k, c in enumerate(pr.comments)],
        }
        key = (rest[0], rest[2]) if len(rest) == 3 else None
        if key not in lists:
            return self._json(404, {"message": "Not Found", "documentation_url": _DOCS}, meter)
        return self._list(path, query, lists[key](), meter)

    def _list(self, path: str, query: dict[str, list[str]], items: list[dict[str, Any]], meter: Meter):
        """One page, with GitHub's Link header."""
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.url}{path}"
        for rel, number in (("next", page + 1), ("last", last)):
            if page < last:
                params = {k: v[0] for k, v in query.items()} | {
                    "page": str(number),
                    "per_page": str(per_page),
                }
                links.append(f'<{base}?{urlencode(params)}>; rel="{rel}"')
        extra = {"Link": ", ".join(links)} if links else {}
        return self._json(200, items[(page - 1) * per_page : page * per_page], meter, extra)

    def _pulls(self, repo: FakeRepo, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        state = query.get("state", ["open"])[0]
        prs = [pr for pr in repo.prs.values() if state == "all" or pr.is_open == (state == "open")]
        prs.sort(
            key=lambda pr: pr.updated_at if query.get("sort", [""])[0] == "updated" else pr.created_at,
            reverse=query.get("direction", ["desc"])[0] == "desc",
        )
        return [self._pr_json(pr, full=False) for pr in prs]

    def _repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        owner, name = repo.name.split("/")
        return {
            "id": 1,
            "node_id": f"R_{repo.name}",
            "name": name,
            "full_name": repo.name,
            "owner": _user_json(owner),
            "private": repo.private,
            "url": f"{self.url}/repos/{repo.name}",
            "html_url": f"https://github.com/{repo.name}",
            "default_branch": "main",
        }

    def _pr_json(self, pr: FakePR, full: bool) -> dict[str, Any]:
        """A pull request as REST gives it: list items lack the counts, so PyGithub fetches each PR."""
        api = f"{self.url}/repos/{pr.repo}"
        data: dict[str, Any] = {
            "url": f"{api}/pulls/{pr.number}",
            "issue_url": f"{api}/issues/{pr.number}",
            "comments_url": f"{api}/issues/{pr.number}/comments",
            "review_comments_url": f"{api}/pulls/{pr.number}/comments",
            "id": pr.number,
            "node_id": pr.node_id,
            "html_url": f"https://github.com/{pr.repo}/pull/{pr.number}",
            "number": pr.number,
            "state": "open" if pr.is_open else "closed",
            "title": pr.title,
            "body": pr.body,
            "user": _user_json(pr.author),
            "labels": [{"name": name} for name in pr.labels],
            "created_at": _iso(pr.created_at),
            "updated_at": _iso(pr.updated_at),
            "closed_at": None if pr.is_open else _iso(pr.merged_at or pr.updated_at),
            "merged_at": _iso(pr.merged_at) if pr.merged_at else None,
            "merge_commit_sha": f"{pr.number:040x}",
            "author_association": pr.association,
            "base": {"ref": pr.base, "label": f"acme:{pr.base}"},
            "head": {"ref": f"topic-{pr.number}", "label": f"fork:topic-{pr.number}"},
            "draft": pr.draft,
        }
        if full:
            data.update(
                merged=pr.merged_at is not None,
                merged_by=_user_json(pr.merged_by) if pr.merged_at else None,
                additions=pr.additions,
                deletions=pr.deletions,
                changed_files=len(pr.files),
                commits=pr.commits,
                comments=len(pr.comments),
                review_comments=sum(len(t.comments) for t in pr.threads),
            )
        return data


def _github_error(error: graphql.GraphQLError) -> dict[str, Any]:
    original = error.original_error
    formatted = dict(error.formatted)
    formatted.pop("extensions", None)
    return (
        {"type": getattr(original, "type", None), **formatted}
        if getattr(original, "type", None)
        else formatted
    )


def _user_json(login: str | None) -> dict[str, Any] | None:
    if login is None:
        return None
    return {
        "login": login,
        "id": abs(hash(login)) % 10**6,
        "type": "Bot" if login.endswith("[bot]") else "User",
    }


def _file_json(f: FakeFile) -> dict[str, Any]:
    status = {"ADDED": "added", "DELETED": "removed", "RENAMED": "renamed"}.get(f.change, "modified")
    return {
        "sha": "0" * 40,
        "filename": f.path,
        "status": status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
    }


def _review_json(k: int, r: FakeReview) -> dict[str, Any]:
    return {
        "id": k + 1,
        "user": _user_json(r.author),
        "body": r.body,
        "state": r.state,
        "submitted_at": _iso(r.submitted_at),
    }


def _review_comments_json(pr: FakePR) -> list[dict[str, Any]]:
    return [
        {
            "id": k * 100 + j + 1,
            "path": t.path,
            "body": body,
            "user": _user_json(who),
            "created_at": _iso(pr.created_at),
        }
        for k, t in enumerate(pr.threads)
        for j, (who, body) in enumerate(t.comments)
    ]


def _comment_json(k: int, c: FakeComment) -> dict[str, Any]:
    return {"id": k + 1, "user": _user_json(c.author), "body": c.body, "created_at": _iso(c.created_at)}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like GitHub: PyGithub reuses its connection
    # One write per answer, sent at once: no 40 ms stall between headers and body on a kept-alive socket.
    wbufsize = -1
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = self.server.fake.handle(method, self.path, self.headers, body)  # type: ignore[attr-defined]
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left

    def log_message(self, format: str, *args: Any) -> None:
        pass


def iter_prs(repo: FakeRepo, since: datetime, until: datetime) -> Iterator[FakePR]:
    """The repository's PRs merged in [since, until): what a correct sync must return."""
    for pr in sorted(repo.prs.values(), key=lambda p: p.number):
        if pr.merged_at is not None and since <= pr.merged_at < until:
            yield pr
