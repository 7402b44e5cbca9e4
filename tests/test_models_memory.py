"""The models a large window holds by the ten thousand stay small, and behave as models do."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from prdigest.models import FileChange, PRAnalysis, PullRequest, ReportPR

MERGED = datetime(2026, 9, 7, 10, tzinfo=UTC)


def _pr(number: int, **fields: object) -> PullRequest:
    return PullRequest(
        repo="o/r", number=number, title=f"PR {number}", author="a", merged_at=MERGED, **fields
    )


def test_prs_analyses_and_report_rows_share_one_set_of_fields_given() -> None:
    a, b = _pr(1), PullRequest.model_validate_json(_pr(2, body="text").model_dump_json())
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert a.model_fields_set == set(PullRequest.model_fields)
    one = PRAnalysis(repo="o/r", number=1, summary="s", importance=5, insight=2)
    other = PRAnalysis.model_validate_json(one.model_copy(update={"number": 2}).model_dump_json())
    assert one.__pydantic_fields_set__ is other.__pydantic_fields_set__
    row1 = ReportPR(number=1, title="t", author="a", merged_at=MERGED, additions=1, deletions=0)
    row2 = ReportPR(number=2, title="u", author="b", merged_at=MERGED, additions=0, deletions=2, key=True)
    assert row1.__pydantic_fields_set__ is row2.__pydantic_fields_set__


def test_a_shared_set_of_fields_changes_nothing_a_model_does() -> None:
    a, b = _pr(1), _pr(2)
    a.title = "changed"  # pydantic adds the name to the set: one that holds every field already
    assert b.title == "PR 2"
    assert a.model_fields_set == set(PullRequest.model_fields)
    copy = a.model_copy(update={"body": "new"})
    assert (copy.title, copy.body, a.body) == ("changed", "new", "")
    assert copy.__pydantic_fields_set__ is not a.__pydantic_fields_set__  # a copy gets its own
    assert PullRequest.model_validate_json(a.model_dump_json()) == a
    assert a != b


def test_file_changes_are_slotted_and_validated() -> None:
    f = FileChange(path="src/a.py", additions=3, deletions=1)
    assert not hasattr(f, "__dict__")
    assert FileChange(path="blob.bin", additions=None).binary
    with pytest.raises(ValidationError):
        FileChange(path="a", additions=-1)
    with pytest.raises(ValidationError):
        FileChange(path="a", lines=3)  # type: ignore[call-arg]
    pr = _pr(1, files=[f, {"path": "b.py", "status": "added"}])
    back = PullRequest.model_validate_json(pr.model_dump_json())
    assert back.files == [f, FileChange(path="b.py", status="added")]
    assert json.loads(pr.model_dump_json())["files"][0] == {
        "path": "src/a.py", "additions": 3, "deletions": 1, "status": "modified", "previous_path": None
    }  # fmt: skip
    with pytest.raises(ValidationError):
        _pr(1, files=[{"path": "c.py", "status": "gone"}])
