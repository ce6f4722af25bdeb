"""POST /assemble-context: stateless assembly of posted messages."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import RegistryDep, SettingsDep, Tenant
from app.schemas.assemble_context import AssembleRequest, AssembleResponse
from app.schemas.common import ERROR_RESPONSES
from app.services.assemble_context import assemble_posted

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)


@router.post("/assemble-context", response_model_exclude_unset=True)
def assemble_context(
    body: AssembleRequest, _tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> AssembleResponse:
    """Stateless: prune and drop posted messages to the budget; nothing stored."""
    # A plain `def`: counting and assembling 1,000 messages is tens of ms of CPU, which
    # FastAPI then runs in its threadpool instead of stalling the event loop.
    return assemble_posted(body, settings, registry)
