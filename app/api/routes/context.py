"""GET /sessions/{id}/context: the context to send next."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import APIRouter, Depends, Query, Request, Response

from app.api.deps import Assembler, SessionId
from app.core.context_settings import SETTINGS_KEYS
from app.schemas.common import ERROR_RESPONSES
from app.schemas.context import (
    ContextQuery,
    ContextResponse,
)
from app.services.context import ContextAssembler, ContextOptions
from app.services.read_path import ReadPath
from app.services.response_cache import ResponseCache, serve_context
from app.summarizers.factory import require_allowed

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


async def get_response_cache(request: Request) -> ResponseCache:
    return cast(ReadPath, request.app.state.read_path).responses


ResponseCacheDep = Annotated[ResponseCache, Depends(get_response_cache)]


@router.get(
    "/sessions/{session_id}/context",
    response_model=ContextResponse,
    response_model_exclude_unset=True,
)
async def get_context(
    request: Request,
    session_id: SessionId,
    assembler: Assembler,
    response_cache: ResponseCacheDep,
    query: Annotated[ContextQuery, Query()],
) -> Response:
    """The history to send next, under the budget; folds first when it must
    (docs/reference.md §Assembly).
    A repeat of an unchanged context is served from the replica's cache before it gets here
    (app/api/context_cache.py); a preview or dry run never is."""
    return await _context(request, session_id, assembler, response_cache, query)


async def _context(
    request: Request,
    session_id: str,
    assembler: ContextAssembler,
    response_cache: ResponseCache,
    query: ContextQuery,
) -> Response:
    overrides = query.model_dump(include=set(SETTINGS_KEYS), exclude_none=True)
    require_allowed(assembler.settings, overrides.get("summarizer"))
    options = ContextOptions(
        model=query.model,
        max_tokens=query.max_tokens,
        format=query.format,
        mode="never" if query.preview else query.summarize,
        explain=query.explain,
        overrides=overrides,
        record_served=not (query.preview or query.dry_run),
        dry_run=query.dry_run,
    )
    raw_query: bytes = request.scope["query_string"]
    body = await serve_context(response_cache, assembler, session_id, raw_query, options)
    return Response(content=body, media_type="application/json")
