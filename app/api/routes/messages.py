"""Message routes: append a batch, page through stored messages, remove the newest one."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query

from app.api.deps import SessionId, service
from app.core.limits import MAX_SQL_INT
from app.schemas.common import BODY_ERRORS, ERROR_RESPONSES
from app.schemas.messages import AppendResult, MessagePage, MessagesAppend, RemovedMessage
from app.services.messages import MessageService

router = APIRouter(prefix="/sessions", tags=["messages"], responses=ERROR_RESPONSES)


# raw: as stored; openai_responses: also each message's Responses input items (`items`).
MessageFormat = Literal["raw", "openai_responses"]
Messages = Annotated[MessageService, Depends(service(MessageService))]
MessageReader = Annotated[MessageService, Depends(service(MessageService, read_only=True))]


@router.post("/{session_id}/messages", status_code=201, responses=BODY_ERRORS)
async def append_messages(
    session_id: SessionId, body: MessagesAppend, messages: Messages
) -> AppendResult:
    """Append 1..N messages atomically; a known `client_id` returns the stored message."""
    return await messages.append(session_id, body.messages)


@router.get("/{session_id}/messages")
async def list_messages(
    session_id: SessionId,
    messages: MessageReader,
    after_seq: Annotated[int, Query(ge=0, le=MAX_SQL_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    format: Annotated[MessageFormat, Query()] = "raw",
) -> MessagePage:
    """Stored messages with seq > `after_seq`, in seq order; `next_after_seq` pages on."""
    as_items = format == "openai_responses"
    return await messages.page(session_id, after_seq=after_seq, limit=limit, as_items=as_items)


@router.delete("/{session_id}/messages/last")
async def remove_last_message(session_id: SessionId, messages: Messages) -> RemovedMessage:
    """Delete the newest message (seqs are not reused); 409 once the summary covers it."""
    return await messages.remove_newest(session_id)
