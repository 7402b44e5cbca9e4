"""Schema as append-only named migrations, recorded in ``_prdigest_migrations``.

A released step is never edited: a change to the schema is a new step at the end.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database

from prdigest.clock import utc_now

MIGRATIONS: list[Callable[[Database], None]] = []


def migration(fn: Callable[[Database], None]) -> Callable[[Database], None]:
    MIGRATIONS.append(fn)
    return fn


def migrate(db: Database) -> list[str]:
    """Apply the steps not yet applied, each in its own transaction; return their names."""
    db.table("_prdigest_migrations").create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
    done = {row["name"] for row in db["_prdigest_migrations"].rows}
    applied = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        with db.atomic():
            fn(db)
            db.table("_prdigest_migrations").insert(
                {"name": fn.__name__, "applied_at": utc_now().isoformat()}
            )
        applied.append(fn.__name__)
    return applied


@migration
def m001_prs(db: Database) -> None:
    # One row per merged PR or direct push; `data` holds the whole PullRequest as JSON,
    # the other columns are what queries filter on and what the full-text index reads.
    db.table("prs").create(
        {
            "uid": str,
            "repo": str,
            "number": int,
            "sha": str,
            "title": str,
            "body": str,
            "author": str,
            "merged_at": str,  # UTC, ISO 8601: sorts and compares as text
            "paths": str,
            "summary": str,
            "source": str,
            "content_hash": str,
            "data": str,
            "fetched_at": str,
        },
        pk="uid",
    )
    db.table("prs").create_index(["repo", "merged_at"])
    db.table("prs").create_index(["repo", "number"], unique=True)


@migration
def m002_analyses(db: Database) -> None:
    db.table("analyses").create(
        {
            "key": str,  # hash of (repo, number, content hash, engine, model, version, language)
            "repo": str,
            "number": int,
            "content_hash": str,
            "engine": str,
            "model": str,
            "version": str,
            "lang": str,
            "data": str,
            "created_at": str,
        },
        pk="key",
    )
    db.table("analyses").create_index(["repo", "number"])


@migration
def m003_reports(db: Database) -> None:
    db.table("reports").create(
        {
            "id": int,
            "repo": str,
            "since": str,
            "until": str,
            "tz": str,
            "engine": str,
            "lang": str,
            "created_at": str,
            "data": str,
        },
        pk="id",
    )
    db.table("reports").create_index(["repo", "since", "until"])


@migration
def m004_prs_fts(db: Database) -> None:
    # Triggers keep the index current on every insert, upsert and summary update.
    db.table("prs").enable_fts(["title", "body", "paths", "summary"], create_triggers=True, tokenize="porter")


@migration
def m005_github(db: Database) -> None:
    # GitHub's updatedAt of each cached PR: a re-sync fetches only PRs that changed since.
    db.table("pr_updates").create(
        {"repo": str, "number": int, "updated_at": str, "synced_at": str}, pk=("repo", "number")
    )
    # A merged PR's diff never changes: its capped excerpt is fetched once and kept.
    db.table("diffs").create(
        {"repo": str, "number": int, "diff": str, "fetched_at": str}, pk=("repo", "number")
    )


@migration
def m006_subscriptions(db: Database) -> None:
    # One weekly report of one repository in one chat; the scheduler reads these.
    db.table("subscriptions").create(
        {
            "id": int,
            "platform": str,
            "chat_id": str,
            "repo": str,
            "data": str,
            "created_at": str,
        },
        pk="id",
    )
    db.table("subscriptions").create_index(["platform", "chat_id", "repo"], unique=True)


@migration
def m007_llm_calls(db: Database) -> None:
    # One row per request sent to an LLM: what it cost and how it ended; never prompt or answer text.
    db.table("llm_calls").create(
        {
            "id": int,
            "created_at": str,
            "run_id": str,
            "purpose": str,
            "subject": str,
            "model": str,
            "prompt_version": str,
            "prompt_hash": str,
            "rung": str,
            "input_tokens": int,
            "output_tokens": int,
            "latency_ms": int,
            "outcome": str,
        },
        pk="id",
    )
    db.table("llm_calls").create_index(["run_id"])
    db.table("llm_calls").create_index(["created_at"])
    # Validated narratives and answers by request hash: a rerun over unchanged data pays nothing.
    db.table("llm_outputs").create(
        {"key": str, "purpose": str, "model": str, "prompt_version": str, "data": str, "created_at": str},
        pk="key",
    )


@migration
def m008_events(db: Database) -> None:
    # Chat events already taken: platforms deliver some twice (retries, several connections).
    db.table("events").create(
        {"platform": str, "event_id": str, "received_at": str}, pk=("platform", "event_id")
    )


@migration
def m009_deliveries(db: Database) -> None:
    # A weekly report posted once: the key (subscription, ISO week) is claimed before posting
    # and completed with the platform's message id after; a claim left behind by a crash is
    # resolved through the platform's own idempotency, never by posting twice.
    db.table("deliveries").create(
        {
            "key": str,
            "subscription_id": int,
            "week": str,
            "status": str,  # claimed | posted | skipped
            "message_id": str,
            "report_id": int,
            "claimed_by": str,
            "claimed_at": str,
            "completed_at": str,
        },
        pk="key",
    )
    # A report page's address holds a random token, not the report's sequential id.
    db.table("report_pages").create({"token": str, "report_id": int, "created_at": str}, pk="token")


@migration
def m010_llm_rungs(db: Database) -> None:
    # The structured-output rung each endpoint and model accepted, so that a new run (a report,
    # a question) starts there instead of paying again for the rungs its server refuses.
    db.table("llm_rungs").create(
        {"endpoint": str, "model": str, "rung": str, "updated_at": str}, pk=("endpoint", "model")
    )


@migration
def m011_cards(db: Database) -> None:
    # The report cards the bot posted, by platform message id: a follow-up in a card's thread
    # ("risks") is about that card's repository, period and language.
    db.table("cards").create(
        {
            "platform": str,
            "chat_id": str,
            "message_id": str,
            "repo": str,
            "since": str,
            "until": str,
            "tz": str,
            "lang": str,
            "posted_at": str,
        },
        pk=("platform", "chat_id", "message_id"),
    )


@migration
def m012_coverage(db: Database) -> None:
    # The spans of time (UTC instants, [start_at, end_at)) of which each source gave the cache every
    # merged PR: what lets a command tell a quiet day from a day never read. Touching spans are merged.
    db.table("coverage").create(
        {"repo": str, "source": str, "start_at": str, "end_at": str}, pk=("repo", "source", "start_at")
    )


# The tables a report reads, each with the columns whose change changes a report (None: any change).
_REVISED = {"prs": "data", "analyses": "data", "coverage": None}


@migration
def m013_revision(db: Database) -> None:
    # One counter bumped by every change to what a report reads, whichever connection or process
    # writes: a memoised report is valid while the counter stands (handlers/report_memo.py). An
    # upsert that rewrites a row unchanged (a re-sync) leaves it alone.
    db.execute("create table revision (id integer primary key check (id = 0), n integer not null)")
    db.execute("insert into revision (id, n) values (0, 0)")
    for table, column in _REVISED.items():
        _revision_triggers(db, table, column)


def _revision_triggers(db: Database, table: str, column: str | None) -> None:
    """Bump the revision on every insert and delete of ``table``, and on an update that changes
    ``column`` (None: any update)."""
    for event in ("insert", "update", "delete"):
        when = f" when old.{column} is not new.{column}" if event == "update" and column else ""
        db.execute(
            f"create trigger {table}_{event}_revision after {event} on {table}{when} "
            "begin update revision set n = n + 1 where id = 0; end"
        )


@migration
def m014_fts_on_change(db: Database) -> None:
    # The index re-reads a PR only when a column it holds changes: a re-read of a week rewrites every row
    # unchanged, and reindexing each cost more than the write.
    indexed = ("title", "body", "paths", "summary")
    columns = ", ".join(f'"{c}"' for c in indexed)
    old = ", ".join(f'old."{c}"' for c in indexed)
    new = ", ".join(f'new."{c}"' for c in indexed)
    changed = " or ".join(f'old."{c}" is not new."{c}"' for c in indexed)
    db.execute('drop trigger "prs_au"')
    db.execute(
        f'create trigger "prs_au" after update on "prs" when {changed} begin '
        f'insert into "prs_fts" ("prs_fts", rowid, {columns}) values (\'delete\', old.rowid, {old}); '
        f'insert into "prs_fts" (rowid, {columns}) values (new.rowid, {new}); end'
    )


@migration
def m015_llm_runs(db: Database) -> None:
    # The endpoint (base URL) each run's calls went to: a monthly token budget is counted per endpoint.
    # Calls logged before this step have no row here and count against every endpoint's budget.
    db.table("llm_runs").create(
        {"run_id": str, "endpoint": str, "model": str, "started_at": str}, pk="run_id"
    )
    db.table("llm_runs").create_index(["endpoint"])


@migration
def m016_dismissals(db: Database) -> None:
    # An admin's `dismiss #N RULE`: that PR's label is left out of every later report.
    db.table("dismissals").create(
        {"repo": str, "number": int, "label": str, "by": str, "at": str}, pk=("repo", "number", "label")
    )


@migration
def m017_repo_files(db: Database) -> None:
    # The repository's own .prdigest.toml as its source last read it ("" when it has none).
    db.table("repo_files").create({"repo": str, "text": str, "read_at": str}, pk="repo")


@migration
def m018_revision_of_dismissals_and_repo_files(db: Database) -> None:
    # Dismissals and a repository's own settings change what its report says: a memoised report is
    # built again. A re-read of an unchanged .prdigest.toml (every report reads it) leaves it alone.
    _revision_triggers(db, "dismissals", None)
    _revision_triggers(db, "repo_files", "text")


@migration
def m019_chat_points(db: Database) -> None:
    # The GitHub points each chat's commands spent, by the hour (UTC): [chat] github_points_per_hour.
    db.table("chat_points").create({"chat": str, "hour": str, "points": int}, pk=("chat", "hour"))


@migration
def m020_access(db: Database) -> None:
    # The chats known to be direct messages (a Lark button does not say; its chat's first message did),
    # and the chat each report page was made for, with how its access was granted: "chat" (the chat's
    # subscriptions, checked again each time the page is opened) or "asker" (an admin, a direct
    # message's asker, or [access] open: the link alone).
    db.table("direct_chats").create({"platform": str, "chat_id": str}, pk=("platform", "chat_id"))
    db.table("report_pages").add_column("chat_id", str)
    db.table("report_pages").add_column("viewer", str)


@migration
def m021_llm_calls_by_subject(db: Database) -> None:
    # A report built from cached answers shows what they cost when made: their calls by subject.
    db.table("llm_calls").create_index(["subject", "prompt_version"])


@migration
def m022_delivery_fence(db: Database) -> None:
    # Each claim of a delivery key takes the next fence number: only the current one renews the lease,
    # posts and completes (a worker whose lease ran out and was taken over is refused).
    db.table("deliveries").add_column("fence", int, not_null_default=0)


@migration
def m023_snoozes(db: Database) -> None:
    # A card button's snooze or acknowledgement (models.Snooze): a risk label of the repository (number
    # 0) or one open PR, quiet until `until` (none: acknowledged). A change is a new revision.
    db.table("snoozes").create(
        {"repo": str, "kind": str, "number": int, "label": str, "until": str, "by": str, "at": str},
        pk=("repo", "kind", "number", "label"),
    )
    _revision_triggers(db, "snoozes", None)


@migration
def m024_chat_users(db: Database) -> None:
    # A chat platform's user found by email (Slack users.lookupByEmail, Lark's contact API), kept a day;
    # user_id null: the platform knows no such user (asked again after the day too).
    db.table("chat_users").create(
        {"platform": str, "email": str, "user_id": str, "looked_at": str}, pk=("platform", "email")
    )


@migration
def m025_revision_per_repository(db: Database) -> None:
    # One counter per repository in place of one for the whole cache: a write to one repository neither
    # rebuilds the memoised reports of the others nor, on a shared database, queues behind their writers.
    revised = {**_REVISED, "dismissals": None, "repo_files": "text", "snoozes": None}
    db.execute("create table revisions (repo text primary key, n integer not null)")
    for table, column in revised.items():
        for event in ("insert", "update", "delete"):
            row = "old" if event == "delete" else "new"
            when = f" when old.{column} is not new.{column}" if event == "update" and column else ""
            db.execute(f"drop trigger {table}_{event}_revision")
            db.execute(
                f"create trigger {table}_{event}_revision after {event} on {table}{when} begin "
                f"insert into revisions (repo, n) values ({row}.repo, 1) "
                "on conflict (repo) do update set n = revisions.n + 1; end"
            )
    db.execute("drop table revision")


@migration
def m026_event_claims(db: Database) -> None:
    # A chat event is claimed by a worker (with a fence number, as a delivery is) and marked answered
    # after: a replica that died before answering leaves a claim that runs out (storage/events.py).
    # Events taken before this step were answered.
    db.table("events").add_column("status", str, not_null_default="answered")
    db.table("events").add_column("claimed_by", str, not_null_default="")
    db.table("events").add_column("claimed_at", str)
    db.table("events").add_column("fence", int, not_null_default=1)
    db.execute("update events set claimed_at = received_at")


@migration
def m027_llm_rate(db: Database) -> None:
    # When each LLM endpoint and model is next free to take a request (storage/rate_limit.py): the rate
    # limit shared by every process on this file. free_at: seconds since the epoch.
    db.table("llm_rate").create(
        {"endpoint": str, "model": str, "free_at": float}, pk=("endpoint", "model"), not_null={"free_at"}
    )


@migration
def m028_analysis_claims(db: Database) -> None:
    # Which run is asking the LLM about a PR now (storage/analysis_claims.py): the others wait for it.
    db.table("analysis_claims").create({"key": str, "holder": str, "claimed_at": str}, pk="key")


@migration
def m029_open_states(db: Database) -> None:
    # GitHub's last answer to a repository's open-PR request (storage/open_states.py).
    db.table("open_states").create(
        {"url": str, "repo": str, "read_at": str, "answer": str}, pk=("url", "repo")
    )
