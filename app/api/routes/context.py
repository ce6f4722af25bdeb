"""GET /sessions/{id}/context: the context to send next."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.api.deps import Assembler, ResponseCacheDep, SessionId
from app.schemas.common import ERROR_RESPONSES
from app.schemas.context import ContextQuery, ContextResponse
from app.services.context_load import context_options
from app.services.response_cache import serve_context
from app.summarizers.factory import require_allowed

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


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
    options = context_options(query, preview=query.preview, dry_run=query.dry_run)
    require_allowed(assembler.settings, options.overrides.get("summarizer"))
    raw_query: bytes = request.scope["query_string"]
    body = await serve_context(response_cache, assembler, session_id, raw_query, options)
    return Response(content=body, media_type="application/json")
