"""What keeps the models made by the ten thousand small (models.py): a large window's PRs, their analyses,
the report's rows."""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel


def share_every_field(model: BaseModel) -> None:
    """Give the instance the set of "the fields given" its class's instances share, holding every field.

    pydantic keeps one such set per instance (0.7-2 KB; ~80 MB for a 20,000-PR report). prdigest never
    asks which fields were given (no ``exclude_unset``), and adding a field to a set that holds them all
    changes nothing."""
    object.__setattr__(model, "__pydantic_fields_set__", _every_field(type(model)))


@cache
def _every_field(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)
