"""Stateless token counting and the model registry."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from app.api.deps import ProviderCounterDep, RegistryDep, SettingsDep, Tenant
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.tokens import (
    CountTokensRequest,
    CountTokensResponse,
    MediaRead,
    ModelList,
    ModelRead,
)
from app.services.tokens import count_exactly, count_posted
from app.tokens.counter import counter_for

router = APIRouter(tags=["tokens"], responses=ERROR_RESPONSES)


@router.post("/count-tokens", responses=BODY_ERRORS)
async def count_tokens(
    body: CountTokensRequest,
    _tenant: Tenant,
    settings: SettingsDep,
    registry: RegistryDep,
    provider: ProviderCounterDep,
) -> CountTokensResponse:
    """Tokens of `text`, or of `messages` (+ `tools`) with per-message overhead, for `model`;
    with FOLDWISE_EXACT_COUNTS, `messages` as the provider's count endpoint counts them."""
    model = registry.get(body.model or settings.default_model)
    counter = counter_for(model)
    # Counting up to 8 MiB of text (and probing media) is CPU work: in a thread, so the event
    # loop (and /healthz) never waits for it.
    counted = await asyncio.to_thread(
        count_posted, counter, text=body.text, messages=body.messages, tools=body.tools
    )
    if settings.exact_counts and body.messages is not None and body.text is None:
        counted = await count_exactly(provider, model, counted, body.messages, body.tools)
    return CountTokensResponse(
        tokens=counted.tokens,
        encoding=counter.encoding_name,
        # The provider counted it, or the tokenizer (model.exact) and every media rule applied
        # are the provider's own.
        exact=counted.by_provider or (model.exact and counted.exact),
        model=model.name,
        media=[
            MediaRead(path=path, tokens=c.tokens, kind=c.kind, label=c.label, exact=c.exact)
            for path, c in counted.media
        ],
        media_rule=counter.media_rule.name,
        counted_by="provider" if counted.by_provider else "rules",
        warnings=([model.warning] if model.warning else []) + counted.warnings,
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
