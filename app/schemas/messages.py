"""Message wire models: MessagesAppend / AppendedMessage / MessageRead / MessagePage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.door import Json

# One request appends at most this many messages; larger imports page through.
MAX_BATCH = 1000


class MessagesAppend(BaseModel):
    """Messages in Anthropic or OpenAI shape, plus optional `client_id` and `metadata`."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Json] = Field(min_length=1, max_length=MAX_BATCH)


class AppendedMessage(BaseModel):
    id: str
    seq: int
    token_count: int
    created_at: datetime
    client_id: str | None
    duplicate: bool = Field(description="True when client_id was already stored (a retry).")


class AppendResult(BaseModel):
    messages: list[AppendedMessage]


class MessageRead(BaseModel):
    id: str
    seq: int
    role: str
    content: Any
    name: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    metadata: dict[str, Any]
    token_count: int
    client_id: str | None
    created_at: datetime


class MessagePage(BaseModel):
    messages: list[MessageRead]
    next_after_seq: int | None
