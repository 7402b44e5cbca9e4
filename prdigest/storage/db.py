"""The cache: merged PRs, their analyses and generated reports, in one SQLite file.

One connection shared by the bot's threads (chat workers, scheduler), so it is
opened with ``check_same_thread=False`` and every use holds one lock.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from sqlite_utils import Database

from prdigest.clock import utc_now
from prdigest.errors import StorageError
from prdigest.models import PRAnalysis, PullRequest, Report, Window
from prdigest.storage.migrations import migrate
from prdigest.storage.setup_lock import setup_lock

# Rows written or read at a time where a window may hold tens of thousands of PRs.
BATCH = 500
# bm25 weights of the index's columns (title, body, paths, summary): a word in the title counts most.
_RANK = "bm25(prs_fts, 5.0, 1.0, 2.0, 3.0)"


def analysis_key(
    repo: str, number: int, content_hash: str, engine: str, model: str | None, version: str, lang: str
) -> str:
    """The identity of one analysis: a PR is analysed once per content, engine, model, rules and language."""
    parts = [repo, str(number), content_hash, engine, model or "", version, lang]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.RLock()
        in_memory = str(path) == ":memory:"
        try:
            if not in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with nullcontext() if in_memory else setup_lock(self.path):
                conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
                self.db = Database(conn)
                if not in_memory:
                    self.db.enable_wal()
                migrate(self.db)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StorageError(f"cannot open the database {path}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """The database under the store's lock: how the other modules of ``storage/`` run their queries
        (a write goes through `writing`)."""
        with self._lock:
            try:
                yield self.db
            except sqlite3.DatabaseError as exc:
                raise StorageError(f"database {self.path}: {exc}") from None

    _locked = reading  # the old private name, still used by some tests

    @contextmanager
    def writing(self) -> Iterator[Database]:
        """A write transaction that takes SQLite's write lock at its start (BEGIN IMMEDIATE).

        A plain BEGIN that reads and then writes cannot wait for another process's write: SQLite
        fails it at once with "database is locked". Several processes (replicas, a `deliver`
        beside `serve`) share one file, so every write starts immediate and waits its turn.
        """
        with self.reading() as db:
            if db.conn.in_transaction:
                with db.atomic():
                    yield db
                return
            db.conn.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.conn.rollback()
                raise
            db.conn.commit()

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
            with self.writing() as db:
                uids = [row["uid"] for row in rows]
                marks = ",".join("?" * len(uids))
                known = {r["uid"] for r in db.query(f"select uid from prs where uid in ({marks})", uids)}
                # Apart: a row without the column would be given a null summary in a batch with it.
                new = [
                    {**row, "summary": summaries.get(str(row["uid"]))}
                    for row in rows
                    if row["uid"] not in known
                ]
                for part in (new, [row for row in rows if row["uid"] in known]):
                    db.table("prs").upsert_all(part, pk="uid", batch_size=BATCH)
            count += len(batch)
        return count

    def prs_in_window(self, repo: str, window: Window, *, excerpts: bool = True) -> list[PullRequest]:
        """PRs and direct pushes of one repository merged in the window, oldest first; without their diff
        excerpts (``excerpts=False``: a report shows none, and a large window's are hundreds of MB)."""
        data = "data" if excerpts else "json_remove(data, '$.diff_excerpt') as data"
        with self.reading() as db:
            rows = db.query(
                f"select {data} from prs where repo = ? and merged_at >= ? and merged_at < ? "
                "order by merged_at, number",
                [repo, _utc(window.start), _utc(window.end)],
            )
            return [PullRequest.model_validate_json(row["data"]) for row in rows]

    def authors(self, repo: str) -> list[str]:
        """Every author of the repository's cached PRs: the people a question may name."""
        with self.reading() as db:
            rows = db.query("select distinct author from prs where repo = ?", [repo])
            return [row["author"] for row in rows]

    def pr_keys(self, repo: str, window: Window) -> list[tuple[str, int, str]]:
        """(uid, number, content hash) of the window's PRs (direct pushes left out), oldest first: what
        an analysis's cache key needs, without reading the PRs."""
        with self.reading() as db:
            rows = db.query(
                "select uid, number, content_hash from prs where repo = ? and merged_at >= ? "
                "and merged_at < ? and number is not null order by merged_at, number",
                [repo, _utc(window.start), _utc(window.end)],
            )
            return [(row["uid"], row["number"], row["content_hash"]) for row in rows]

    def prs_by_uid(self, uids: Sequence[str]) -> Iterator[list[PullRequest]]:
        """The PRs of ``uids`` in their order, a batch at a time (each read when the caller asks)."""
        for i in range(0, len(uids), BATCH):
            chunk = list(uids[i : i + BATCH])
            with self.reading() as db:
                rows = db.query(
                    f"select uid, data from prs where uid in ({','.join('?' * len(chunk))})", chunk
                )
                found = {row["uid"]: row["data"] for row in rows}
            yield [PullRequest.model_validate_json(found[uid]) for uid in chunk if uid in found]

    def signals_known(self, repo: str, window: Window, signals: Sequence[str]) -> set[str]:
        """Which of ``signals`` (PR fields) at least one PR of the window has: a source that supplies a
        signal gives it a value, [] included; None is "unknown"."""
        if not signals:
            return set()
        columns = ", ".join(f"max(json_type(data, '$.{s}') <> 'null') as s{i}" for i, s in enumerate(signals))
        with self.reading() as db:
            row = next(
                db.query(
                    f"select {columns} from prs where repo = ? and merged_at >= ? and merged_at < ?",
                    [repo, _utc(window.start), _utc(window.end)],
                )
            )
        return {s for i, s in enumerate(signals) if row[f"s{i}"]}

    def period_figures(self, repo: str, windows: list[Window]) -> list[tuple[int, int, int, int]]:
        """Merged PRs, additions, deletions and authors of each window, in SQL (zeros where none)."""
        out = []
        with self.reading() as db:
            for w in windows:
                row = next(
                    db.query(
                        "select count(*) as n, coalesce(sum(json_extract(data, '$.additions')), 0) as a, "
                        "coalesce(sum(json_extract(data, '$.deletions')), 0) as d, "
                        "count(distinct author) as authors from prs "
                        "where repo = ? and number is not null and merged_at >= ? and merged_at < ?",
                        [repo, _utc(w.start), _utc(w.end)],
                    )
                )
                out.append((row["n"], row["a"], row["d"], row["authors"]))
        return out

    def get_pr(self, repo: str, number: int) -> PullRequest | None:
        with self.reading() as db:
            rows = list(db.query("select data from prs where repo = ? and number = ?", [repo, number]))
        return PullRequest.model_validate_json(rows[0]["data"]) if rows else None

    def newest_prs(self, repo: str, window: Window | None = None, limit: int = 40) -> list[PullRequest]:
        """The newest PRs (not direct pushes) of ``repo``, merged in ``window`` when given; newest first."""
        sql = "select data from prs where repo = ? and number is not null"
        params: list[object] = [repo]
        if window is not None:
            sql += " and merged_at >= ? and merged_at < ?"
            params += [_utc(window.start), _utc(window.end)]
        with self.reading() as db:
            rows = db.query(sql + " order by merged_at desc, number desc limit ?", [*params, limit])
            return [PullRequest.model_validate_json(row["data"]) for row in rows]

    def count_prs(self, repo: str | None = None) -> int:
        with self.reading() as db:
            if repo is None:
                return db["prs"].count
            return db["prs"].count_where("repo = ?", [repo])

    def search_prs(self, words: Sequence[str], repo: str | None = None, limit: int = 20) -> list[PullRequest]:
        """Full-text search over title, body, paths and analysis summary, best first: any of ``words``
        may match, as a word or the start of one ("quant" finds "quantization"); title matches rank
        highest. Which words of a question to search for is the caller's business (`analysis.ask`)."""
        terms = [w for w in dict.fromkeys(words) if w]
        if not terms:
            return []
        fts = " OR ".join(_phrase(w) + "*" for w in terms)
        sql = (
            "select prs.data from prs join prs_fts on prs_fts.rowid = prs.rowid where prs_fts match :fts"
            + (" and prs.repo = :repo" if repo else "")
            + f" order by {_RANK}, prs.merged_at desc limit :limit"
        )
        with self.reading() as db:
            rows = db.query(sql, {"fts": fts, "repo": repo, "limit": limit})
            return [PullRequest.model_validate_json(row["data"]) for row in rows]

    # --- analyses -------------------------------------------------------------

    def get_analysis(self, key: str) -> PRAnalysis | None:
        return self.get_analyses([key]).get(key)

    def get_analyses(self, keys: list[str]) -> dict[str, PRAnalysis]:
        """The cached analyses among ``keys``, in a few queries whatever the week's size."""
        found: dict[str, PRAnalysis] = {}
        with self.reading() as db:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for row in db.query(f"select key, data from analyses where key in ({marks})", chunk):
                    found[row["key"]] = PRAnalysis.model_validate_json(row["data"])
        return found

    def put_analysis(self, pr: PullRequest, analysis: PRAnalysis, lang: str) -> str:
        return self.put_analyses([(pr, analysis)], lang)[0]

    def put_analyses(self, items: list[tuple[PullRequest, PRAnalysis]], lang: str) -> list[str]:
        """Keep analyses, in one transaction; each PR's summary joins the full-text index (prs triggers)."""
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
        with self.writing() as db:
            db.table("analyses").upsert_all(rows, pk="key", batch_size=500)
            db.conn.executemany("update prs set summary = ? where uid = ?", summaries)
        return keys

    # --- reports --------------------------------------------------------------

    def save_report(self, report: Report) -> int:
        with self.writing() as db:
            table = db.table("reports").insert(
                {
                    "repo": report.repo,
                    "since": report.window.since.isoformat(),
                    "until": report.window.until.isoformat(),
                    "tz": report.window.tz,
                    "engine": report.engine,
                    "lang": report.lang,
                    "created_at": report.generated_at.isoformat(),
                    "data": report.model_dump_json(),
                }
            )
            if table.last_pk is None:
                raise RuntimeError("the reports table gave no id for the new row")
            return int(table.last_pk)

    def get_report(self, report_id: int) -> Report | None:
        with self.reading() as db:
            rows = list(db.query("select data from reports where id = ?", [report_id]))
        return (
            Report.model_validate_json(rows[0]["data"]).model_copy(update={"id": report_id}) if rows else None
        )

    def schema_versions(self) -> list[str]:
        with self.reading() as db:
            return [row["name"] for row in db.query("select name from _prdigest_migrations order by rowid")]

    def integrity(self) -> dict[str, object]:
        """What the cache holds, for `prdigest db info` and tests."""
        with self.reading() as db:
            return {
                "path": str(self.path),
                "journal_mode": db.journal_mode,
                "prs": db["prs"].count,
                "analyses": db["analyses"].count,
                "reports": db["reports"].count,
            }


def _pr_row(pr: PullRequest, now: str) -> dict[str, object]:
    return {
        "uid": pr.uid, "repo": pr.repo, "number": pr.number, "sha": pr.sha, "title": pr.title,
        "body": pr.body, "author": pr.author, "merged_at": _utc(pr.merged_at),
        "paths": " ".join(f.path for f in pr.files or []), "source": pr.source,
        "content_hash": pr.content_hash(), "data": pr.model_dump_json(), "fetched_at": now,
    }  # fmt: skip


def _phrase(word: str) -> str:
    """One word as an FTS5 string: a quote inside it is doubled, so no word is read as query syntax."""
    return '"' + word.replace('"', '""') + '"'


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()
