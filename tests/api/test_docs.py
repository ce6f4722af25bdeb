"""/docs and /redoc load nothing from elsewhere, and the OpenAPI document declares the API keys
as a bearer scheme (app/api/docs.py)."""

from __future__ import annotations

import re

import httpx
import pytest

from app.core.security import OPEN_PATHS
from app.main import create_app
from tests.support.apps import MakeClient, make_settings

ASSET = re.compile(r"""(?:src|href)=["']?([^"' >]+)""")


@pytest.fixture
async def keyed(db_url: str, make_client: MakeClient) -> httpx.AsyncClient:
    """A client of a server with keys on, sending none."""
    return await make_client(create_app(make_settings(db_url, api_keys="acme:k")))


@pytest.mark.parametrize(
    ("page", "script"), [("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")]
)
async def test_the_pages_and_every_asset_they_load_come_from_this_server(
    keyed: httpx.AsyncClient, page: str, script: str
) -> None:
    response = await keyed.get(page)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "http://" not in html and "https://" not in html  # no CDN, no web fonts
    assets = ASSET.findall(html)
    assert f"/docs/assets/{script}" in assets
    for asset in assets:
        served = await keyed.get(asset)  # open, like the page: no key sent
        assert served.status_code == 200, asset
        assert len(served.content) > 1000, asset
    assert "/openapi.json" in html


async def test_the_assets_are_the_real_bundles(keyed: httpx.AsyncClient) -> None:
    swagger = await keyed.get("/docs/assets/swagger-ui-bundle.js")
    assert "SwaggerUIBundle" in swagger.text[:2000]
    assert swagger.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert (
        (await keyed.get("/docs/assets/swagger-ui.css"))
        .headers["content-type"]
        .startswith("text/css")
    )
    assert (await keyed.get("/docs/assets/nothing.js")).status_code == 404
    escaped = await keyed.get("/docs/assets/..%2F__init__.py")  # nothing outside the folder
    assert escaped.status_code == 404


async def test_openapi_declares_the_bearer_scheme_on_every_keyed_route(
    keyed: httpx.AsyncClient,
) -> None:
    schema = (await keyed.get("/openapi.json")).json()
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key of FOLDWISE_API_KEYS (no key needed in open mode).",
    }
    secured = {
        (path, method): operation.get("security")
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }
    assert secured[("/sessions", "post")] == [{"bearer": []}]
    assert secured[("/sessions/{session_id}/context", "get")] == [{"bearer": []}]
    for (path, _method), security in secured.items():
        assert (security is None) is (path in OPEN_PATHS), path
    assert (await keyed.get("/openapi.json")).json() == schema  # built once, unchanged


async def test_in_open_mode_the_key_is_optional(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert "bearer" in schema["components"]["securitySchemes"]
    assert schema["paths"]["/sessions"]["post"]["security"] == [{"bearer": []}, {}]
