"""A cache hit answered before routing (app/api/context_cache.py) keeps what the route
guarantees: authentication first, one tenant's body never served to another, the metrics
label of the route, a different query never served another query's body, and the same
answer as the raw-driver read's SQLAlchemy twin (app/repositories/context_version.py)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from app.api.context_cache import session_of
from app.main import create_app
from app.repositories.context import context_version
from app.repositories.context_version import (
    EngineContextVersionReader,
    PostgresContextVersionReader,
    SqliteContextVersionReader,
    open_context_version_reader,
)
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import append, create_session, turns

KEYS = "red:key-red,blue:key-blue"


async def _client(make_client: MakeClient, app: FastAPI, key: str | None) -> httpx.AsyncClient:
    client = await make_client(app)
    if key:
        client.headers["Authorization"] = f"Bearer {key}"
    return client


@pytest.fixture
async def app(db_url: str) -> FastAPI:
    return create_app(make_settings(db_url, api_keys=KEYS))


async def _warm(client: httpx.AsyncClient, app: FastAPI, path: str) -> bytes:
    """Fill the cache with `path` and check the next request is a hit; its body."""
    assert (await client.get(path)).status_code == 200
    hits = app.state.read_path.responses.hits
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert app.state.read_path.responses.hits == hits + 1
    return response.content


async def test_a_cached_context_still_needs_a_valid_key(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    await _warm(red, app, "/sessions/s/context")
    hits = app.state.read_path.responses.hits
    for key in (None, "wrong-key"):
        anonymous = await _client(make_client, app, key)
        response = await anonymous.get("/sessions/s/context")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
    assert app.state.read_path.responses.hits == hits


async def test_another_tenant_never_gets_the_cached_body(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    blue = await _client(make_client, app, "key-blue")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    await _warm(red, app, "/sessions/s/context")
    response = await blue.get("/sessions/s/context")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "session_not_found"
    await create_session(blue, id="s")
    await append(blue, "s", {"role": "user", "content": "Blue's own question"})
    blue_body = await _warm(blue, app, "/sessions/s/context")
    assert b"Blue's own question" in blue_body
    assert b"Blue's own question" not in (await red.get("/sessions/s/context")).content


async def test_each_query_string_has_its_own_body(make_client: MakeClient, app: FastAPI) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    plain = await _warm(red, app, "/sessions/s/context?format=anthropic")
    hits = app.state.read_path.responses.hits
    explained = await red.get("/sessions/s/context?format=anthropic&explain=true")
    assert app.state.read_path.responses.hits == hits
    assert b'"explain"' in explained.content and b'"explain"' not in plain
    openai = await red.get("/sessions/s/context?format=openai")
    assert app.state.read_path.responses.hits == hits
    assert openai.json()["format"] == "openai"


async def test_an_invalid_query_is_rejected_even_next_to_a_cached_one(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    await _warm(red, app, "/sessions/s/context?max_tokens=5000")
    response = await red.get("/sessions/s/context?max_tokens=-1")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


async def test_a_hit_is_counted_under_the_route_template(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(1))
    metric = (
        'foldwise_requests_total{method="GET",route="/sessions/{session_id}/context",status="200"} '
    )

    async def served() -> float:
        for line in (await red.get("/metrics")).text.splitlines():
            if line.startswith(metric):
                return float(line.split()[-1])
        return 0.0

    before = await served()
    await _warm(red, app, "/sessions/s/context")
    assert await served() == before + 2


def test_only_a_context_path_names_a_session() -> None:
    assert session_of("/sessions/abc/context") == "abc"
    for path in ("/sessions//context", "/sessions/a/b/context", "/sessions/abc", "/healthz"):
        assert session_of(path) is None


async def test_the_driver_read_equals_the_sqlalchemy_read(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    await red.get("/sessions/s/context")  # a served record in last_context
    assert (await red.post("/sessions/s/usage", json={"input_tokens": 500})).status_code == 200
    engine = app.state.engine
    fast = open_context_version_reader(engine)
    # A file or a server: the driver's reader.
    assert not isinstance(fast, EngineContextVersionReader)
    try:
        calibrated = await fast.read("red", "s", "anthropic")
        assert calibrated is not None and calibrated.calibration is not None
        assert calibrated.last_context  # the record of the context served
        for family in ("anthropic", "openai", "none-such"):
            expected = await EngineContextVersionReader(engine).read("red", "s", family)
            assert expected is not None
            assert await fast.read("red", "s", family) == expected
        assert await fast.read("blue", "s", "anthropic") is None
        async with engine.connect() as connection:
            assert await context_version(connection, "red", "missing", "anthropic") is None
        assert await fast.read("red", "missing", "anthropic") is None
    finally:
        await fast.close()


async def test_a_broken_reader_connection_falls_back_and_recovers(
    make_client: MakeClient, app: FastAPI
) -> None:
    red = await _client(make_client, app, "key-red")
    await create_session(red, id="s")
    await append(red, "s", *turns(2))
    body = await _warm(red, app, "/sessions/s/context")
    reader = app.state.read_path.versions
    if isinstance(reader, PostgresContextVersionReader):
        assert not reader._idle.empty()
        reader._idle._queue[-1].terminate()  # type: ignore[attr-defined]
    else:
        assert isinstance(reader, SqliteContextVersionReader) and reader._connection is not None
        reader._connection.close()
    hits = app.state.read_path.responses.hits
    fallback = await red.get("/sessions/s/context")  # the full path answers
    assert fallback.status_code == 200 and fallback.content == body
    assert app.state.read_path.responses.hits == hits
    assert await _warm(red, app, "/sessions/s/context") == body  # hits again
