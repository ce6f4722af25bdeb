"""/docs (Swagger UI) and /redoc, working offline, and the bearer scheme in the OpenAPI document.

FastAPI's own pages load their JavaScript and CSS from a CDN, so without internet /docs is
blank. Here the pages load the assets the `fastapi-offline` package ships (Swagger UI 5 and
ReDoc 2, refreshed with its releases), served from /docs/assets. The OpenAPI document declares
the API keys as an HTTP bearer scheme, required by every route outside `OPEN_PATHS` when keys
are configured (optional in open mode), so Swagger UI shows an Authorize button and sends the
key it is given.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from app.core.security import DOCS_ASSETS, OPEN_PATHS

ASSETS_DIR = Path(str(resources.files("fastapi_offline") / "static"))
BEARER = "bearer"


def mount_docs(app: FastAPI, *, keys_required: bool) -> None:
    """Serve /docs, /redoc and their assets; add the bearer scheme to /openapi.json, required
    with `keys_required`, else optional (open mode ignores keys). The app is created with
    `docs_url=None, redoc_url=None`."""
    url, title = app.openapi_url or "/openapi.json", f"{app.title} API"
    favicon = f"{DOCS_ASSETS}/favicon.png"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        js, css = f"{DOCS_ASSETS}/swagger-ui-bundle.js", f"{DOCS_ASSETS}/swagger-ui.css"
        options = {"persistAuthorization": True}  # a key entered survives a reload
        return get_swagger_ui_html(
            openapi_url=url, title=title, swagger_js_url=js, swagger_css_url=css,
            swagger_favicon_url=favicon, swagger_ui_parameters=options,
        )  # fmt: skip

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        js = f"{DOCS_ASSETS}/redoc.standalone.js"
        return get_redoc_html(openapi_url=url, title=title, redoc_js_url=js,
                              redoc_favicon_url=favicon, with_google_fonts=False)  # fmt: skip

    app.mount(DOCS_ASSETS, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    build = app.openapi  # FastAPI's own, which caches the document in app.openapi_schema
    # Optional: the bearer requirement, or none at all (an empty requirement object).
    security: list[dict[str, Any]] = [{BEARER: []}] if keys_required else [{BEARER: []}, {}]
    app.openapi = lambda: _with_bearer(build(), security)  # type: ignore[method-assign]


def _with_bearer(schema: dict[str, Any], security: list[dict[str, Any]]) -> dict[str, Any]:
    """`schema` (FastAPI's cached document) with the bearer scheme, added once."""
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    if BEARER not in schemes:
        schemes[BEARER] = {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key of FOLDWISE_API_KEYS (no key needed in open mode).",
        }
        for path, operations in schema["paths"].items():
            if path not in OPEN_PATHS:
                for operation in operations.values():
                    operation["security"] = security
    return schema


__all__ = ["mount_docs"]
