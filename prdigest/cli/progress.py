"""Counted progress on a terminal's stderr (rich): a line per count with its rate and time left.

Nothing is drawn when stderr is not a terminal: scripts and logs get the results alone.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.text import Text

from prdigest.progress import Progress


class _Rate(ProgressColumn):
    """Items per second (rich's own speed column counts bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "", style="progress.data.speed")


class TerminalProgress(Progress):
    """Phases on a spinner line; each count on its own line: n/N, a bar, the rate and the time left."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._bars = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,  # the lines go once the work is done; the answer stays
            disable=not self.console.is_terminal,
        )
        self._phase = self._bars.add_task("working…", total=None)
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> TerminalProgress:
        self._bars.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._bars.stop()

    def phase(self, text: str) -> None:
        self._bars.update(self._phase, description=text)

    def count(self, what: str, done: int, total: int | None = None) -> None:
        task = self._tasks.get(what)
        if task is None:
            task = self._tasks[what] = self._bars.add_task(what, total=total)
        self._bars.update(task, completed=done, total=total)
