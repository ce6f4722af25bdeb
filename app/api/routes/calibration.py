"""POST /sessions/{id}/usage: the provider's count of the last context, for calibration."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deps import DbSession, RegistryDep, SessionId, Tenant
from app.schemas.calibration import UsageReport, UsageReportResponse
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.services.calibration import report_usage

router = APIRouter(tags=["calibration"], responses=ERROR_RESPONSES)


@router.post("/sessions/{session_id}/usage", responses=BODY_ERRORS)
async def report_provider_usage(
    request: Request,
    session_id: SessionId,
    body: UsageReport,
    db: DbSession,
    tenant: Tenant,
    registry: RegistryDep,
) -> UsageReportResponse:
    """Calibrate: what the provider counted for the last context served for `model`."""
    records = request.app.state.read_path.records
    return await report_usage(db, tenant, registry, session_id, body, records)
