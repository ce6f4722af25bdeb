"""Export a session as JSONL, import one (docs: README "Data lifecycle")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse

from app.api.deps import RegistryDep, SessionId, Sessionmaker, Tenant, service
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.transfer import SessionImport
from app.services.transfer import SessionImporter, open_export, split_lines

router = APIRouter(tags=["sessions"], responses=ERROR_RESPONSES)

JSONL = "application/x-ndjson"
_JSONL_BODY = {"content": {JSONL: {"schema": {"type": "string"}}}}

Importer = Annotated[SessionImporter, Depends(service(SessionImporter))]


@router.get(
    "/sessions/{session_id}/export",
    response_class=StreamingResponse,
    responses={200: _JSONL_BODY},
)
async def export_session(
    session_id: SessionId, sessionmaker: Sessionmaker, tenant: Tenant, registry: RegistryDep
) -> StreamingResponse:
    """The session as JSONL, streamed: session, messages in seq order, summaries, the
    tenant's calibration of its model family, end."""
    lines = await open_export(sessionmaker, tenant, session_id, registry)
    disposition = f'attachment; filename="{session_id}.jsonl"'
    return StreamingResponse(lines, media_type=JSONL, headers={"Content-Disposition": disposition})


@router.post(
    "/sessions/import",
    status_code=201,
    responses={
        **BODY_ERRORS,
        200: {"model": SessionImport, "description": "The same session is stored"},
    },
    openapi_extra={"requestBody": {"required": True, **_JSONL_BODY}},
)
async def import_session(request: Request, response: Response, importer: Importer) -> SessionImport:
    """Restore an export with its ids, seqs and summary versions (201); the same export again
    is 200 `unchanged`, another session of that id 409 `session_exists`."""
    result = await importer.run(split_lines(request.stream()))
    if result.status == "unchanged":
        response.status_code = 200
    return result
