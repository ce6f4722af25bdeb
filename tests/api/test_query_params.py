"""Unknown query parameters are 422 `unknown_query_parameter` on every route, on SQLite and
PostgreSQL; declared ones keep working (app/api/strict_query.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from app.api.routes import context as context_route
from app.api.strict_query import declared_query_keys
from app.core.context_settings import SETTINGS_KEYS
from tests.support.factories import append, assert_error, create_session, user

SESSION = "s"


def _operations(app: FastAPI) -> list[tuple[str, str]]:
    """(method, concrete path) of every operation in the OpenAPI schema."""
    found = []
    for path, item in app.openapi()["paths"].items():
        for method in item:
            found.append((method.upper(), path.replace("{session_id}", SESSION)))
    return found


async def test_every_operation_refuses_an_unknown_key(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await create_session(client, id=SESSION)
    await append(client, SESSION, user("hello"))
    operations = _operations(app)
    assert len(operations) >= 18
    for method, path in operations:
        response = await client.request(method, path, params={"not_a_parameter": "1"})
        error = assert_error(response, 422, "unknown_query_parameter")
        assert error["details"]["unknown"] == ["not_a_parameter"], (method, path)
    # Nothing was deleted or changed on the way.
    assert (await client.get(f"/sessions/{SESSION}")).json()["message_count"] == 1


@pytest.mark.parametrize(
    "query",
    ["max_token=2000", "x=1", "max_tokens=2000&x=1", "format=raw&Format=raw", "x=1&x=2"],
)
async def test_context_typos_are_named(client: httpx.AsyncClient, query: str) -> None:
    await create_session(client, id=SESSION)
    await append(client, SESSION, user("hello"))
    response = await client.get(f"/sessions/{SESSION}/context?{query}")
    error = assert_error(response, 422, "unknown_query_parameter")
    unknown = sorted({part.split("=")[0] for part in query.split("&")} - _context_keys())
    assert error["details"]["unknown"] == unknown
    assert ", ".join(unknown) in error["message"]
    assert "max_tokens" in error["details"]["allowed"]


def _context_keys() -> set[str]:
    return {
        "model",
        "max_tokens",
        "format",
        "summarize",
        "explain",
        "preview",
        "dry_run",
        *SETTINGS_KEYS,
    }


async def test_unknown_keys_make_no_served_context_entry(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    await create_session(client, id=SESSION)
    await append(client, SESSION, user("hello"))
    assert (await client.get(f"/sessions/{SESSION}/context")).status_code == 200
    cache = app.state.read_path.responses
    entries = len(cache)
    for n in range(5):
        response = await client.get(f"/sessions/{SESSION}/context?x={n}")
        assert_error(response, 422, "unknown_query_parameter")
    assert len(cache) == entries


async def test_dependency_overrides_path_refuses_them_too(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    # Any override sends the context route down FastAPI's own resolution.
    def unused() -> None:
        """Never called."""

    await create_session(client, id=SESSION)
    app.dependency_overrides[unused] = unused
    try:
        response = await client.get(f"/sessions/{SESSION}/context?max_token=10")
        assert_error(response, 422, "unknown_query_parameter")
        assert (await client.get(f"/sessions/{SESSION}/context?max_tokens=900")).status_code == 200
    finally:
        app.dependency_overrides.clear()


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/sessions", {"limit": 1, "order": "desc", "sort": "id", "id_prefix": "s"}),
        (f"/sessions/{SESSION}/messages", {"after_seq": 0, "limit": 5}),
        (f"/sessions/{SESSION}/summaries", {"limit": 5}),
        (f"/sessions/{SESSION}/context", {"max_tokens": 900, "keep_recent": 2, "explain": 1}),
        ("/inspect", {"page_size": 1}),  # read by the page's script
    ],
)
async def test_declared_keys_still_work(
    client: httpx.AsyncClient, path: str, params: dict[str, Any]
) -> None:
    await create_session(client, id=SESSION)
    assert (await client.get(path, params=params)).status_code == 200


def test_a_query_model_stands_for_its_fields() -> None:
    (route,) = context_route.router.routes
    assert isinstance(route, APIRoute)
    assert declared_query_keys(route.dependant) == frozenset(_context_keys())
