"""Context routes: the session context, stateless assembly, manual fold, summary history,
clear, and usage reports for calibration."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.api.deps import DbSession, ReadDb, RegistryDep, SessionId, SettingsDep, Tenant
from app.core.context_settings import SETTINGS_KEYS
from app.schemas.common import ERROR_RESPONSES
from app.schemas.context import (
    AssembleRequest,
    AssembleResponse,
    ContextQuery,
    ContextResponse,
    SessionSummarizeRequest,
    SessionSummarizeResponse,
    SummaryHistoryPage,
    UsageReport,
    UsageReportResponse,
)
from app.schemas.sessions import SessionRead
from app.services.assembly import assemble_posted
from app.services.calibration import report_usage
from app.services.context import ContextAssembler, ContextOptions
from app.services.folding import SummarizerFactory
from app.services.served_cache import ServedContextCache, serve_context
from app.services.summaries import clear_session, summarize_session, summary_history

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


async def get_assembler(
    request: Request, tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> ContextAssembler:
    """Works on `app.state.sessionmaker` in short units of work of its own (never the request
    transaction: a fold must not hold a connection across the summarizer call), with the
    summarizer factory given to `create_app`."""
    state = request.app.state
    factory = cast(SummarizerFactory, state.summarizer_factory)
    sessionmaker = cast(async_sessionmaker[AsyncSession], state.sessionmaker)
    snapshot = cast(ServedContextCache, state.served_cache).driver_snapshot
    return ContextAssembler(sessionmaker, tenant, settings, registry, factory, snapshot)


Assembler = Annotated[ContextAssembler, Depends(get_assembler)]


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
    (app/api/served_context.py); a preview never is."""
    options = ContextOptions(
        model=query.model,
        max_tokens=query.max_tokens,
        format=query.format,
        mode="never" if query.preview else query.summarize,
        explain=query.explain,
        overrides=query.model_dump(include=set(SETTINGS_KEYS), exclude_none=True),
        record_served=not query.preview,
    )
    raw_query: bytes = request.scope["query_string"]
    body = await serve_context(served_cache, assembler, session_id, raw_query, options)
    return Response(content=body, media_type="application/json")


@router.post("/assemble-context", response_model_exclude_unset=True)
def assemble_context(
    body: AssembleRequest, _tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> AssembleResponse:
    """Stateless: prune and drop posted messages to the budget; nothing stored."""
    # A plain `def`: counting and assembling 1,000 messages is tens of ms of CPU, which
    # FastAPI then runs in its threadpool instead of stalling the event loop.
    return assemble_posted(body, settings, registry)


@router.post("/sessions/{session_id}/summarize")
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


@router.post("/sessions/{session_id}/usage")
async def report_provider_usage(
    session_id: SessionId, body: UsageReport, db: DbSession, tenant: Tenant, registry: RegistryDep
) -> UsageReportResponse:
    """Calibrate: what the provider counted for the last context served for `model`."""
    return await report_usage(db, tenant, registry, session_id, body)
