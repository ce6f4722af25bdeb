"""The Python client's types are the server's wire models, checked against its OpenAPI
document the way the TypeScript client's are generated from it: a field added, renamed or
dropped on either side fails here, as does a literal that gained or lost a value."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, get_args, is_typeddict

import pytest
from foldwise_client import types
from foldwise_client.context import Context, Turn

from app.main import create_app
from tests.support.apps import make_settings

# Client TypedDict → the server's component schema (names differ where the client's reads
# better: a `Session`, not a `SessionRead`).
SCHEMAS = {
    "AppendResult": "AppendResult",
    "AppendedMessage": "AppendedMessage",
    "CacheUsage": "CacheUsage",
    "Calibration": "CalibrationRead",
    "SessionSettings": "SessionSettings",
    "ContextUsage": "ContextUsage",
    "DryRun": "DryRunRead",
    "ExplainItem": "ExplainItem",
    "MessagePage": "MessagePage",
    "ModelInfo": "ModelRead",
    "PoppedMessage": "RemovedMessage",
    "Session": "SessionRead",
    "SessionPage": "SessionPage",
    "SessionImport": "SessionImport",
    "SessionsDeleted": "SessionsDeleted",
    "StoredMessage": "MessageRead",
    "SummarizeContextResult": "SummarizeResponse",
    "SummarizeResult": "SessionSummarizeResponse",
    "SummaryHistoryItem": "SummaryHistoryItem",
    "SummaryUsage": "SummaryUsage",
    "SummaryHistoryPage": "SummaryHistoryPage",
    "SummaryState": "SummaryState",
    "TokenCount": "CountTokensResponse",
    "MediaCount": "MediaRead",
    "UsageReportResult": "UsageReportResponse",
}
# Responses the client reads as something else than a TypedDict: errors become exceptions,
# a model list a list, contexts the `Context` class and a turn the `Turn` class (checked below).
NOT_TYPED_DICTS = {
    "ErrorResponse",
    "ErrorBody",
    "ModelList",
    "ContextResponse",
    "AssembleResponse",
    "TurnResponse",
}


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    database = Path(tmp_path_factory.mktemp("openapi")) / "foldwise.db"
    document: dict[str, Any] = create_app(make_settings(f"sqlite:///{database}")).openapi()
    return document


def _schemas(openapi: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = openapi["components"]["schemas"]
    return found


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        own = {ref.rsplit("/", 1)[-1]} if isinstance(ref, str) else set()
        return own.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(value) for value in node))
    return set()


def _response_schemas(openapi: dict[str, Any]) -> set[str]:
    """Every component a 2xx response holds, nested ones included."""
    schemas = _schemas(openapi)
    pending = {
        name
        for operations in openapi["paths"].values()
        for operation in operations.values()
        for status, response in operation.get("responses", {}).items()
        if status.startswith("2")
        for name in _refs(response)
    }
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        seen.add(name)
        pending |= _refs(schemas[name]) - seen
    return seen


def test_every_response_schema_has_its_client_type(openapi: dict[str, Any]) -> None:
    enums = {name for name, schema in _schemas(openapi).items() if "enum" in schema}
    missing = _response_schemas(openapi) - set(SCHEMAS.values()) - NOT_TYPED_DICTS - enums
    assert not missing, f"responses without a type in foldwise_client.types: {sorted(missing)}"


@pytest.mark.parametrize(("client_name", "schema_name"), sorted(SCHEMAS.items()))
def test_client_types_have_the_servers_fields(
    openapi: dict[str, Any], client_name: str, schema_name: str
) -> None:
    typed = getattr(types, client_name)
    assert is_typeddict(typed)
    fields = set(typed.__required_keys__ | typed.__optional_keys__)
    assert fields == set(_schemas(openapi)[schema_name]["properties"])


def test_context_settings_are_the_context_routes_setting_keys(openapi: dict[str, Any]) -> None:
    """`ContextSettings` (keyword arguments of `context()`) are the query keys of GET …/context
    besides its own options, and a session's settings but `retention_days`."""
    operation = openapi["paths"]["/sessions/{session_id}/context"]["get"]
    query = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
    own = {"model", "max_tokens", "format", "summarize", "explain", "preview", "dry_run"}
    keys = set(types.ContextSettings.__required_keys__ | types.ContextSettings.__optional_keys__)
    assert keys == query - own
    assert keys == set(_schemas(openapi)["SessionSettings"]["properties"]) - {"retention_days"}


def test_the_context_class_reads_every_context_field(openapi: dict[str, Any]) -> None:
    schemas = _schemas(openapi)
    served = set(schemas["ContextResponse"]["properties"])
    served |= set(schemas["AssembleResponse"]["properties"])
    assert {f.name for f in dataclasses.fields(Context)} - {"raw"} == served


def test_the_turn_class_and_query_are_the_turn_routes(openapi: dict[str, Any]) -> None:
    schemas = _schemas(openapi)
    assert {f.name for f in dataclasses.fields(Turn)} == set(schemas["TurnResponse"]["properties"])
    keys = set(types.ContextQuery.__required_keys__ | types.ContextQuery.__optional_keys__)
    assert keys == set(schemas["TurnContext"]["properties"])


def _enum(openapi: dict[str, Any], schema: str, field: str | None = None) -> set[str]:
    node = _schemas(openapi)[schema]
    if field is not None:
        node = node["properties"][field]
        options = node.get("anyOf", [node])
        node = next(o for o in options if "enum" in o or "$ref" in o)
        if "$ref" in node:
            node = _schemas(openapi)[node["$ref"].rsplit("/", 1)[-1]]
    return set(node["enum"])


def _query_enum(openapi: dict[str, Any], name: str) -> set[str]:
    operation = openapi["paths"]["/sessions/{session_id}/context"]["get"]
    (parameter,) = [p for p in operation["parameters"] if p["name"] == name]
    return set(parameter["schema"]["enum"])


def test_client_literals_are_the_servers(openapi: dict[str, Any]) -> None:
    def values(alias: Any) -> set[str]:
        return set(get_args(alias))

    assert values(types.Format) == _enum(openapi, "ContextResponse", "format")
    assert values(types.SummarizeMode) == _query_enum(openapi, "summarize")
    assert values(types.Strategy) == _enum(openapi, "SessionSettings", "strategy")
    assert values(types.SummaryPlacement) == _enum(openapi, "SessionSettings", "summary_placement")
    assert values(types.SessionSort) == _enum(openapi, "SessionSort")
    assert values(types.SortOrder) == _enum(openapi, "SortOrder")
