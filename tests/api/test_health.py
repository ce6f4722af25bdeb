from __future__ import annotations

import httpx

from tests.support.apps import MakeClient
from tests.support.factories import create_session


class TestOperations:
    async def test_healthz(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/healthz")
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}

    async def test_readyz_when_database_answers(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/readyz")
        assert response.status_code == 200
        assert response.json() == {"status": "ready"}

    async def test_metrics_count_requests_by_route_template(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="metrics-probe")
        await client.get("/sessions/metrics-probe")
        response = await client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        text = response.text
        assert 'route="/sessions/{session_id}"' in text
        assert "metrics-probe" not in text
        assert "# TYPE foldwise_folds_total counter" in text

    async def test_openapi_lists_the_routes(self, client: httpx.AsyncClient) -> None:
        paths = (await client.get("/openapi.json")).json()["paths"]
        for path in ("/sessions", "/sessions/{session_id}/messages", "/count-tokens", "/models"):
            assert path in paths


class TestReadinessWhenDatabaseIsDown:
    async def test_readyz_is_503_with_envelope(self, make_client: MakeClient) -> None:
        broken = await make_client(database_url="postgresql://nobody@127.0.0.1:1/none")
        response = await broken.get("/readyz")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "service_unavailable"
