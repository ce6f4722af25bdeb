"""Operations routes, open even when API keys are configured."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter, Request, Response
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.core.errors import ServiceUnavailable
from app.core.metrics import CONTENT_TYPE_LATEST, render_metrics
from app.schemas.common import OPERATION_ERRORS

router = APIRouter(tags=["operations"], responses=OPERATION_ERRORS)


@router.get("/healthz")
async def get_health() -> dict[str, str]:
    """The process is up (no dependency checked)."""
    return {"status": "ok"}


@router.get("/readyz")
async def get_readiness(request: Request) -> dict[str, str]:
    """The database answers `SELECT 1`; 503 otherwise."""
    engine = cast(AsyncEngine, request.app.state.engine)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except Exception as exc:  # any driver error means "not ready", never a 500
        raise ServiceUnavailable("database unreachable", {"error": type(exc).__name__}) from exc
    return {"status": "ready"}


@router.get("/metrics", response_class=Response)
async def get_metrics() -> Response:
    """Prometheus text format."""
    return Response(render_metrics(), media_type=CONTENT_TYPE_LATEST)
