"""POST /summarize-context: fold a posted transcript (and a previous summary) into one summary."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deps import SettingsDep, Tenant
from app.repositories.summary_cache import DbSummaryCache
from app.schemas.common import ERROR_RESPONSES
from app.schemas.summarize import SummarizeRequest, SummarizeResponse
from app.services.summarization import summarize_transcript

router = APIRouter(tags=["summarize"], responses=ERROR_RESPONSES)


@router.post("/summarize-context")
async def summarize_context(
    body: SummarizeRequest, request: Request, _tenant: Tenant, settings: SettingsDep
) -> SummarizeResponse:
    """Stateless: nothing is stored but the content-hash cache of LLM results."""
    cache = DbSummaryCache(request.app.state.sessionmaker)
    result = await summarize_transcript(
        body.messages,
        settings=settings,
        strategy=body.strategy,
        max_summary_tokens=body.max_summary_tokens,
        previous_summary=body.previous_summary,
        instructions=body.instructions,
        cache=cache,
    )
    return SummarizeResponse.model_validate(result)
