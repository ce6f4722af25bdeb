"""Message wire models: MessagesAppend / AppendedMessage / MessageRead / MessagePage."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.input_types import MessageJson
from app.schemas.posted import PostedConversation

# One request appends at most this many messages; larger imports page through.
MAX_BATCH = 1000


class MessagesAppend(PostedConversation):
    """Messages in Anthropic or OpenAI Chat shape, OpenAI Responses input items or Gemini
    contents, each with optional `client_id` and `metadata`; or Gemini `contents` alone."""

    model_config = ConfigDict(extra="forbid", strict=True)
    unique_tool_ids = True

    messages: list[MessageJson] = Field(default_factory=list, max_length=MAX_BATCH)
    contents: list[MessageJson] | None = Field(
        None, max_length=MAX_BATCH, description="Gemini contents, in place of `messages`."
    )

    @model_validator(mode="after")
    def _some(self) -> Self:
        if not self.messages:
            raise ValueError("give at least one message (in 'messages' or 'contents')")
        return self


class AppendedMessage(BaseModel):
    id: str
    seq: int
    token_count: int
    created_at: datetime
    client_id: str | None
    duplicate: bool = Field(description="True when client_id was already stored (a retry).")
    indexes: list[int] = Field(
        description="Indexes of the posted entries this stored message holds: one, or several "
        "consecutive Responses items grouped into one assistant message."
    )


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
    items: list[dict[str, Any]] | None = Field(
        default=None,
        description="With format=openai_responses: the message as OpenAI Responses input "
        "items (one stored message may be several items), else null.",
    )


class MessagePage(BaseModel):
    messages: list[MessageRead]
    next_after_seq: int | None


class RemovedMessage(MessageRead):
    """DELETE …/messages/last: the message removed, as stored, and as Responses items."""

    items: list[dict[str, Any]] = Field(
        description="The message rendered as OpenAI Responses input items (format "
        "openai_responses): what an Agents SDK Session's pop_item returns."
    )
