"""The cache: merged PRs, their analyses and generated reports: in one SQLite file by default
(`storage/sqlite.py`), or on PostgreSQL (`storage/postgres.py`), the shared store of several machines.

Every query goes through a `Tx` (`storage/tx.py`): the SQL is written once for both databases.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from pydantic import SecretStr

from prdigest.clock import utc_now
from prdigest.config.storage_url import StoreUrl
from prdigest.models import PRAnalysis, PullRequest, Report, Window
from prdigest.storage.sqlite import SqliteBackend
from prdigest.storage.tx import Tx

# Rows written or read at a time where a window may hold tens of thousands of PRs.
BATCH = 500


def analysis_key(
    repo: str, number: int, content_hash: str, engine: str, model: str | None, version: str, lang: str
) -> str:
    """The identity of one analysis: a PR is analysed once per content, engine, model, rules and language."""
    parts = [repo, str(number), content_hash, engine, model or "", version, lang]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class Store:
    """``Store(path)``: the SQLite file (":memory:" for one in memory); ``Store(url, password)``: the
    store a [storage] url names, with at most ``connections`` open to a PostgreSQL server."""

    def __init__(self, where: str | Path | StoreUrl, password: SecretStr | None = None, connections: int = 8):
        if isinstance(where, StoreUrl) and where.kind == "postgresql":
            from prdigest.storage.postgres import PostgresBackend

            self._backend: SqliteBackend | PostgresBackend = PostgresBackend(where, password, connections)
        else:
            path = where.path if isinstance(where, StoreUrl) else where
            if path is None:
                raise ValueError("a SQLite store needs its file")
            self._backend = SqliteBackend(path)
        self.where = self._backend.describe  # what messages name: the file, or user@host:port/db

    @property
    def dialect(self) -> str:
        return self._backend.dialect

    def close(self) -> None:
        self._backend.close()

    @contextmanager
    def reading(self) -> Iterator[Tx]:
        """A read of the database: how the other modules of ``storage/`` run their queries (a write
        goes through `writing`)."""
        with self._backend.reading() as tx:
            yield tx

    @contextmanager
    def writing(self, durable: bool = True) -> Iterator[Tx]:
        """A write transaction, waiting for any other writer of the same rows (SQLite: of the file);
        within another, a savepoint of it. ``durable=False``: a commit that a crash of the process
        keeps and an OS (SQLite) or server (PostgreSQL) crash may lose."""
        with self._backend.writing(durable) as tx:
            yield tx

    def probe_write(self, wait_ms: int) -> None:
        """Begin a write and roll it back, waiting at most ``wait_ms`` for another writer."""
        self._backend.probe_write(wait_ms)

    # --- pull requests --------------------------------------------------------

    def upsert_prs(
        self,
        prs: Iterable[PullRequest],
        each_batch: Callable[[list[PullRequest]], Mapping[str, str]] | None = None,
    ) -> int:
        """Keep PRs, ``BATCH`` at a time, each batch in a transaction of its own: ``prs`` may be a source's
        stream of any size, and the store's other users are not held up while it is read. ``each_batch``
        is given every batch before it is stored and returns summaries by uid, stored with the PRs new to
        the cache (a summary written after the row would have the full-text index read it twice)."""
        count = 0
        stream = iter(prs)
        while batch := list(islice(stream, BATCH)):
            summaries = each_batch(batch) if each_batch is not None else {}
            now = utc_now().isoformat()
            rows = [_pr_row(pr, now) for pr in batch]
            with self.writing() as tx:
                uids = [row["uid"] for row in rows]
                marks = ",".join("?" * len(uids))
                known = {r["uid"] for r in tx.rows(f"select uid from prs where uid in ({marks})", uids)}
                # Apart: a row without the column would be given a null summary in a batch with it.
                new = [
                    {**row, "summary": summaries.get(str(row["uid"]))}
                    for row in rows
                    if row["uid"] not in known
                ]
                for part in (new, [row for row in rows if row["uid"] in known]):
                    tx.upsert("prs", part, pk=["uid"])
            count += len(batch)
        return count

    def prs_in_window(self, repo: str, window: Window, *, excerpts: bool = True) -> list[PullRequest]:
        """PRs and direct pushes of one repository merged in the window, oldest first; without their diff
        excerpts (``excerpts=False``: a report shows none, and a large window's are hundreds of MB)."""
        with self.reading() as tx:
            data = "data" if excerpts else tx.json_without("data", "diff_excerpt") + " as data"
            rows = tx.rows(
                f"select {data} from prs where repo = ? and merged_at >= ? and merged_at < ? "
                "order by merged_at, number",
                [repo, _utc(window.start), _utc(window.end)],
            )
            return [PullRequest.model_validate_json(row["data"]) for row in rows]

    def authors(self, repo: str) -> list[str]:
        """Every author of the repository's cached PRs: the people a question may name."""
        with self.reading() as tx:
            rows = tx.rows("select distinct author from prs where repo = ?", [repo])
            return [row["author"] for row in rows]

    def pr_keys(self, repo: str, window: Window) -> list[tuple[str, int, str]]:
        """(uid, number, content hash) of the window's PRs (direct pushes left out), oldest first: what
        an analysis's cache key needs, without reading the PRs."""
        with self.reading() as tx:
            rows = tx.rows(
                "select uid, number, content_hash from prs where repo = ? and merged_at >= ? "
                "and merged_at < ? and number is not null order by merged_at, number",
                [repo, _utc(window.start), _utc(window.end)],
            )
            return [(row["uid"], row["number"], row["content_hash"]) for row in rows]

    def prs_by_uid(self, uids: Sequence[str]) -> Iterator[list[PullRequest]]:
        """The PRs of ``uids`` in their order, a batch at a time (each read when the caller asks)."""
        for i in range(0, len(uids), BATCH):
            chunk = list(uids[i : i + BATCH])
            with self.reading() as tx:
                rows = tx.rows(
                    f"select uid, data from prs where uid in ({','.join('?' * len(chunk))})", chunk
                )
                found = {row["uid"]: row["data"] for row in rows}
            yield [PullRequest.model_validate_json(found[uid]) for uid in chunk if uid in found]

    def signals_known(self, repo: str, window: Window, signals: Sequence[str]) -> set[str]:
        """Which of ``signals`` (PR fields) at least one PR of the window has: a source that supplies a
        signal gives it a value, [] included; None is "unknown"."""
        if not signals:
            return set()
        with self.reading() as tx:
            columns = ", ".join(f"max({tx.json_known('data', s)}) as s{i}" for i, s in enumerate(signals))
            row = tx.one(
                f"select {columns} from prs where repo = ? and merged_at >= ? and merged_at < ?",
                [repo, _utc(window.start), _utc(window.end)],
            )
        return {s for i, s in enumerate(signals) if row and row[f"s{i}"]}

    def period_figures(self, repo: str, windows: list[Window]) -> list[tuple[int, int, int, int]]:
        """Merged PRs, additions, deletions and authors of each window, in SQL (zeros where none)."""
        out = []
        with self.reading() as tx:
            added, deleted = tx.json_int("data", "additions"), tx.json_int("data", "deletions")
            for w in windows:
                row = tx.one(
                    f"select count(*) as n, coalesce(sum({added}), 0) as a, "
                    f"coalesce(sum({deleted}), 0) as d, count(distinct author) as authors from prs "
                    "where repo = ? and number is not null and merged_at >= ? and merged_at < ?",
                    [repo, _utc(w.start), _utc(w.end)],
                )
                assert row is not None  # an aggregate has its one row
                out.append((int(row["n"]), int(row["a"]), int(row["d"]), int(row["authors"])))
        return out

    def get_pr(self, repo: str, number: int) -> PullRequest | None:
        with self.reading() as tx:
            row = tx.one("select data from prs where repo = ? and number = ?", [repo, number])
        return PullRequest.model_validate_json(row["data"]) if row else None

    def newest_prs(self, repo: str, window: Window | None = None, limit: int = 40) -> list[PullRequest]:
        """The newest PRs (not direct pushes) of ``repo``, merged in ``window`` when given; newest first."""
        sql = "select data from prs where repo = ? and number is not null"
        params: list[object] = [repo]
        if window is not None:
            sql += " and merged_at >= ? and merged_at < ?"
            params += [_utc(window.start), _utc(window.end)]
        with self.reading() as tx:
            rows = tx.rows(sql + " order by merged_at desc, number desc limit ?", [*params, limit])
        return [PullRequest.model_validate_json(row["data"]) for row in rows]

    def count_prs(self, repo: str | None = None) -> int:
        with self.reading() as tx:
            return tx.count("prs") if repo is None else tx.count("prs", "repo = ?", [repo])

    def search_prs(self, words: Sequence[str], repo: str | None = None, limit: int = 20) -> list[PullRequest]:
        """Full-text search over title, body, paths and analysis summary, best first: any of ``words``
        may match, as a word or the start of one ("quant" finds "quantization"); title matches rank
        highest. Which words of a question to search for is the caller's business (`analysis.ask`)."""
        terms = [w for w in dict.fromkeys(words) if w]
        if not terms:
            return []
        with self.reading() as tx:
            found = tx.match_prs(terms, repo, limit)
        return [PullRequest.model_validate_json(data) for data in found]

    # --- analyses -------------------------------------------------------------

    def get_analysis(self, key: str) -> PRAnalysis | None:
        return self.get_analyses([key]).get(key)

    def get_analyses(self, keys: list[str]) -> dict[str, PRAnalysis]:
        """The cached analyses among ``keys``, in a few queries whatever the week's size."""
        found: dict[str, PRAnalysis] = {}
        with self.reading() as tx:
            for i in range(0, len(keys), BATCH):
                chunk = keys[i : i + BATCH]
                marks = ",".join("?" * len(chunk))
                for row in tx.rows(f"select key, data from analyses where key in ({marks})", chunk):
                    found[row["key"]] = PRAnalysis.model_validate_json(row["data"])
        return found

    def put_analysis(self, pr: PullRequest, analysis: PRAnalysis, lang: str) -> str:
        return self.put_analyses([(pr, analysis)], lang)[0]

    def put_analyses(self, items: list[tuple[PullRequest, PRAnalysis]], lang: str) -> list[str]:
        """Keep analyses, in one transaction; each PR's summary joins the full-text index."""
        now = utc_now().isoformat()
        rows: list[dict[str, object]] = []
        keys: list[str] = []
        summaries: list[tuple[str, str]] = []
        for pr, analysis in items:
            if pr.number is None:
                raise ValueError("direct pushes are not analysed")
            content = pr.content_hash()
            key = analysis_key(
                pr.repo, pr.number, content, analysis.engine, analysis.model, analysis.version, lang
            )
            rows.append({
                "key": key, "repo": pr.repo, "number": pr.number, "content_hash": content,
                "engine": analysis.engine, "model": analysis.model or "", "version": analysis.version,
                "lang": lang, "data": analysis.model_dump_json(), "created_at": now,
            })  # fmt: skip
            keys.append(key)
            summaries.append((analysis.summary, pr.uid))
        with self.writing() as tx:
            tx.upsert("analyses", rows, pk=["key"])
            tx.run_many("update prs set summary = ? where uid = ?", summaries)
        return keys

    # --- reports --------------------------------------------------------------

    def save_report(self, report: Report) -> int:
        with self.writing() as tx:
            return tx.insert_id(
                "reports",
                {
                    "repo": report.repo,
                    "since": report.window.since.isoformat(),
                    "until": report.window.until.isoformat(),
                    "tz": report.window.tz,
                    "engine": report.engine,
                    "lang": report.lang,
                    "created_at": report.generated_at.isoformat(),
                    "data": report.model_dump_json(),
                },
            )

    def get_report(self, report_id: int) -> Report | None:
        with self.reading() as tx:
            row = tx.one("select data from reports where id = ?", [report_id])
        return Report.model_validate_json(row["data"]).model_copy(update={"id": report_id}) if row else None

    def schema_versions(self) -> list[str]:
        with self.reading() as tx:
            return [row["name"] for row in tx.rows("select name from _prdigest_migrations order by rowid")]

    def integrity(self) -> dict[str, object]:
        """What the cache holds, for `prdigest db info` and tests."""
        with self.reading() as tx:
            return {
                "path": self.where,
                "journal_mode": self._backend.journal_mode,
                "prs": tx.count("prs"),
                "analyses": tx.count("analyses"),
                "reports": tx.count("reports"),
            }


def _pr_row(pr: PullRequest, now: str) -> dict[str, object]:
    return {
        "uid": pr.uid, "repo": pr.repo, "number": pr.number, "sha": pr.sha, "title": pr.title,
        "body": pr.body, "author": pr.author, "merged_at": _utc(pr.merged_at),
        "paths": " ".join(f.path for f in pr.files or []), "source": pr.source,
        "content_hash": pr.content_hash(), "data": pr.model_dump_json(), "fetched_at": now,
    }  # fmt: skip


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()
