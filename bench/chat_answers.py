"""Chat-answers benchmark: do answers to questions over a real history cite the right PRs?

    python bench/chat_answers.py [--shared ../shared] [--repo OWNER/NAME] [--clones DIR] [-l] [-v]

Clones each repository from its bundle in ``data/`` (radixark/miles, huggingface/trl) and asks the chat,
in process (rules engine, a fresh cache, the clone as source), questions about five real weeks of it (the
last five complete weeks with merges): what a person worked on, which PRs touched a part of the code, what
was merged on a day, and questions about periods when nothing was merged. The PRs a correct answer cites
are computed here from `git log` of the clone (author and co-authors, files, merge day), never typed in.
Prints, one `name=value` a line, over all repositories and then per repository (`_<owner>__<name>`):

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

REPOS = ("radixark/miles", "huggingface/trl")
TZ = ZoneInfo("Asia/Shanghai")  # the settings' default report timezone
WEEKS = 5
# Directory names that say little of a part of the code: never asked about.
GENERIC = frozenset({"miles", "tests", "test", "docs", "examples", "scripts", ".github", "src", "workflows",
                     "ci", "utils", "tools", "backends"})  # fmt: skip
EMPTY_SAID = re.compile(r"No pull request was merged|No merged PRs|saw 0 PRs|没有合入|没有合并", re.I)
_NUMBER = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)")
_CO_AUTHOR = re.compile(r"^\s*co-authored-by:\s*(.+?)\s*$", re.I | re.M)
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
        for co in _CO_AUTHOR.findall(body):  # a co-author worked on it too: by name parts or email local part
            who |= {fold(part.partition("@")[0]) for part in re.split(r"[\s()<>]+", co) if part}
        parts: set[str] = set()
        for path in filter(None, names.splitlines()):
            pieces = path.lower().split("/")
            parts.update(pieces[:-1])
            parts.add(pieces[-1].rsplit(".", 1)[0])
        day = datetime.fromisoformat(when).astimezone(TZ).date()
        number = int(match.group(1) or match.group(2))
        found.append(Merge(number, author, frozenset(who), day, frozenset(parts)))
    return found


def weeks(history: list[Merge]) -> list[date]:
    """The Mondays of the last WEEKS complete weeks of the history that have merges."""
    last = max(m.day for m in history)
    mondays = sorted({m.day - timedelta(days=m.day.weekday()) for m in history}, reverse=True)
    return sorted(d for d in mondays if d + timedelta(days=6) < last)[-WEEKS:]


def questions(history: list[Merge]) -> Iterator[Question]:
    """Per week: its three busiest authors, its two most touched parts of the code, its busiest day and
    an empty day, each asked as people ask it."""
    mondays = weeks(history)
    for monday in mondays:
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
    today = mondays[0] + timedelta(days=9)
    iso = f"{before.isocalendar()[0]}-W{before.isocalendar()[1]:02d}"
    yield Question(f"which PRs touched rollout in {iso}?", today, frozenset())
    yield Question(f"{before.isoformat()} 合并了哪些 PR？", today, frozenset())
    week_of = f"{before:%b} {before.day}, {before.year}"
    yield Question(f"what did {history[-1].author} work on in the week of {week_of}?", today, frozenset())


def cited(reply: Reply) -> set[int]:
    if reply.report is not None:  # a period's report: its PRs are the answer
        return {p.number for p in reply.report.prs}
    return set(reply.cited)


@dataclass
class Score:
    questions: int = 0
    hits: int = 0
    expected: int = 0
    shown: int = 0
    empty: int = 0
    said: int = 0

    def add(self, other: Score) -> None:
        for name in ("questions", "hits", "expected", "shown", "empty", "said"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def lines(self, suffix: str = "") -> list[str]:
        return [
            f"questions{suffix}={self.questions}",
            f"answer_recall{suffix}={self.hits / max(self.expected, 1):.3f}",
            f"answer_precision{suffix}={self.hits / max(self.shown, 1):.3f}",
            f"empty_period_said{suffix}={self.said / max(self.empty, 1):.3f}",
        ]


def score(repo: str, clone: Path, asked: list[Question], db: Path, verbose: bool) -> Score:
    """Ask every question of ``repo`` through the chat and score what its answers cite."""
    store = Store(db)
    settings = load_settings(env={})
    sources = source_factory(settings, GitSource(clone, repo=repo))
    ctx = Context(platform="console", chat_id="bench", user_id="bench")
    found = Score()
    for q in asked:
        now = datetime.combine(q.today, time(10), TZ).astimezone(UTC)
        svc = Services(settings=settings, store=store, default_repo=repo, source_for=sources,
                       clock=lambda now=now: now)  # fmt: skip
        reply = handle(q.text, ctx, svc)
        got = cited(reply)
        if not q.expected:
            found.empty += 1
            found.said += bool(EMPTY_SAID.search(reply.text))
            if verbose and not EMPTY_SAID.search(reply.text):
                print(f"# {q.text!r}: not said empty: {reply.text[:200]!r}", file=sys.stderr)
            continue
        found.questions += 1
        found.hits += len(got & q.expected)
        found.expected += len(q.expected)
        found.shown += len(got)
        if verbose and got != q.expected:
            print(f"# {q.text!r} ({reply.kind}): missed {sorted(q.expected - got)}, extra "
                  f"{sorted(got - q.expected)}", file=sys.stderr)  # fmt: skip
    store.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--repo", action="append", help="OWNER/NAME (repeatable; default: every bundle's)")
    parser.add_argument("--clones", type=Path, help="a folder to keep the bundles' clones in and reuse")
    parser.add_argument("-l", "--list", action="store_true", help="print the questions and stop")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each question's misses")
    opts = parser.parse_args()
    total, per_repo = Score(), []
    with tempfile.TemporaryDirectory() as tmp:
        for repo in opts.repo or REPOS:
            clone = clone_of(opts.shared / "data", repo, opts.clones or Path(tmp))
            asked = list(questions(merges(clone)))
            if opts.list:
                for q in asked:
                    print(f"{repo} {q.today} {sorted(q.expected)} {q.text}")
                continue
            found = score(repo, clone, asked, Path(tmp) / f"{repo.replace('/', '__')}.db", opts.verbose)
            total.add(found)
            per_repo.append(found.lines("_" + repo.replace("/", "__")))
    if not opts.list:
        print("\n".join(total.lines() + [line for lines in per_repo for line in lines]))


if __name__ == "__main__":
    main()
