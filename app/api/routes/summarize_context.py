"""POST /summarize-context: fold a posted transcript (and a previous summary) into one summary."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.api.deps import SettingsDep, Tenant
from app.repositories.summary_cache import DbSummaryCache
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.summarize_context import SummarizeRequest, SummarizeResponse
from app.services.summarize_context import summarize_transcript
from app.summarizers.factory import require_allowed, resolve_strategy

router = APIRouter(tags=["summarize"], responses=ERROR_RESPONSES)


@router.post("/summarize-context", responses=BODY_ERRORS)
async def summarize_context(
    body: SummarizeRequest, request: Request, _tenant: Tenant, settings: SettingsDep
) -> SummarizeResponse:
    """Stateless: nothing is stored but the content-hash cache of LLM results."""
    require_allowed(settings, body.summarizer)
    rule = resolve_strategy(body.strategy, settings, body.summarizer) == "rule"
    # Every CPU step (counting, the rule summarizer, redaction) runs in a worker thread that
    # stops at the request's deadline (app/core/deadline.py); the LLM call awaits here.
    result = await summarize_transcript(
        body.messages,
        settings=settings,
        strategy=body.strategy,
        max_summary_tokens=body.max_summary_tokens,
        previous_summary=body.previous_summary,
        instructions=body.instructions,
        cache=None if rule else DbSummaryCache(request.app.state.sessionmaker),
        summarizer=body.summarizer,
    )
    return SummarizeResponse.model_validate(result)
