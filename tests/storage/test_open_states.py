"""GitHub's answer to a repository's open-PR request, kept for the prepared reports built within minutes
of it, on either store: found while recent, by repository whatever its case, per GitHub."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prdigest.storage import Store, open_states

READ = datetime(2026, 9, 14, 9, 30, tzinfo=UTC)


def test_an_answer_serves_while_it_is_recent(any_store: Store) -> None:
    open_states.keep(any_store, "https://api.github.com", "Acme/App", READ, '[{"a": 1}, []]')
    assert open_states.recent(any_store, "https://api.github.com", "acme/app", READ - timedelta(minutes=5))
    assert (
        open_states.recent(any_store, "https://api.github.com", "acme/app", READ + timedelta(seconds=1))
        is None
    )
    assert open_states.recent(any_store, "https://ghe.example/api/v3", "acme/app", READ) is None
    later = READ + timedelta(minutes=10)
    open_states.keep(any_store, "https://api.github.com", "acme/app", later, '[{"a": 2}, []]')
    assert open_states.recent(any_store, "https://api.github.com", "acme/app", later) == '[{"a": 2}, []]'
