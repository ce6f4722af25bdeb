"""A cache hit of GET /sessions/{id}/context answered before routing.

Pure ASGI, the innermost middleware: authentication (the tenant), the deadline, CORS and
metrics have run around it as for any request. A GET of a session's context whose tenant,
session id and raw query string match a body the route cached
(app/services/response_cache.py) is answered here after one indexed read, without routing,
dependency resolution, parameter parsing or a response model: those cost more than the
rest of a hit together. Anything else, and every miss, goes on to the app unchanged.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from app.services.read_path import ReadPath
from app.services.response_cache import lookup

PREFIX = "/sessions/"
SUFFIX = "/context"
ROUTE_TEMPLATE = "/sessions/{session_id}/context"


class _Route:
    """Stands for the route in the scope, so metrics label a hit like the route's answers."""

    path = ROUTE_TEMPLATE


ROUTE = _Route()


def session_of(path: str) -> str | None:
    """The `{session_id}` of a context path, or None for any other path."""
    if not (path.startswith(PREFIX) and path.endswith(SUFFIX)):
        return None
    session_id = path[len(PREFIX) : -len(SUFFIX)]
    return session_id if session_id and "/" not in session_id else None


class ContextCacheMiddleware:
    def __init__(self, app: ASGIApp, read_path: ReadPath) -> None:
        self.app = app
        self.read_path = read_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        session_id = session_of(scope["path"])
        tenant = scope.get("state", {}).get("tenant")
        if session_id is None or not isinstance(tenant, str):
            await self.app(scope, receive, send)
            return
        read_path, query = self.read_path, scope["query_string"]
        body = await lookup(read_path.responses, read_path.versions, tenant, session_id, query)
        if body is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = ROUTE
        headers = [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


__all__ = ["ContextCacheMiddleware", "session_of"]
