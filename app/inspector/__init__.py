"""The Inspector: a browser page at /inspect that shows a session's context window.

Plain HTML, CSS and ES modules shipped in the package (no build step, nothing fetched from
elsewhere). The page itself holds no data: it calls the public HTTP API with the key the
person enters, so it shows exactly what that key's tenant may see.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"
PREFIX = "/inspect"

# Everything the page loads comes from this origin; it calls the API on the same origin.
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@router.get(PREFIX)
async def inspector_page(page_size: str | None = None) -> Response:
    """The single page; the views live behind the URL fragment (#/sessions/<id>).
    `page_size` is read by the page's script (app.js), declared here so it is a known key."""
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=_HEADERS)


@router.get(PREFIX + "/", response_class=RedirectResponse)
async def inspector_slash() -> RedirectResponse:
    return RedirectResponse(PREFIX, status_code=308)


def mount_inspector(app: FastAPI) -> None:
    app.include_router(router)
    app.mount(PREFIX + "/static", StaticFiles(directory=STATIC), name="inspector-static")


__all__ = ["PREFIX", "mount_inspector"]
