"""The cache on SQLite and on PostgreSQL: migrations, upserts, analysis keys, full-text search, threads."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prdigest.analysis.ask import search_terms
from prdigest.errors import StorageError
from prdigest.models import PRAnalysis, PullRequest, Window
from prdigest.storage import Store
from prdigest.storage.db import analysis_key
from prdigest.storage.llm_log import pr_summaries
from prdigest.storage.migrations import MIGRATIONS

WEEK = Window(since="2026-09-07", until="2026-09-13", tz="Asia/Shanghai")


def pr(
    number: int | None, title: str = "fix: something", merged: str = "2026-09-08T10:00:00+08:00", **kw
) -> PullRequest:
    return PullRequest(
        repo="acme/x",
        number=number,
        sha=f"{number or 0:040d}",
        title=title,
        author="alice",
        merged_at=datetime.fromisoformat(merged),
        **kw,
    )


@pytest.fixture
def store(any_store: Store) -> Store:
    """Each test of the store's API runs on SQLite and on PostgreSQL."""
    return any_store


def test_migrations_are_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first = Store(path)
    names = [fn.__name__ for fn in MIGRATIONS]
    assert first.schema_versions() == names
    first.close()
    again = Store(path)  # reopening applies nothing twice
    assert again.schema_versions() == names
    assert again.integrity()["journal_mode"] == "wal"
    again.close()


def test_upsert_by_repo_and_number(store: Store) -> None:
    store.upsert_prs([pr(1, "first title"), pr(2)])
    store.upsert_prs([pr(1, "edited title")])
    assert store.count_prs("acme/x") == 2
    got = store.get_pr("acme/x", 1)
    assert got is not None and got.title == "edited title"
    assert store.get_pr("acme/x", 99) is None


def test_unknown_survives_the_round_trip(store: Store) -> None:
    store.upsert_prs([pr(3, labels=[], reviews=None)])
    got = store.get_pr("acme/x", 3)
    assert got is not None
    assert got.labels == []  # known: none
    assert got.reviews is None  # unknown


def test_window_query_uses_the_timezone(store: Store) -> None:
    store.upsert_prs(
        [
            pr(1, merged="2026-09-06T23:59:59+08:00"),
            pr(2, merged="2026-09-06T23:30:00+00:00"),  # Monday 07:30 in Shanghai
            pr(3, merged="2026-09-13T23:59:59+08:00"),
            pr(4, merged="2026-09-14T00:00:00+08:00"),
            pr(None, "direct push", merged="2026-09-09T00:00:00+08:00"),
        ]
    )
    got = store.prs_in_window("acme/x", WEEK)
    assert [p.number for p in got] == [2, None, 3]


def test_analysis_is_keyed_by_content_engine_version_and_language(store: Store) -> None:
    p = pr(5)
    store.upsert_prs([p])
    analysis = PRAnalysis(
        repo="acme/x",
        number=5,
        summary="Fixes the login race",
        importance=6,
        insight=4,
        engine="rules",
        version="rules-1",
    )
    key = store.put_analysis(p, analysis, "en")
    assert key == analysis_key("acme/x", 5, p.content_hash(), "rules", None, "rules-1", "en")
    assert store.get_analysis(key) == analysis
    # Another language, another rules version or changed content is another analysis.
    assert key != analysis_key("acme/x", 5, p.content_hash(), "rules", None, "rules-1", "zh")
    assert key != analysis_key("acme/x", 5, p.content_hash(), "rules", None, "rules-2", "en")
    assert key != analysis_key("acme/x", 5, pr(5, "other").content_hash(), "rules", None, "rules-1", "en")


