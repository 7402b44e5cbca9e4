"""The PostgreSQL store's schema, as append-only named steps like SQLite's (``storage/migrations.py``).

The first step is SQLite's schema as of its m026, with PostgreSQL's own full-text index (a weighted
``tsvector`` column and a GIN index, in place of FTS5) and revision triggers (one plpgsql function). Times
stay ISO 8601 text, UTC, as in SQLite: they compare as text in both, and come back timezone-aware. A
table whose rows are read in insertion order has a ``rowid`` column, as SQLite's tables have one.
"""

from __future__ import annotations

from collections.abc import Callable

from prdigest.clock import utc_now
from prdigest.storage.tx import Tx

PG_MIGRATIONS: list[Callable[[Tx], None]] = []
# Held (pg_advisory_xact_lock) while one process migrates: others starting at once wait, then find it done.
MIGRATION_LOCK = 0x70726467  # "prdg"


def pg_migration(fn: Callable[[Tx], None]) -> Callable[[Tx], None]:
    PG_MIGRATIONS.append(fn)
    return fn


def pg_migrate(tx: Tx) -> list[str]:
    """Apply the steps not yet applied, within the caller's transaction; return their names."""
    tx.run("select pg_advisory_xact_lock(?)", [MIGRATION_LOCK])
    tx.run(
        "create table if not exists _prdigest_migrations "
        "(rowid bigserial, name text primary key, applied_at text not null)"
    )
    done = {row["name"] for row in tx.rows("select name from _prdigest_migrations")}
    applied = []
    for fn in PG_MIGRATIONS:
        if fn.__name__ in done:
            continue
        fn(tx)
        tx.insert("_prdigest_migrations", {"name": fn.__name__, "applied_at": utc_now().isoformat()})
        applied.append(fn.__name__)
    return applied


# The words of a PR the full-text index reads, weighted as SQLite's bm25 weighs its columns: title (A)
# over summary (B) over paths (C) over body (D).
_FTS = (
    "setweight(to_tsvector('english', coalesce(title, '')), 'A') || "
    "setweight(to_tsvector('english', coalesce(summary, '')), 'B') || "
    "setweight(to_tsvector('english', coalesce(paths, '')), 'C') || "
    "setweight(to_tsvector('english', coalesce(body, '')), 'D')"
)

_TABLES = [
    f"""create table prs (
        uid text primary key, repo text, number bigint, sha text, title text, body text, author text,
        merged_at text, paths text, summary text, source text, content_hash text, data text,
        fetched_at text, fts tsvector generated always as ({_FTS}) stored)""",
    "create index prs_repo_merged_at on prs (repo, merged_at)",
    "create unique index prs_repo_number on prs (repo, number)",
    "create index prs_fts on prs using gin (fts)",
    """create table analyses (
        key text primary key, repo text, number bigint, content_hash text, engine text, model text,
        version text, lang text, data text, created_at text)""",
    "create index analyses_repo_number on analyses (repo, number)",
    """create table reports (
        id bigserial primary key, repo text, since text, until text, tz text, engine text, lang text,
        created_at text, data text)""",
    "create index reports_repo_since_until on reports (repo, since, until)",
    """create table pr_updates (
        repo text, number bigint, updated_at text, synced_at text, primary key (repo, number))""",
    "create table diffs (repo text, number bigint, diff text, fetched_at text, primary key (repo, number))",
    """create table subscriptions (
        id bigserial primary key, platform text, chat_id text, repo text, data text, created_at text)""",
    "create unique index subscriptions_chat_repo on subscriptions (platform, chat_id, repo)",
    """create table llm_calls (
        id bigserial primary key, created_at text, run_id text, purpose text, subject text, model text,
        prompt_version text, prompt_hash text, rung text, input_tokens bigint, output_tokens bigint,
        latency_ms bigint, outcome text)""",
    "create index llm_calls_run_id on llm_calls (run_id)",
    "create index llm_calls_created_at on llm_calls (created_at)",
    "create index llm_calls_subject on llm_calls (subject, prompt_version)",
    """create table llm_outputs (
        key text primary key, purpose text, model text, prompt_version text, data text, created_at text)""",
    """create table events (
        platform text, event_id text, received_at text, status text not null default 'answered',
        claimed_by text not null default '', claimed_at text, fence bigint not null default 1,
        primary key (platform, event_id))""",
    """create table deliveries (
        rowid bigserial, key text primary key, subscription_id bigint, week text, status text,
        message_id text, report_id bigint, claimed_by text, claimed_at text, completed_at text,
        fence bigint not null default 0)""",
    """create table report_pages (
        token text primary key, report_id bigint, created_at text, chat_id text, viewer text)""",
    """create table llm_rungs (
        endpoint text, model text, rung text, updated_at text, primary key (endpoint, model))""",
    """create table cards (
        platform text, chat_id text, message_id text, repo text, since text, until text, tz text,
        lang text, posted_at text, primary key (platform, chat_id, message_id))""",
    """create table coverage (
        repo text, source text, start_at text, end_at text, primary key (repo, source, start_at))""",
    "create table llm_runs (run_id text primary key, endpoint text, model text, started_at text)",
    "create index llm_runs_endpoint on llm_runs (endpoint)",
    """create table dismissals (
        repo text, number bigint, label text, "by" text, "at" text, primary key (repo, number, label))""",
    "create table repo_files (repo text primary key, text text, read_at text)",
    "create table chat_points (chat text, hour text, points bigint, primary key (chat, hour))",
    "create table direct_chats (platform text, chat_id text, primary key (platform, chat_id))",
    """create table snoozes (
        repo text, kind text, number bigint, label text, until text, "by" text, "at" text,
        primary key (repo, kind, number, label))""",
    """create table chat_users (
        platform text, email text, user_id text, looked_at text, primary key (platform, email))""",
    "create table revisions (repo text primary key, n bigint not null)",
]

