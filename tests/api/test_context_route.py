"""The context route's own handler (app/api/routes/context.py, `ContextRoute`) answers what
FastAPI's parameter and dependency resolution would: same status, same bytes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.api.routes import context as context_route
from app.main import create_app
from tests.api.test_context import turns
from tests.conftest import MakeClient, make_settings
from tests.factories import append, create_session, tool_result, tool_use, user

QUERIES: list[dict[str, Any] | str] = [
    {},
    {"format": "openai", "max_tokens": 900},
    {"format": "raw", "explain": "true", "keep_recent": 2},
    {"summarize": "never", "max_tokens": 700, "pin_first_message": "false"},
    {"preview": "1", "model": "gpt-4o"},
    {"format": "bogus"},
    {"max_tokens": 0},
    {"threshold": "high"},
    "format=raw&format=openai",
    "unknown=1&max_tokens=1000",
    "model=",
]


def _unused() -> None:
    """Any dependency override sends a request down FastAPI's own path."""


@pytest.fixture
def app(db_url: str) -> FastAPI:
    return create_app(make_settings(db_url, context_cache_bytes=0))


async def test_the_route_answers_as_fastapis_resolution_would(
    make_client: MakeClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    client: httpx.AsyncClient = await make_client(app)
    await create_session(client, id="s", system_prompt="Be brief.")
    await append(client, "s", tool_use("t1", path="a.py"), tool_result("t1", "ok" * 900))
    await append(client, "s", user("the task"), *turns(10))
    own: list[bool] = []
    plain_query = context_route._plain_query

    def recorded(request: Any) -> Any:
        query = plain_query(request)
        own.append(query is not None)
        return query

    monkeypatch.setattr(context_route, "_plain_query", recorded)

    async def get(path: str, query: dict[str, Any] | str) -> httpx.Response:
        if isinstance(query, str):
            return await client.get(f"{path}?{query}")
        return await client.get(path, params=query)

    for path in ("/sessions/s/context", "/sessions/missing/context", "/sessions/a%20b/context"):
        for query in QUERIES:
            await get(path, query)  # the first one may record the served context
            ours = await get(path, query)
            app.dependency_overrides[_unused] = _unused
            fastapis = await get(path, query)
            app.dependency_overrides.clear()
            assert (ours.status_code, ours.content) == (fastapis.status_code, fastapis.content)
    assert own.count(True) == 2 * 3 * 6  # twice: the five plain queries and model=, each path
