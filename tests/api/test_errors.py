from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.engine.validate import ContextInvariantError
from app.services import context as context_service
from tests.support.apps import MakeClient
from tests.support.factories import assert_error, create_session

SMALL_LIMIT = 2048


class TestErrorEnvelopes:
    async def test_context_invariant_error_is_a_logged_500_envelope(
        self,
        client: httpx.AsyncClient,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        # The engine's last check failing (a bug, never the client's fault) reaches the route.
        def broken(*_args: object) -> None:
            raise ContextInvariantError(["total 2 over budget 1"])

        monkeypatch.setattr(context_service, "assemble", broken)
        await create_session(client, id="s")
        with caplog.at_level(logging.ERROR, logger="foldwise"):
            response = await client.get("/sessions/s/context")
        assert response.headers["content-type"] == "application/json"
        error = assert_error(response, 500, "internal_error")
        assert "over budget" not in error["message"]  # internals are logged, not served
        logged = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
        assert logged and "/sessions/s/context" in logged[0].getMessage()
        assert isinstance(logged[0].exc_info[1], ContextInvariantError)  # type: ignore[index]

    async def test_unknown_route_is_404_not_found(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.get("/nowhere"), 404, "not_found")

    async def test_wrong_method_is_405(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.put("/sessions"), 405, "method_not_allowed")

    @pytest.mark.parametrize(
        ("path", "allowed"),
        [
            ("/sessions", "GET, POST, DELETE"),
            ("/sessions/s", "GET, PATCH, DELETE"),
            ("/sessions/s/messages", "GET, POST"),
            ("/healthz", "GET"),
        ],
    )
    async def test_a_405_lists_every_method_of_the_path(
        self, client: httpx.AsyncClient, path: str, allowed: str
    ) -> None:
        response = await client.request("TRACE", path)
        assert_error(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allowed


class TestDocumentedStatuses:
    """Every status a route can answer is in its OpenAPI responses (schemathesis checks the
    answers of a real server: tests/hostile/test_schemathesis.py)."""

    async def test_a_body_that_is_not_utf8_is_a_documented_400(
        self, app: FastAPI, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        with_body = [
            (method, path)
            for path, item in app.openapi()["paths"].items()
            for method, operation in item.items()
            if "requestBody" in operation
        ]
        assert len(with_body) == 10
        for method, path in with_body:
            operation = app.openapi()["paths"][path][method]
            assert "400" in operation["responses"], (method, path)
            response = await client.request(
                method.upper(),
                path.replace("{session_id}", "s"),
                content=b"\xff",
                headers={"content-type": "application/json"},
            )
            assert_error(response, 400, "bad_request")

    def test_every_operation_documents_422_500_503(self, app: FastAPI) -> None:
        for path, item in app.openapi()["paths"].items():
            for method, operation in item.items():
                assert {"422", "500", "503"} <= set(operation["responses"]), (method, path)

    async def test_malformed_json_is_422(self, client: httpx.AsyncClient) -> None:
        response = await client.post(
            "/sessions", content=b"{not json", headers={"content-type": "application/json"}
        )
        error = assert_error(response, 422, "validation_error")
        assert error["details"][0]["type"] == "json_invalid"

    async def test_wrong_body_type_is_422(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.post("/sessions", json=[1, 2]), 422, "validation_error")
        assert_error(
            await client.post("/sessions/x/messages", json={"messages": "hi"}),
            422,
            "validation_error",
        )

    async def test_non_finite_numbers_are_reported_not_crashed_on(
        self, client: httpx.AsyncClient
    ) -> None:
        response = await client.post(
            "/sessions",
            content=b'{"settings": {"threshold": NaN}}',
            headers={"content-type": "application/json"},
        )
        assert_error(response, 422, "validation_error")


class TestBodyLimit:
    async def test_declared_length_over_limit_is_413(self, make_client: MakeClient) -> None:
        client = await make_client(max_body_bytes=SMALL_LIMIT)
        response = await client.post("/sessions", json={"metadata": {"blob": "x" * 5000}})
        error = assert_error(response, 413, "payload_too_large")
        assert error["details"] == {"max_bytes": SMALL_LIMIT}

    async def test_streamed_body_without_length_is_413(self, make_client: MakeClient) -> None:
        client = await make_client(max_body_bytes=SMALL_LIMIT)

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"metadata": {"blob": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}}'

        response = await client.post(
            "/sessions", content=chunks(), headers={"content-type": "application/json"}
        )
        assert "content-length" not in response.request.headers
        assert_error(response, 413, "payload_too_large")
        assert (await client.get("/sessions")).json()["sessions"] == []

    async def test_body_under_limit_passes(self, make_client: MakeClient) -> None:
        client = await make_client(max_body_bytes=SMALL_LIMIT)
        await create_session(client, metadata={"blob": "x" * 100})


class TestCors:
    async def test_configured_origin_is_allowed(self, make_client: MakeClient) -> None:
        client = await make_client(cors_origins=["https://app.example"])
        response = await client.options(
            "/sessions",
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "https://app.example"

    async def test_no_origin_allowed_by_default(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in response.headers


class TestDatabaseUnavailable:
    async def test_unreachable_database_is_503_with_retry_after(
        self, make_client: MakeClient, tmp_path: Path
    ) -> None:
        missing = tmp_path / "no-such-dir" / "foldwise.db"
        client = await make_client(database_url=f"sqlite:///{missing}")
        response = await client.get("/sessions/any")
        assert_error(response, 503, "database_unavailable")
        assert response.headers["retry-after"] == "1"

    async def test_a_connection_the_server_dropped_is_503_then_recovers(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        if not db_url.startswith("postgresql"):
            pytest.skip("PostgreSQL: terminating a server backend")
        client = await make_client()
        await create_session(client, id="s")
        assert (await client.get("/sessions/s")).status_code == 200  # a pooled connection
        admin = await asyncpg.connect(db_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        finally:
            await admin.close()
        response = await client.get("/sessions/s")
        assert_error(response, 503, "database_unavailable")
        assert (await client.get("/sessions/s")).status_code == 200


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/sessions", {"id": "t", "settings": {"cache_breakpoints": 0}}),
        ("/sessions", {"id": "t", "settings": {"prune_at_least": False}}),
        ("/assemble-context", {"messages": [], "explain": 0}),
        ("/assemble-context", {"messages": [], "keep_recent": "2"}),
        ("/summarize-context", {"messages": [], "max_summary_tokens": 100.0}),
    ],
)
async def test_body_types_are_json_types_as_documented(
    client: httpx.AsyncClient, path: str, body: dict[str, object]
) -> None:
    # A number is not a boolean nor a boolean a number, in a body (a query string is text).
    assert_error(await client.post(path, json=body), 422, "validation_error")