# Bump the repository's revision (storage/revision.py) for a row inserted, deleted or changed: the old
# row's repository, and the new one's when it differs.
_BUMP = """create function prdigest_bump() returns trigger language plpgsql as $body$
begin
    if tg_op <> 'INSERT' then
        insert into revisions (repo, n) values (old.repo, 1)
            on conflict (repo) do update set n = revisions.n + 1;
    end if;
    if tg_op = 'INSERT' or (tg_op = 'UPDATE' and new.repo is distinct from old.repo) then
        insert into revisions (repo, n) values (new.repo, 1)
            on conflict (repo) do update set n = revisions.n + 1;
    end if;
    return null;
end
$body$"""

# The tables a report reads, each with the column whose change changes a report (None: any change).
REVISED = {
    "prs": "data", "analyses": "data", "coverage": None, "dismissals": None, "repo_files": "text",
    "snoozes": None,
}  # fmt: skip


@pg_migration
def pg001_schema(tx: Tx) -> None:
    for ddl in [*_TABLES, _BUMP]:
        tx.run(ddl)
    for table, column in REVISED.items():
        tx.run(
            f"create trigger {table}_revision after insert or delete on {table} "
            "for each row execute function prdigest_bump()"
        )
        when = f" when (old.{column} is distinct from new.{column})" if column else ""
        tx.run(
            f"create trigger {table}_update_revision after update on {table} for each row{when} "
            "execute function prdigest_bump()"
        )


@pg_migration
def pg002_llm_rate(tx: Tx) -> None:
    # SQLite's m027: when each LLM endpoint and model is next free to take a request (storage/rate_limit.py).
    tx.run(
        "create table llm_rate (endpoint text, model text, free_at double precision not null, "
        "primary key (endpoint, model))"
    )


@pg_migration
def pg003_analysis_claims(tx: Tx) -> None:
    # SQLite's m028: which run is asking the LLM about a PR now (storage/analysis_claims.py).
    tx.run(
        "create table analysis_claims (key text primary key, holder text not null, claimed_at text not null)"
    )


@pg_migration
def pg004_open_states(tx: Tx) -> None:
    # SQLite's m029: GitHub's last answer to a repository's open-PR request (storage/open_states.py).
    tx.run(
        "create table open_states (url text, repo text, read_at text not null, answer text not null, "
        "primary key (url, repo))"
    )
