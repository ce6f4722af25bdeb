"""POST /assemble-context: stateless assembly of posted messages."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.api.deps import RegistryDep, SettingsDep, Tenant
from app.schemas.assemble_context import AssembleRequest, AssembleResponse
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.services.assemble_context import assemble_posted

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


@router.post(
    "/assemble-context",
    response_model=AssembleResponse,
    response_model_exclude_unset=True,
    responses=BODY_ERRORS,
)
def assemble_context(
    body: AssembleRequest, _tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> Response:
    """Stateless: prune and drop posted messages to the budget; nothing stored."""
    # A plain `def`: counting and assembling 1,000 messages is tens of ms of CPU, which
    # FastAPI then runs in its threadpool instead of stalling the event loop. The response
    # is built by us and serialized once (FastAPI would validate it again first).
    response = assemble_posted(body, settings, registry)
    return Response(response.model_dump_json(exclude_unset=True), media_type="application/json")
