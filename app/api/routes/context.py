"""GET /sessions/{id}/context: the context to send next."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.routing import APIRoute
from pydantic import ValidationError

from app.api.deps import Assembler, SessionId, get_assembler, get_session_id, get_tenant
from app.core.context_settings import SETTINGS_KEYS
from app.schemas.common import ERROR_RESPONSES
from app.schemas.context import (
    ContextQuery,
    ContextResponse,
)
from app.services.context import ContextAssembler, ContextOptions
from app.services.served_cache import ServedContextCache, serve_context

QUERY_KEYS = frozenset(ContextQuery.model_fields)


class ContextRoute(APIRoute):
    """The route as declared below (OpenAPI, errors), with its usual request answered without
    FastAPI's parameter and dependency resolution, a sixth of an uncached request: when every
    query key is a known one, given once, and the query validates, FastAPI would build the
    same `ContextQuery` and the same dependencies. Anything else (an error to report, a
    repeated or unknown key, dependency overrides) takes FastAPI's own path."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        resolved = super().get_route_handler()

        async def handler(request: Request) -> Response:
            query = None if request.app.dependency_overrides else _plain_query(request)
            if query is None:
                return await resolved(request)
            session_id = await get_session_id(request.path_params["session_id"])
            state = request.app.state
            tenant = await get_tenant(request)
            assembler = await get_assembler(request, tenant, state.settings, state.registry)
            return await _context(request, session_id, assembler, state.served_cache, query)

        return handler


def _plain_query(request: Request) -> ContextQuery | None:
    params = request.query_params
    if len(params.multi_items()) != len(params) or not QUERY_KEYS.issuperset(params.keys()):
        return None
    try:
        return ContextQuery.model_validate(dict(params))
    except ValidationError:
        return None


router = APIRouter(tags=["context"], responses=ERROR_RESPONSES, route_class=ContextRoute)


async def get_served_cache(request: Request) -> ServedContextCache:
    return cast(ServedContextCache, request.app.state.served_cache)


ServedCache = Annotated[ServedContextCache, Depends(get_served_cache)]


@router.get(
    "/sessions/{session_id}/context",
    response_model=ContextResponse,
    response_model_exclude_unset=True,
)
async def get_context(
    request: Request,
    session_id: SessionId,
    assembler: Assembler,
    served_cache: ServedCache,
    query: Annotated[ContextQuery, Query()],
) -> Response:
    """The history to send next, under the budget; folds first when it must
    (docs/reference.md §Assembly).
    A repeat of an unchanged context is served from the replica's cache before it gets here
    (app/api/served_context.py); a preview or dry run never is."""
    return await _context(request, session_id, assembler, served_cache, query)


async def _context(
    request: Request,
    session_id: str,
    assembler: ContextAssembler,
    served_cache: ServedContextCache,
    query: ContextQuery,
) -> Response:
    options = ContextOptions(
        model=query.model,
        max_tokens=query.max_tokens,
        format=query.format,
        mode="never" if query.preview else query.summarize,
        explain=query.explain,
        overrides=query.model_dump(include=set(SETTINGS_KEYS), exclude_none=True),
        record_served=not (query.preview or query.dry_run),
        dry_run=query.dry_run,
    )
    raw_query: bytes = request.scope["query_string"]
    body = await serve_context(served_cache, assembler, session_id, raw_query, options)
    return Response(content=body, media_type="application/json")
