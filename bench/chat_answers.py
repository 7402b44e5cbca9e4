"""Chat-answers benchmark: do answers to questions over a real history cite the right PRs?

    python bench/chat_answers.py [--shared ../shared] [--clones DIR] [-v]

Clones radixark/miles from its bundle in ``data/`` and asks the chat, in process (rules engine, a fresh
cache, the clone as source), questions about five real weeks: what a person worked on, which PRs touched a
part of the code, what was merged on a day, and questions about days when nothing was merged. The PRs a
correct answer cites are computed here from `git log` of the clone (author, files, merge day), never typed
in. Prints, one `name=value` a line:

  questions          the questions asked (those about a period with merges)
  answer_recall      the expected PRs cited, over all expected (goal >= 0.9)
  answer_precision   the cited PRs expected, over all cited (goal >= 0.9)
  empty_period_said  the questions about an empty period answered "nothing was merged" (goal 1.0)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from quality_bench import clone_of  # noqa: E402

from prdigest.config import load_settings  # noqa: E402
from prdigest.handlers import Context, Services, handle  # noqa: E402
from prdigest.handlers.replies import Reply  # noqa: E402
from prdigest.sources.git.source import GitSource  # noqa: E402
from prdigest.sources.registry import source_factory  # noqa: E402
from prdigest.storage import Store  # noqa: E402

REPO = "radixark/miles"
TZ = ZoneInfo("Asia/Shanghai")  # the settings' default report timezone
WEEKS = (date(2026, 7, 13), date(2026, 7, 20), date(2026, 7, 27), date(2026, 8, 3), date(2026, 8, 10))
# Directory names that say little of a part of the code: never asked about.
GENERIC = frozenset({"miles", "tests", "test", "docs", "examples", "scripts", ".github", "src", "workflows",
                     "ci", "utils", "tools", "backends"})  # fmt: skip
EMPTY_SAID = re.compile(r"Nothing was merged|No merged PRs|saw 0 PRs|没有合入|没有合并", re.I)
_NUMBER = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)")
_CO_AUTHOR = re.compile(r"^co-authored-by:\s*(.+?)\s*$", re.I | re.M)
_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$", re.I)


@dataclass(frozen=True)
class Merge:
    number: int
    author: str  # how a chat names the author: their first name, or their login
    who: frozenset[str]  # the folded forms a question may name its author or a co-author by
    day: date
    parts: frozenset[str]  # directory names and file stems of its files


@dataclass(frozen=True)
class Question:
    text: str
    today: date
    expected: frozenset[int]  # empty: nothing was merged in the period asked about


def fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.casefold())


def merges(clone: Path) -> list[Merge]:
    """Every first-parent commit of the history that names its PR, as git tells it."""
    out = subprocess.run(
        ["git", "-C", str(clone), "log", "--first-parent", "--name-only",
         "--format=%x1e%aN%x1f%aE%x1f%cI%x1f%s%x1f%b%x1d"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    found = []
    for record in out.split("\x1e")[1:]:
        head, _, names = record.partition("\x1d")
        name, email, when, subject, body = head.split("\x1f")
        match = _NUMBER.search(subject)
        if match is None:
            continue
        login = _NOREPLY.match(email)
        author = login.group(1) if login else name.split()[0]
        who = {fold(author)}
        for co in _CO_AUTHOR.findall(body):  # a co-author worked on it too
            who |= {fold(part) for part in re.split(r"[\s()<>]+", co) if part}
        parts: set[str] = set()
        for path in filter(None, names.splitlines()):
            pieces = path.lower().split("/")
            parts.update(pieces[:-1])
            parts.add(pieces[-1].rsplit(".", 1)[0])
        day = datetime.fromisoformat(when).astimezone(TZ).date()
        number = int(match.group(1) or match.group(2))
        found.append(Merge(number, author, frozenset(who), day, frozenset(parts)))
    return found


def questions(history: list[Merge]) -> Iterator[Question]:
    """Per week: its three busiest authors, its two most touched parts of the code, its busiest day and
    an empty day, each asked as people ask it."""
    for monday in WEEKS:
        days = {monday + timedelta(days=i) for i in range(7)}
        week = [m for m in history if m.day in days]
        today = monday + timedelta(days=9)  # the Wednesday after: "last week" is this week
        people = [name for name, _ in Counter(m.author for m in week).most_common(3)]
        for i, first in enumerate(people):
            asked = [m.number for m in week if fold(first) in m.who]
            text = (f"What did {first} work on in the week of {monday:%b} {monday.day}?",
                    f"Which PRs did {first} merge last week?", f"{first} 上周做了哪些 PR？")[i]  # fmt: skip
            yield Question(text, today, frozenset(asked))
        touched = Counter(p for m in week for p in m.parts if p not in GENERIC and len(p) >= 4)
        parts = [p for p, n in touched.most_common() if 2 <= n <= 0.6 * len(week)][:2]
        iso = f"{monday.isocalendar()[0]}-W{monday.isocalendar()[1]:02d}"
        for i, part in enumerate(parts):
            asked = [m.number for m in week if part in m.parts]
            text = (f"Which PRs touched {part} in {iso}?", f"上周改了 {part} 的 PR 有哪些？")[i]
            yield Question(text, today, frozenset(asked))
        busiest = Counter(m.day for m in week).most_common(1)[0][0]
        yield Question(f"what was merged on {busiest.isoformat()}?", today,
                       frozenset(m.number for m in week if m.day == busiest))  # fmt: skip
        empty = [d for d in sorted(days) if not any(m.day == d for m in history)]
        if empty:
            yield Question(f"What did {people[0]} merge on {empty[0].isoformat()}?", today,
                           frozenset())  # fmt: skip
    # Before the history's first merge nothing was merged, however it is asked.
    first = min(m.day for m in history)
    before = first - timedelta(days=first.weekday() + 14)
    today = WEEKS[0] + timedelta(days=9)
    iso = f"{before.isocalendar()[0]}-W{before.isocalendar()[1]:02d}"
    yield Question(f"which PRs touched rollout in {iso}?", today, frozenset())
    yield Question(f"{before.isoformat()} 合并了哪些 PR？", today, frozenset())
    week_of = f"{before:%b} {before.day}, {before.year}"
    yield Question(f"what did {history[-1].author} work on in the week of {week_of}?", today, frozenset())


def cited(reply: Reply) -> set[int]:
    if reply.report is not None:  # a period's report: its PRs are the answer
        return {p.number for p in reply.report.prs}
    return set(reply.cited)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--clones", type=Path, help="a folder to keep the bundle's clone in and reuse")
    parser.add_argument("-l", "--list", action="store_true", help="print the questions and stop")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each question's misses")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = clone_of(opts.shared / "data", REPO, opts.clones or Path(tmp))
        history = merges(clone)
        asked = list(questions(history))
        if opts.list:
            for q in asked:
                print(f"{q.today} {sorted(q.expected)} {q.text}")
            return
        store = Store(Path(tmp) / "cache.db")
        settings = load_settings(env={})
        source = GitSource(clone, repo=REPO)
        ctx = Context(platform="console", chat_id="bench", user_id="bench")
        hits = expected = shown = empty = said = 0
        for q in asked:
            now = datetime.combine(q.today, time(10), TZ).astimezone(UTC)
            sources = source_factory(settings, source)
            svc = Services(settings=settings, store=store, default_repo=REPO, source_for=sources,
                           clock=lambda now=now: now)  # fmt: skip
            reply = handle(q.text, ctx, svc)
            got = cited(reply)
            if not q.expected:
                empty += 1
                said += bool(EMPTY_SAID.search(reply.text))
                if opts.verbose and not EMPTY_SAID.search(reply.text):
                    print(f"# {q.text!r}: not said empty: {reply.text[:200]!r}", file=sys.stderr)
                continue
            hits += len(got & q.expected)
            expected += len(q.expected)
            shown += len(got)
            if opts.verbose and got != q.expected:
                print(f"# {q.text!r} ({reply.kind}): missed {sorted(q.expected - got)}, extra "
                      f"{sorted(got - q.expected)}", file=sys.stderr)  # fmt: skip
        store.close()
    print(f"questions={len(asked) - empty}")
    print(f"answer_recall={hits / max(expected, 1):.3f}")
    print(f"answer_precision={hits / max(shown, 1):.3f}")
    print(f"empty_period_said={said / max(empty, 1):.3f}")


if __name__ == "__main__":
    main()
