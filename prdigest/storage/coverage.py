"""Which days of a repository the cache holds completely, per source kind (git, github, fixture).

A read records the span it covered, as UTC instants [start, end) so that a week read in one timezone
serves a window in another; spans of one repository and source that touch are merged into one. A
window's missing days are the whole days (in its timezone, up to now) no span covers.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from prdigest.models import Window
from prdigest.storage.db import Store


def _utc(moment: datetime) -> str:
    # One text format (whole seconds, +00:00) so that spans compare as text in SQL.
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _at(moment: datetime) -> datetime:
    return datetime.fromisoformat(_utc(moment))


def record(store: Store, repo: str, source: str, start: datetime, end: datetime) -> None:
    """Mark [start, end) of ``repo`` as completely read from ``source``."""
    if end <= start:
        return
    lo, hi = _utc(start), _utc(end)
    with store.writing() as tx:
        tx.lock(f"coverage {repo} {source}")  # another writer's spans could touch the same ones
        touching = list(
            tx.rows(
                "select start_at, end_at from coverage "
                "where repo = ? and source = ? and start_at <= ? and end_at >= ?",
                [repo, source, hi, lo],
            )
        )
        lo = min([lo, *(row["start_at"] for row in touching)])
        hi = max([hi, *(row["end_at"] for row in touching)])
        tx.run_many(
            "delete from coverage where repo = ? and source = ? and start_at = ?",
            [(repo, source, row["start_at"]) for row in touching],
        )
        tx.insert("coverage", {"repo": repo, "source": source, "start_at": lo, "end_at": hi})


def record_window(
    store: Store, repo: str, source: str, window: Window, read_at: datetime, lacking: Iterable[datetime] = ()
) -> None:
    """Record a read of the window that began at ``read_at``: every run of its days up to then, except
    the days of the ``lacking`` moments (PRs listed but not read: those days stay missing)."""
    holes = {window.local_day(moment) for moment in lacking}
    for run in runs([day for day in window.days() if day not in holes], window.tz):
        record(store, repo, source, run.start, min(run.end, read_at))


def missing(
    store: Store,
    repo: str,
    window: Window,
    now: datetime,
    source: str | None = None,
    also: Iterable[tuple[datetime, datetime]] = (),
) -> list[Window]:
    """The runs of the window's days, up to ``now``, that no read of ``source`` covered wholly (of any
    source when None), nor any of the spans ``also`` names (reads not recorded: their PRs were counted,
    not kept); oldest first. One indexed query."""
    end = min(window.end, now)
    if end <= window.start:
        return []
    sql = "select start_at, end_at from coverage where repo = ? and end_at > ? and start_at < ?"
    params = [repo, _utc(window.start), _utc(end)]
    if source is not None:
        sql += " and source = ?"
        params.append(source)
    with store.reading() as tx:
        spans = sorted(
            (datetime.fromisoformat(row["start_at"]), datetime.fromisoformat(row["end_at"]))
            for row in tx.rows(sql, params)
        )
    # As `record` would have kept them: in whole seconds.
    spans = sorted([*spans, *((_at(lo), _at(hi)) for lo, hi in also if hi > lo)])
    merged: list[tuple[datetime, datetime]] = []
    for lo, hi in spans:  # spans of different sources may overlap
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    gaps = []
    for day in window.days():
        start = datetime.combine(day, time.min, window.zone)
        if start >= now:
            break
        stop = min(datetime.combine(day + timedelta(days=1), time.min, window.zone), now)
        if not any(lo <= start and stop <= hi for lo, hi in merged):
            gaps.append(day)
    return runs(gaps, window.tz)


def runs(days: list[date], tz: str) -> list[Window]:
    """Consecutive days as windows: [1, 2, 3, 5] -> 1..3, 5..5."""
    out: list[Window] = []
    for day in days:
        if out and out[-1].until + timedelta(days=1) == day:
            out[-1] = Window(since=out[-1].since, until=day, tz=tz)
        else:
            out.append(Window(since=day, until=day, tz=tz))
    return out
