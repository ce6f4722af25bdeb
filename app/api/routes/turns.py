"""POST /sessions/{id}/turn: append the newest messages and get the context to send next."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Response

from app.api.deps import Assembler, ResponseCacheDep, SessionId
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.turns import TurnRequest, TurnResponse
from app.services.turns import TurnService

router = APIRouter(prefix="/sessions", tags=["context"], responses=ERROR_RESPONSES)

EXAMPLES: dict[str, Any] = {
    "chat": {
        "summary": "A user message, then the context for an Anthropic call",
        "value": {
            "messages": [{"role": "user", "content": "And the edge cases?", "client_id": "m7"}],
            "context": {"max_tokens": 8000, "format": "anthropic"},
        },
    },
    "tool result": {
        "summary": "An OpenAI tool result, then the context in Chat Completions shape",
        "value": {
            "messages": [{"role": "tool", "tool_call_id": "call_1", "content": "3 passed"}],
            "context": {"model": "gpt-4o", "format": "openai", "keep_recent": 8},
        },
    },
}


async def get_turns(assembler: Assembler, responses: ResponseCacheDep) -> TurnService:
    return TurnService(assembler, responses)


Turns = Annotated[TurnService, Depends(get_turns)]


@router.post(
    "/{session_id}/turn",
    status_code=201,
    response_model=TurnResponse,
    response_model_exclude_unset=True,
    responses=BODY_ERRORS,
)
async def take_turn(
    session_id: SessionId,
    body: Annotated[TurnRequest, Body(openapi_examples=EXAMPLES)],
    turns: Turns,
) -> Response:
    """Append the messages as POST …/messages does (atomic; a known `client_id` is not stored
    again), then answer `append` (that route's body) and `context` (GET …/context's body for
    `context`, the same query as JSON, right after). An invalid query stores nothing."""
    content = await turns.take(session_id, body.messages or [], body.context)
    return Response(content=content, status_code=201, media_type="application/json")
