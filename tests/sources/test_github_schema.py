"""Every GraphQL query prdigest sends is valid against GitHub's public schema and within its node limit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import graphql
import pytest
from fakes.github_api import SCHEMA_PATH

from prdigest.sources.github import queries as github_queries
from prdigest.sources.github import source as github
from prdigest.sources.github.queries import BLOBS_PER_REQUEST

GITHUB_SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "github" / "schema.graphql"
NODE_LIMIT = 500_000  # GitHub's limit on the nodes one request may ask for
PAGE_LIMIT = 100  # GitHub's limit on first/last

# Each query with the variables it is sent with at its largest.
QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    "list": (github.LIST_QUERY, {}),
    "batch": (github.BATCH_QUERY, {"ids": ["id"] * github.BATCH_SIZE}),
    "one": (github.PR_QUERY, {}),
    # Threads carry a nested list: the largest follow-up.
    "follow-up": (github.follow_up_query(["reviewThreads"] * github.FOLLOW_UPS_PER_REQUEST), {}),
    "follow-up with texts": (
        github.follow_up_query(["reviewThreads"] * github.FOLLOW_UPS_PER_REQUEST, BLOBS_PER_REQUEST),
        {},
    ),
    "texts": (github.follow_up_query([], BLOBS_PER_REQUEST), {}),
    "open": (github_queries.OPEN_QUERY, {}),
    "owner": (github_queries.OWNER_REPOS_QUERY, {}),
}


@pytest.fixture(scope="module")
def schema() -> graphql.GraphQLSchema:
    if not GITHUB_SCHEMA.exists():
        pytest.skip(f"GitHub's schema is not at {GITHUB_SCHEMA}")
    # GitHub's published SDL fails graphql-core's own checks (duplicate fields): build it unchecked.
    return graphql.build_schema(GITHUB_SCHEMA.read_text(), assume_valid=True, assume_valid_sdl=True)


@pytest.mark.parametrize("name", QUERIES)
def test_query_is_valid_against_githubs_schema(schema: graphql.GraphQLSchema, name: str) -> None:
    query, _ = QUERIES[name]
    assert graphql.validate(schema, graphql.parse(query)) == []


def test_every_follow_up_list_is_valid(schema: graphql.GraphQLSchema) -> None:
    for connection in github.CONNECTIONS:
        assert graphql.validate(schema, graphql.parse(github.follow_up_query([connection]))) == [], connection


def test_a_misspelt_field_would_be_caught(schema: graphql.GraphQLSchema) -> None:
    errors = graphql.validate(schema, graphql.parse(github.PR_QUERY.replace("isResolved", "resolved")))
    assert errors and "resolved" in errors[0].message


@pytest.mark.parametrize("name", [name for name in QUERIES if name != "texts"])  # texts: no connection
def test_query_stays_within_githubs_node_limit(name: str) -> None:
    nodes = sum(parents * size for parents, size in connections(*QUERIES[name]))
    assert 0 < nodes <= NODE_LIMIT
    if name == "batch":
        assert nodes < 50_000  # 50 PRs with all their first pages: a twentieth of the limit


def test_what_is_open_costs_four_points_of_githubs_hourly_five_thousand() -> None:
    """GitHub's estimate of a query's cost: one request per page of each list, the sum over 100. The open
    PRs (1), per PR its reviews, "ready" events, review requests and files (100 each), the head's checks
    (1): 402 requests, 4 points, whatever the page sizes; 12,300 nodes of the 500,000 allowed."""
    found = connections(*QUERIES["open"])
    assert round(sum(parents for parents, _ in found) / 100) == 4
    assert sum(parents * size for parents, size in found) == 12_300


def connections(query: str, variables: dict[str, Any]) -> list[tuple[int, int]]:
    """Each list the query asks for: (how many parents ask it, its page size)."""
    document = graphql.parse(query)
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, graphql.FragmentDefinitionNode)
    }
    (operation,) = [d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode)]
    return list(walk(operation.selection_set, 1, fragments, variables))


def walk(
    selections: graphql.SelectionSetNode | None,
    parents: int,
    fragments: dict[str, graphql.FragmentDefinitionNode],
    variables: dict[str, Any],
) -> Iterator[tuple[int, int]]:
    """GitHub's rule: each connection asks for first/last nodes per parent node."""
    for selection in selections.selections if selections else ():
        if isinstance(selection, graphql.FragmentSpreadNode):
            yield from walk(fragments[selection.name.value].selection_set, parents, fragments, variables)
        elif isinstance(selection, graphql.InlineFragmentNode):
            yield from walk(selection.selection_set, parents, fragments, variables)
        elif isinstance(selection, graphql.FieldNode):
            args = {
                a.name.value: graphql.value_from_ast_untyped(a.value, variables)
                for a in selection.arguments or ()
            }
            size = args.get("first", args.get("last"))
            if size is None and isinstance(args.get("ids"), list):
                size = len(args["ids"])  # nodes(ids:) returns one node per id
            if size is not None:
                assert size <= PAGE_LIMIT, f"{selection.name.value} asks for {size} nodes"
                yield parents, size
            yield from walk(selection.selection_set, parents * (size or 1), fragments, variables)


def test_the_fakes_schema_is_a_subset_of_githubs(schema: graphql.GraphQLSchema) -> None:
    """The fake answers only what GitHub could: same types, fields, arguments and values."""
    fake = graphql.build_schema(SCHEMA_PATH.read_text())
    for name, fake_type in fake.type_map.items():
        if name.startswith("__") or name in graphql.specified_scalar_types:
            continue
        real = schema.type_map.get(name)
        assert real is not None and type(real) is type(fake_type), name
        if isinstance(fake_type, graphql.GraphQLObjectType | graphql.GraphQLInterfaceType):
            assert {i.name for i in fake_type.interfaces} <= {i.name for i in real.interfaces}, name
            for field_name, field in fake_type.fields.items():
                real_field = real.fields.get(field_name)
                assert real_field is not None, f"{name}.{field_name}"
                assert str(field.type) == str(real_field.type), f"{name}.{field_name}"
                for arg_name, arg in field.args.items():
                    assert str(arg.type) == str(real_field.args[arg_name].type), (
                        f"{name}.{field_name}({arg_name})"
                    )
        elif isinstance(fake_type, graphql.GraphQLEnumType):
            assert set(fake_type.values) <= set(real.values), name
        elif isinstance(fake_type, graphql.GraphQLUnionType):
            assert {t.name for t in fake_type.types} <= {t.name for t in real.types}, name
