from __future__ import annotations

import hashlib

from tests.support.apps import MakeClient
from tests.support.factories import assert_error, create_session, user

KEYS = "acme:key-a,globex:sha256:" + hashlib.sha256(b"key-b").hexdigest()
ACME = {"Authorization": "Bearer key-a"}
GLOBEX = {"Authorization": "Bearer key-b"}


class TestKeyedMode:
    async def test_missing_or_wrong_key_is_401(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys=KEYS)
        response = await client.get("/sessions")
        assert_error(response, 401, "unauthorized")
        assert response.headers["www-authenticate"] == "Bearer"
        wrong = await client.get("/sessions", headers={"Authorization": "Bearer nope"})
        assert_error(wrong, 401, "unauthorized")
        basic = await client.get("/sessions", headers={"Authorization": "Basic a2V5LWE="})
        assert_error(basic, 401, "unauthorized")
        assert_error(await client.post("/count-tokens", json={"text": "x"}), 401, "unauthorized")
        assert_error(await client.get("/models"), 401, "unauthorized")

    async def test_operations_routes_stay_open(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys=KEYS)
        for path in ("/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"):
            assert (await client.get(path)).status_code == 200, path

    async def test_plain_and_hashed_keys_both_work(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys=KEYS)
        assert (await client.get("/sessions", headers=ACME)).status_code == 200
        assert (await client.get("/sessions", headers=GLOBEX)).status_code == 200

    async def test_tenants_cannot_see_each_other(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys=KEYS)
        created = await client.post("/sessions", json={"id": "shared-name"}, headers=ACME)
        assert created.status_code == 201
        await client.post(
            "/sessions/shared-name/messages", json={"messages": [user("secret")]}, headers=ACME
        )
        for method, path in (
            ("GET", "/sessions/shared-name"),
            ("GET", "/sessions/shared-name/messages"),
            ("PATCH", "/sessions/shared-name"),
            ("DELETE", "/sessions/shared-name"),
        ):
            response = await client.request(method, path, headers=GLOBEX, json={})
            assert_error(response, 404, "session_not_found")
        appended = await client.post(
            "/sessions/shared-name/messages", json={"messages": [user("x")]}, headers=GLOBEX
        )
        assert_error(appended, 404, "session_not_found")
        assert (await client.get("/sessions", headers=GLOBEX)).json()["sessions"] == []
        # The same id is free for the other tenant, and stays separate.
        own = await client.post("/sessions", json={"id": "shared-name"}, headers=GLOBEX)
        assert own.status_code == 201 and own.json()["message_count"] == 0
        assert (await client.get("/sessions/shared-name", headers=ACME)).json()[
            "message_count"
        ] == 1


class TestOpenMode:
    async def test_everyone_is_the_default_tenant(self, make_client: MakeClient) -> None:
        client = await make_client()
        await create_session(client, id="open")
        with_key = await client.get("/sessions/open", headers={"Authorization": "Bearer any"})
        assert with_key.status_code == 200
        assert (await client.get("/sessions/open")).status_code == 200
