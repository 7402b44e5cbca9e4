"""The GraphQL queries of the GitHub source: the cheap merged-PR search, the batch that reads up to 50
PRs in full, one PR by number, follow-up pages of overflowing lists, what is open now (open PRs with
their requested reviewers and paths, the default branch's checks, the repository's .prdigest.toml and
CODEOWNERS) and an owner's repositories (tests validate
them against the schema)."""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.sources.github.codeowners import LOCATIONS as CODEOWNERS_LOCATIONS

RATE_LIMIT = "rateLimit { cost limit remaining resetAt }"
_ACTOR = "author { __typename login }"
_PAGE = "totalCount pageInfo { hasNextPage endCursor }"

# A PR's paginated lists: page size in the batch query, and the fields of each node.
# Sizes keep a 50-PR batch near 24,000 nodes, far below GitHub's 500,000 per request.
CONNECTIONS: dict[str, tuple[int, str]] = {
    "labels": (50, "name"),
    "files": (100, "path additions deletions changeType"),
    "reviews": (50, f"state body submittedAt {_ACTOR}"),
    "reviewThreads": (50, f"isResolved isOutdated path comments(first: 1) {{ nodes {{ body {_ACTOR} }} }}"),
    "comments": (50, f"body createdAt {_ACTOR}"),
    "closingIssuesReferences": (25, "number"),
}
FOLLOW_UP_PAGE = 100  # nodes per follow-up page of an overflowing list
FOLLOW_UPS_PER_REQUEST = 25
BATCH_SIZE = 50  # PRs per batch request
# A batch GitHub answers with 5xx or a timeout may be too heavy (PRs with huge lists): it is halved,
# at most this many times (50 -> 25 -> 12), before the sync stops as for an outage.
BATCH_SPLITS = 2

# A commit's check runs and statuses.
_ROLLUP = (
    "statusCheckRollup { state contexts(first: 100) { nodes { __typename ... on CheckRun { name conclusion "
    "status } ... on StatusContext { context state } } } }"
)
# The merged head commit's checks. totalCount is the PR's commit count.
_CHECKS = f"lastCommit: commits(last: 1) {{ totalCount nodes {{ commit {{ {_ROLLUP} }} }} }}"
# When a draft was last marked ready for review: its wait for a review starts then.
READY = (
    "readyForReview: timelineItems(itemTypes: [READY_FOR_REVIEW_EVENT], last: 1) "
    "{ nodes { ... on ReadyForReviewEvent { createdAt } } }"
)


def _connection(name: str, first: int, after: str | None = None) -> str:
    args = f"first: {first}" + (f", after: {after}" if after else "")
    return f"{name}({args}) {{ {_PAGE} nodes {{ {CONNECTIONS[name][1]} }} }}"


PR_FRAGMENT = (
    "\n  ".join(
        [
            "fragment PullRequestFields on PullRequest {",
            "id number title body url createdAt mergedAt updatedAt authorAssociation",
            "author { __typename login } mergedBy { __typename login } mergeCommit { oid }",
            "baseRefName additions deletions isCrossRepository headRepository { isFork }",
            _CHECKS,
            READY,
            *(_connection(name, size) for name, (size, _) in CONNECTIONS.items()),
        ]
    )
    + "\n}"
)

LIST_QUERY = f"""query ListMerged($owner: String!, $name: String!, $query: String!, $after: String) {{
  {RATE_LIMIT}
  repository(owner: $owner, name: $name) {{ nameWithOwner defaultBranchRef {{ name }} }}
  search(query: $query, type: ISSUE, first: 100, after: $after) {{
    issueCount
    pageInfo {{ hasNextPage endCursor }}
    nodes {{ ... on PullRequest {{ id number updatedAt mergedAt baseRefName }} }}
  }}
}}"""

BATCH_QUERY = f"""query PullRequests($ids: [ID!]!) {{
  {RATE_LIMIT}
  nodes(ids: $ids) {{ ...PullRequestFields }}
}}
{PR_FRAGMENT}"""

PR_QUERY = f"""query PullRequest($owner: String!, $name: String!, $number: Int!) {{
  {RATE_LIMIT}
  repository(owner: $owner, name: $name) {{ pullRequest(number: $number) {{ ...PullRequestFields }} }}
}}
{PR_FRAGMENT}"""


BLOB = "__typename ... on Blob { oid byteSize isBinary isTruncated text }"
BLOBS_PER_REQUEST = 200  # file texts (``<commit>:<path>``) one request reads, beside its follow-up pages


