"""PullRequest models from a JSON file: the demo week, and tests that need reviews and threads.

The file is ``{"repo": "owner/name", "window": {...}?, "prs": [PullRequest, ...]}``;
each PR may leave out ``repo`` (the file's) and ``source``.
"""

from __future__ import annotations

import json
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from prdigest.errors import SourceError
from prdigest.models import OPTIONAL_SIGNALS, PullRequest, Window
from prdigest.sources.base import Source

if TYPE_CHECKING:
    from prdigest.storage import Store

DEMO_FIXTURE = "demo_week.json"


def demo_fixture_path() -> Path:
    return Path(str(resources.files("prdigest.fixtures").joinpath(DEMO_FIXTURE)))


class FixtureSource(Source):
    """The PRs of a file: complete for the period it says it holds (its window), else for any."""

    kind = "fixture"
    # A PR the cache lacks is one the file does not hold either: `explain` names no source to look in.
    finds_prs = False

    def __init__(self, path: str | Path, repo: str | None = None):
        self.path = Path(path)
        data = self._load()
        self.repo = repo or data.get("repo") or ""
        if not self.repo:
            raise SourceError(f'{self.path}: no repository: give the file a "repo" key or pass --repo')
        self.window = self._window(data.get("window"))
        self.prs = self._prs(data.get("prs"))
        # What no PR of the file carries is what this source could not supply.
        self.unavailable = tuple(s for s in OPTIONAL_SIGNALS if all(getattr(p, s) is None for p in self.prs))

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SourceError(f"fixture file {self.path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SourceError(f"cannot read fixture file {self.path}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise SourceError(
                f"{self.path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
        if not isinstance(data, dict):
            raise SourceError(f'{self.path}: expected an object with "repo" and "prs"')
        return data

    def _window(self, raw: Any) -> Window | None:
        if raw is None:
            return None
        try:
            return Window.model_validate(raw)
        except ValidationError as exc:
            raise SourceError(f"{self.path}: window: {_first_error(exc)}") from None

    def _prs(self, raw: Any) -> list[PullRequest]:
        if not isinstance(raw, list):
            raise SourceError(f'{self.path}: "prs" must be a list of pull requests')
        prs = []
        for index, item in enumerate(raw):
            if not isinstance(item, dict):
                raise SourceError(f"{self.path}: prs[{index}] is not an object")
            try:
                prs.append(PullRequest.model_validate({"repo": self.repo, **item, "source": "fixture"}))
            except ValidationError as exc:
                label = f"#{item['number']}" if "number" in item else f"prs[{index}]"
                raise SourceError(f"{self.path}: {label}: {_first_error(exc)}") from None
        return prs

    def newest_merged(self) -> tuple[int, datetime] | None:
        merged = [(p.merged_at, p.number) for p in self.prs if p.number is not None]
        return max(merged)[::-1] if merged else None

    def fetch(self, window: Window) -> list[PullRequest]:
        return sorted((p for p in self.prs if window.contains(p.merged_at)), key=lambda p: p.merged_at)

    def fetch_pr(self, number: int) -> PullRequest | None:
        return next((p for p in self.prs if p.number == number), None)

    def diff(self, number: int, store: Store | None = None) -> str | None:
        return None  # a fixture's PRs carry what diffs they have

    def extent(self) -> tuple[datetime | None, datetime | None]:
        return (self.window.start, self.window.end) if self.window else (None, None)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {err['msg']}{more}" if where else f"{err['msg']}{more}"