def test_full_text_index_follows_upserts_and_summaries(store: Store) -> None:
    store.upsert_prs([pr(6, "feat: nvfp4 kernel"), pr(7, "docs: typo")])
    assert [p.number for p in store.search_prs(search_terms("nvfp4"))] == [6]
    store.upsert_prs([pr(6, "feat: fp8 kernel")])  # the trigger replaces the old text
    assert store.search_prs(search_terms("nvfp4")) == []
    assert [p.number for p in store.search_prs(search_terms("fp8 kernel?"))] == [6]  # raw text is safe
    store.put_analysis(
        pr(7, "docs: typo"),
        PRAnalysis(repo="acme/x", number=7, summary="Sandbox quickstart", importance=1, insight=1),
        "en",
    )
    assert [p.number for p in store.search_prs(search_terms("who touched the sandbox?"))] == [7]
    assert store.search_prs(search_terms('"AND (')) == []
    # The store quotes whatever words it is given: FTS5 syntax in them is inert.
    assert [p.number for p in store.search_prs(['"AND (', "fp8)", ""])] == [6]


def test_summaries_given_with_a_batch_are_stored_with_the_new_prs_only(store: Store) -> None:
    seen: list[list[int | None]] = []

    def hook(batch: list[PullRequest]) -> dict[str, str]:
        seen.append([p.number for p in batch])
        return {p.uid: f"summary of {p.number} quokka" for p in batch if p.number is not None}

    store.upsert_prs([pr(6, "feat: kernel")])
    store.put_analysis(
        pr(6, "feat: kernel"),
        PRAnalysis(repo="acme/x", number=6, summary="an LLM wombat summary", importance=5, insight=2),
        "en",
    )
    assert store.upsert_prs([pr(6, "feat: kernel"), pr(8, "docs: readme"), pr(None, "a push")], hook) == 3
    assert seen == [[6, 8, None]]
    # The new PR is found by its summary; the known one keeps the summary it had (in a batch with a new
    # one, it is not given a null one either).
    assert [p.number for p in store.search_prs(["quokka"])] == [8]
    assert [p.number for p in store.search_prs(["wombat"])] == [6]
    assert pr_summaries(store, "acme/x", [6, 8]) == {6: "an LLM wombat summary", 8: "summary of 8 quokka"}
    # Rewritten unchanged, a row stays in the index as it was.
    store.upsert_prs([pr(6, "feat: kernel"), pr(8, "docs: readme")])
    assert sorted(p.number or 0 for p in store.search_prs(["quokka", "wombat"])) == [6, 8]


def test_search_ranks_title_matches_first_and_reads_word_starts(store: Store) -> None:
    long_body = "In this change the quantization path is touched once, among many other things. " * 5
    store.upsert_prs(
        [
            pr(1, "docs: what changed in the release notes", body=long_body),
            pr(2, "ci: retry flaky jobs", body="Mentions quantization once."),
            pr(3, "quant: add the NVFP4 kernel"),
            pr(4, "feat: quantization-aware training"),
        ]
    )
    # Question words and "changed" name no PR; "quant" also finds "quantization"; titles rank first.
    found = [p.number for p in store.search_prs(search_terms("What changed in quant?"))]
    assert set(found[:2]) == {3, 4} and set(found) == {1, 2, 3, 4}
    # names no topic: nothing to search for
    assert store.search_prs(search_terms("What changed this week?")) == []
    assert store.search_prs(search_terms("quant"), repo="acme/other") == []


def test_reports_are_kept(store: Store) -> None:
    from prdigest.analysis.report import build_report
    from prdigest.config import ReportSettings

    report = build_report(
        "acme/x", WEEK, [pr(8)], source="fixture", unavailable=[], settings=ReportSettings()
    )
    report_id = store.save_report(report)
    assert store.get_report(report_id) == report.model_copy(update={"id": report_id})


def test_writes_from_many_threads(store: Store) -> None:
    errors: list[BaseException] = []
    base = datetime(2026, 9, 8, tzinfo=UTC)

    def write(start: int) -> None:
        try:
            for n in range(start, start + 50):
                store.upsert_prs([pr(n, merged=(base + timedelta(minutes=n)).isoformat())])
                store.prs_in_window("acme/x", WEEK)
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i * 100 + 1,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert store.count_prs("acme/x") == 200


