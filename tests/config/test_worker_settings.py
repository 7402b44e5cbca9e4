"""[workers]: the ticks' cron line, and a tick that does not divide a minute refused with its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.config import load_settings
from prdigest.errors import ConfigError


def test_the_ticks_are_a_cron_line_and_the_lease_a_duration(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text("[workers]\ntick_seconds = 15\nlease_seconds = 90\n", encoding="utf-8")
    workers = load_settings(path, env={}, cwd=tmp_path).workers
    assert workers.cron == "* * * * * */15" and workers.lease.total_seconds() == 90
    (tmp_path / "empty").mkdir()
    assert load_settings(None, env={}, cwd=tmp_path / "empty").workers.cron == "* * * * *"  # each minute


def test_a_tick_that_does_not_divide_a_minute_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text("[workers]\ntick_seconds = 7\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"prdigest\.toml:2: workers\.tick_seconds: .*7 does not divide a minute"
    ):
        load_settings(path, env={}, cwd=tmp_path)
