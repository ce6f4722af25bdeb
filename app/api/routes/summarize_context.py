"""POST /summarize-context: fold a posted transcript (and a previous summary) into one summary."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request

from app.api.deps import SettingsDep, Tenant
from app.repositories.summary_cache import DbSummaryCache
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.summarize_context import SummarizeRequest, SummarizeResponse
from app.services.summarize_context import summarize_transcript
from app.summarizers.factory import resolve_strategy

router = APIRouter(tags=["summarize"], responses=ERROR_RESPONSES)


@router.post("/summarize-context", responses=BODY_ERRORS)
async def summarize_context(
    body: SummarizeRequest, request: Request, _tenant: Tenant, settings: SettingsDep
) -> SummarizeResponse:
    """Stateless: nothing is stored but the content-hash cache of LLM results."""
    rule = resolve_strategy(body.strategy, settings) == "rule"
    work = summarize_transcript(
        body.messages,
        settings=settings,
        strategy=body.strategy,
        max_summary_tokens=body.max_summary_tokens,
        previous_summary=body.previous_summary,
        instructions=body.instructions,
        cache=None if rule else DbSummaryCache(request.app.state.sessionmaker),
    )
    # The rule summarizer is pure CPU over up to 8 MiB: a worker thread with a loop of its own
    # keeps this process's event loop free. The LLM path awaits the network here.
    result = await (asyncio.to_thread(asyncio.run, work) if rule else work)
    return SummarizeResponse.model_validate(result)