def test_unreadable_database(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError, match="cannot open the database"):
        Store(bad)
    blocked = tmp_path / "file"
    blocked.write_text("x")
    with pytest.raises(StorageError, match="cannot open the database"):
        Store(blocked / "sub" / "db.sqlite")


def test_a_stream_of_prs_is_stored_batch_by_batch(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("prdigest.storage.db.BATCH", 2)
    taken: list[int] = []

    def stream():
        for n in range(1, 6):
            taken.append(n)
            yield pr(n, diff_excerpt=f"+line {n}")

    stored: list[list[int | None]] = []

    def each_batch(batch: list[PullRequest]) -> dict[str, str]:
        stored.append([p.number for p in batch])
        # Given as it is read, before it is stored; the next batch is read after.
        assert store.count_prs("acme/x") == len(taken) - len(batch)
        return {}

    assert store.upsert_prs(stream(), each_batch) == 5
    assert taken == [1, 2, 3, 4, 5] and store.count_prs("acme/x") == 5
    assert stored == [[1, 2], [3, 4], [5]]


def test_window_without_excerpts_and_prs_by_uid(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.upsert_prs([pr(n, diff_excerpt=f"+line {n}") for n in (1, 2, 3)])
    light = store.prs_in_window("acme/x", WEEK, excerpts=False)
    full = store.prs_in_window("acme/x", WEEK)
    assert [p.diff_excerpt for p in light] == [None, None, None]
    assert [p.model_copy(update={"diff_excerpt": None}) for p in full] == light
    assert [(n, content) for _, n, content in store.pr_keys("acme/x", WEEK)] == [
        (p.number, p.content_hash()) for p in full
    ]
    monkeypatch.setattr("prdigest.storage.db.BATCH", 2)
    uids = [full[2].uid, "acme/x#404", full[0].uid, full[1].uid]
    batches = list(store.prs_by_uid(uids))
    assert [[p.number for p in b] for b in batches] == [[3], [1, 2]]  # in the order asked, unknown left out
    assert batches[0][0].diff_excerpt == "+line 3"


def test_signals_known_in_a_window(store: Store) -> None:
    store.upsert_prs([pr(1, labels=[], reviews=None), pr(2, labels=None, diff_excerpt="+x")])
    known = store.signals_known("acme/x", WEEK, ["labels", "reviews", "diff_excerpt", "checks"])
    assert known == {"labels", "diff_excerpt"}  # [] is known (none); None everywhere is unknown
    assert (
        store.signals_known("acme/x", Window(since="2020-01-06", until="2020-01-12", tz="UTC"), ["labels"])
        == set()
    )


def test_dismissals_and_a_changed_repository_file_move_the_revision(store: Store) -> None:
    from prdigest.models import Dismissal
    from prdigest.storage.dismissals import delete_dismissal, save_dismissal
    from prdigest.storage.repo_files import save_repo_file
    from prdigest.storage.revision import revision

    seen = [revision(store, "o/r")]
    at = datetime(2026, 9, 14, tzinfo=UTC)
    save_dismissal(store, Dismissal(repo="o/r", number=4, label="no_tests", by="U1", at=at))
    seen.append(revision(store, "o/r"))
    save_repo_file(store, "o/r", "[taxonomy]\n")
    seen.append(revision(store, "o/r"))
    save_repo_file(store, "o/r", "[taxonomy]\n")  # every report reads it again: unchanged, no move
    seen.append(revision(store, "o/r"))
    save_repo_file(store, "o/r", "")
    seen.append(revision(store, "o/r"))
    assert delete_dismissal(store, "o/r", 4, "no_tests")
    seen.append(revision(store, "o/r"))
    assert seen == [seen[0], seen[0] + 1, seen[0] + 2, seen[0] + 2, seen[0] + 3, seen[0] + 4]
    assert revision(store, "another/repo") == 0  # one counter per repository