def follow_up_query(connections: Sequence[str], blobs: int = 0) -> str:
    """Next pages of several lists in one request: alias ``o{i}`` reads ``connections[i]`` of ``$id{i}``;
    and ``blobs`` file texts of the repository, alias ``files.f{j}`` reading ``$f{j}``."""
    params = [f"$id{i}: ID!, $after{i}: String" for i in range(len(connections))]
    pages = [_connection(name, FOLLOW_UP_PAGE, f"$after{i}") for i, name in enumerate(connections)]
    fields = [
        f"  o{i}: node(id: $id{i}) {{ ... on PullRequest {{ {page} }} }}" for i, page in enumerate(pages)
    ]
    if blobs:
        params += ["$owner: String!, $name: String!", *(f"$f{j}: String!" for j in range(blobs))]
        texts = " ".join(f"f{j}: object(expression: $f{j}) {{ {BLOB} }}" for j in range(blobs))
        fields.append(f"  files: repository(owner: $owner, name: $name) {{ {texts} }}")
    joined = "\n".join(fields)
    return f"query FollowUp({', '.join(params)}) {{\n  {RATE_LIMIT}\n{joined}\n}}"


REPO_FILE = ".prdigest.toml"  # a repository's own settings, read at its default branch's head
OPEN_PR_LIMIT = 100  # open PRs read for the attention section: one page, the oldest first
OPEN_REVIEWS = 50  # each open PR's latest reviews
# Each open PR's requested reviewers and changed paths, for whom a nudge names. GitHub charges a list by
# the requests it would take, not its size (each adds 1 point per 100 PRs whatever its page), but the
# nodes and the answer grow with the size: 50 paths cover all but the largest PRs, whose code owners
# then come from their first 50 files (logged); few PRs ask more than a handful of reviewers.
OPEN_REQUESTS = 20
OPEN_FILES = 50
# The CODEOWNERS GitHub would use, at the default branch's head: aliases in its order of preference.
CODEOWNERS_FIELDS = tuple(f"codeowners{i}" for i in range(len(CODEOWNERS_LOCATIONS)))
_CODEOWNERS = "\n    ".join(
    f'{alias}: object(expression: "HEAD:{path}") {{ __typename ... on Blob {{ byteSize isBinary '
    "isTruncated text } }"
    for alias, path in zip(CODEOWNERS_FIELDS, CODEOWNERS_LOCATIONS, strict=True)
)
_REVIEWER = "__typename ... on User { login } ... on Team { slug organization { login } }"

# One request per repository: its open PRs (the oldest first; when a draft was last marked ready for
# review; whom it asks for a review and what it changes), its default branch's head checks, its
# .prdigest.toml and its CODEOWNERS. ``$query`` is "repo:OWNER/NAME is:pr is:open sort:created-asc".
OPEN_QUERY = f"""query OpenPullRequests($owner: String!, $name: String!, $query: String!) {{
  {RATE_LIMIT}
  repository(owner: $owner, name: $name) {{
    nameWithOwner
    defaultBranchRef {{ name target {{ __typename ... on Commit {{ oid {_ROLLUP} }} }} }}
    repoFile: object(expression: "HEAD:{REPO_FILE}") {{ __typename ... on Blob {{ text isBinary }} }}
    {_CODEOWNERS}
  }}
  search(query: $query, type: ISSUE, first: {OPEN_PR_LIMIT}) {{
    issueCount
    nodes {{ ... on PullRequest {{
      number title url createdAt isDraft additions deletions reviewDecision {_ACTOR}
      reviews(last: {OPEN_REVIEWS}) {{ nodes {{ state submittedAt {_ACTOR} }} }}
      readyForReview: timelineItems(itemTypes: [READY_FOR_REVIEW_EVENT], last: 1) {{
        nodes {{ ... on ReadyForReviewEvent {{ createdAt }} }}
      }}
      reviewRequests(first: {OPEN_REQUESTS}) {{ totalCount nodes {{ requestedReviewer {{ {_REVIEWER} }} }} }}
      files(first: {OPEN_FILES}) {{ totalCount nodes {{ path }} }}
    }} }}
  }}
}}"""

OWNER_PAGE = 100  # repositories per page of an owner's list

# An owner's own repositories, a page at a time (forks and archived ones left out by GitHub; the
# source checks again).
OWNER_REPOS_QUERY = f"""query OwnerRepositories($login: String!, $after: String) {{
  {RATE_LIMIT}
  repositoryOwner(login: $login) {{
    login
    repositories(first: {OWNER_PAGE}, after: $after, isFork: false, isArchived: false,
                 orderBy: {{field: NAME, direction: ASC}}) {{
      pageInfo {{ hasNextPage endCursor }}
      nodes {{ nameWithOwner isFork isArchived }}
    }}
  }}
}}"""


def operation_name(query: str) -> str:
    """The query's operation name ("PullRequests"), by which its cost is logged and counted."""
    # "query Name(...) {" or "query Name {": the words before the first "(" or "{" of the head.
    words = query[:200].partition("{")[0].partition("(")[0].split()
    return words[1] if len(words) == 2 and words[0] == "query" else "anonymous"
