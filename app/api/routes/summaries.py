"""A session's summary: fold now, the history of versions, clear."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import Assembler, DbSession, ReadDb, SessionId, Tenant
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.sessions import SessionRead
from app.schemas.summaries import (
    SessionSummarizeRequest,
    SessionSummarizeResponse,
    SummaryHistoryPage,
)
from app.services.summaries import clear_session, summarize_session, summary_history

router = APIRouter(tags=["summaries"], responses=ERROR_RESPONSES)


@router.post("/sessions/{session_id}/summarize", responses=BODY_ERRORS)
async def summarize_now(
    session_id: SessionId, assembler: Assembler, body: SessionSummarizeRequest | None = None
) -> SessionSummarizeResponse:
    """Fold now (like summarize=force); `folded: false` when nothing is left to fold."""
    return await summarize_session(assembler, session_id, body or SessionSummarizeRequest())


@router.get("/sessions/{session_id}/summaries")
async def list_summaries(
    session_id: SessionId,
    db: ReadDb,
    tenant: Tenant,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
) -> SummaryHistoryPage:
    """Every summary version (folds and clears), newest first."""
    return await summary_history(db, tenant, session_id, limit=limit, cursor=cursor)


@router.post("/sessions/{session_id}/clear")
async def clear_context(session_id: SessionId, db: DbSession, tenant: Tenant) -> SessionRead:
    """Start a fresh context; stored messages stay."""
    return await clear_session(db, tenant, session_id)
