"""Stateless token counting and the model registry."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import RegistryDep, SettingsDep, Tenant
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.tokens import CountTokensRequest, CountTokensResponse, ModelList, ModelRead
from app.services.tokens import count_posted
from app.tokens.counter import counter_for

router = APIRouter(tags=["tokens"], responses=ERROR_RESPONSES)


@router.post("/count-tokens", responses=BODY_ERRORS)
def count_tokens(
    body: CountTokensRequest, _tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> CountTokensResponse:
    """Tokens of `text`, or of `messages` (+ `tools`) with per-message overhead, for `model`."""
    # A plain `def`: counting up to 8 MiB of text is CPU work, run in the threadpool so the
    # event loop (and /healthz) never waits for it.
    model = registry.get(body.model or settings.default_model)
    counter = counter_for(model)
    tokens = count_posted(counter, text=body.text, messages=body.messages, tools=body.tools)
    return CountTokensResponse(
        tokens=tokens,
        encoding=counter.encoding_name,
        exact=model.exact,
        model=model.name,
        warnings=[model.warning] if model.warning else [],
    )


@router.get("/models")
async def list_models(_tenant: Tenant, registry: RegistryDep) -> ModelList:
    """The model registry (app/data/models.json plus FOLDWISE_MODELS_FILE overrides)."""
    return ModelList(
        models=[
            ModelRead.model_validate({**vars(info), "deprecated": info.retires is not None})
            for info in registry.all()
        ]
    )
